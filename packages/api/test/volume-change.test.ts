// changeVolume, the one implementation of a hotplug request (podvirt-api's addvolume/removevolume
// subresources and podvirtctl): against an in-memory VolumeApi that records every write.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { changeVolume, VolumeChangeError, type HotplugSpec, type VirtualMachine, type VirtualMachineInstance, type VolumeApi, type VolumeRequest } from '../src/index.js';

const BASE: HotplugSpec = { domain: { devices: { disks: [{ name: 'root', disk: { bus: 'virtio' } }] } }, volumes: [{ name: 'root', containerDisk: { image: 'guest' } }] };
const ADD: VolumeRequest = { command: 'addvolume', options: { name: 'data', disk: { name: 'data', disk: { bus: 'scsi' } }, volumeSource: { persistentVolumeClaim: { claimName: 'claim-1' } } } };
const REMOVE: VolumeRequest = { command: 'removevolume', options: { name: 'data' } };
const TARGET = { namespace: 'ns', name: 'vm1' };

class MemoryVolumes implements VolumeApi {
  vmi: VirtualMachineInstance | undefined;
  vm: VirtualMachine | undefined;
  readonly writes: string[] = [];
  stale = 0;

  constructor(phase: string, withVm = false) {
    this.vmi = { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', metadata: { name: 'vm1', namespace: 'ns', resourceVersion: '7' }, spec: structuredClone(BASE) as VirtualMachineInstance['spec'], status: { phase: phase as 'Running' } };
    if (withVm) this.vm = { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', metadata: { name: 'vm1', namespace: 'ns', resourceVersion: '3' }, spec: { template: { spec: structuredClone(BASE) as VirtualMachine['spec']['template']['spec'] } } };
  }

  readVmi(): Promise<VirtualMachineInstance | undefined> {
    return Promise.resolve(structuredClone(this.vmi));
  }

  readVm(): Promise<VirtualMachine | undefined> {
    return Promise.resolve(structuredClone(this.vm));
  }

  patchVmiVolumes(_ns: string, _name: string, spec: HotplugSpec, rv: string | undefined): Promise<'written' | 'stale'> {
    if (this.stale > 0) {
      this.stale -= 1;
      return Promise.resolve('stale');
    }
    this.writes.push(`vmi@${rv ?? ''} ${(spec.volumes ?? []).map((v) => v.name).join(',')}`);
    if (this.vmi) this.vmi.spec = spec as VirtualMachineInstance['spec'];
    return Promise.resolve('written');
  }

  patchVmVolumes(_ns: string, _name: string, spec: HotplugSpec, rv: string | undefined): Promise<'written' | 'stale'> {
    this.writes.push(`vm@${rv ?? ''} ${(spec.volumes ?? []).map((v) => v.name).join(',')}`);
    if (this.vm) this.vm.spec.template.spec = spec as VirtualMachine['spec']['template']['spec'];
    return Promise.resolve('written');
  }
}

const signal = new AbortController().signal;

async function refusal(api: VolumeApi, request: VolumeRequest, o: { persist?: boolean; dryRun?: boolean } = {}): Promise<VolumeChangeError> {
  try {
    await changeVolume(api, request, TARGET, o, signal);
  } catch (err) {
    if (err instanceof VolumeChangeError) return err;
    throw err;
  }
  assert.fail('not refused');
}

describe('changeVolume', () => {
  test('adds the claim as a hotpluggable scsi disk, guarded by the resourceVersion; removes it again', async () => {
    const api = new MemoryVolumes('Running');
    await changeVolume(api, ADD, TARGET, {}, signal);
    assert.deepEqual(api.vmi?.spec.volumes?.at(-1), { name: 'data', persistentVolumeClaim: { claimName: 'claim-1', hotpluggable: true } });
    await changeVolume(api, REMOVE, TARGET, {}, signal);
    assert.deepEqual(api.writes, ['vmi@7 root,data', 'vmi@7 root']);
  });

  test('with persist, the VM template too; a dry run decides and writes nothing', async () => {
    const api = new MemoryVolumes('Running', true);
    await changeVolume(api, ADD, TARGET, { dryRun: true, persist: true }, signal);
    assert.deepEqual(api.writes, []);
    await changeVolume(api, ADD, TARGET, { persist: true }, signal);
    assert.deepEqual(api.writes, ['vmi@7 root,data', 'vm@3 root,data']);
  });

  test('an object that changed is read again, three times at most', async () => {
    const api = new MemoryVolumes('Running');
    api.stale = 2;
    await changeVolume(api, ADD, TARGET, {}, signal);
    assert.equal(api.writes.length, 1);
    const again = new MemoryVolumes('Running');
    again.stale = 3;
    const err = await refusal(again, ADD);
    assert.equal(err.code, 'API_ERR_VOLUME_CONFLICT');
    assert.match(err.message, /VMI ns\/vm1 kept changing/);
  });

  test('refuses by code, naming the phase or the field, before any write', async () => {
    const cases: [MemoryVolumes, VolumeRequest, { persist?: boolean; dryRun?: boolean }, string, RegExp][] = [
      [new MemoryVolumes('Scheduling'), ADD, {}, 'API_ERR_VMI_NOT_RUNNING', /VMI ns\/vm1 is Scheduling, not Running/],
      [new MemoryVolumes(''), ADD, {}, 'API_ERR_VMI_NOT_RUNNING', /is not started, not Running/],
      [new MemoryVolumes('Running'), REMOVE, {}, 'API_ERR_VOLUME_REFUSED', /VMI ns\/vm1 refuses the change: name: Not found/],
      [new MemoryVolumes('Running'), { command: 'removevolume', options: { name: 'root' } }, {}, 'API_ERR_VOLUME_REFUSED', /not hotpluggable/],
      [new MemoryVolumes('Running'), { ...ADD, options: { ...ADD.options, name: 'root' } }, {}, 'API_ERR_VOLUME_REFUSED', /name: Duplicate value/],
      // The VM is looked at before the VMI is written.
      [new MemoryVolumes('Running'), ADD, { persist: true }, 'API_ERR_VM_NOT_FOUND', /VM ns\/vm1 not found/],
    ];
    for (const [api, request, o, code, message] of cases) {
      const err = await refusal(api, request, o);
      assert.equal(err.code, code, err.message);
      assert.match(err.message, message);
      assert.deepEqual(api.writes, []);
    }
    const missing = new MemoryVolumes('Running');
    missing.vmi = undefined;
    assert.equal((await refusal(missing, ADD)).code, 'API_ERR_VMI_NOT_FOUND');
    const refused = await refusal(new MemoryVolumes('Running'), { ...ADD, options: { ...ADD.options, name: 'root' } });
    assert.deepEqual(refused.refusal?.errors.map((e) => `${e.field} ${e.type}`), ['name Duplicate']);
    assert.equal(refused.refusal?.subject, 'VMI ns/vm1');
  });
});
