import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { HotplugSpec, VirtualMachine, VirtualMachineInstance } from '@podvirt/api';
import { runCli } from '../src/cli.js';
import type { VolumeApi } from '@podvirt/api';

const BASE: HotplugSpec = { domain: { devices: { disks: [{ name: 'root', disk: { bus: 'virtio' } }] } }, volumes: [{ name: 'root', containerDisk: { image: 'guest' } }] };

class FakeVolumeApi implements VolumeApi {
  vmi: VirtualMachineInstance | undefined;
  vm: VirtualMachine | undefined;
  readonly writes: string[] = [];
  conflicts = 0;
  closed = 0;

  constructor(phase: string, withVm = false) {
    this.vmi = { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', metadata: { name: 'testvm', namespace: 'default', resourceVersion: '7' }, spec: structuredClone(BASE) as VirtualMachineInstance['spec'], status: { phase: phase as 'Running' } };
    if (withVm) this.vm = { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', metadata: { name: 'testvm', namespace: 'default', resourceVersion: '3' }, spec: { template: { spec: structuredClone(BASE) as VirtualMachine['spec']['template']['spec'] } } };
  }

  readVmi(): Promise<VirtualMachineInstance | undefined> {
    return Promise.resolve(this.vmi);
  }

  readVm(): Promise<VirtualMachine | undefined> {
    return Promise.resolve(this.vm);
  }

  patchVmiVolumes(_ns: string, _name: string, spec: HotplugSpec, rv: string | undefined): Promise<'written' | 'stale'> {
    if (this.conflicts > 0) {
      this.conflicts -= 1;
      return Promise.resolve('stale');
    }
    this.writes.push(`vmi@${rv ?? ''} ${JSON.stringify(spec.volumes?.map((v) => v.name))} ${JSON.stringify(spec.domain.devices?.disks?.at(-1))}`);
    if (this.vmi) this.vmi.spec = spec as VirtualMachineInstance['spec'];
    return Promise.resolve('written');
  }

  patchVmVolumes(_ns: string, _name: string, spec: HotplugSpec, rv: string | undefined): Promise<'written' | 'stale'> {
    this.writes.push(`vm@${rv ?? ''} ${JSON.stringify(spec.volumes?.map((v) => v.name))}`);
    return Promise.resolve('written');
  }
}

async function ctl(api: FakeVolumeApi, argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await runCli({
    argv, env: { socket: undefined }, version: 'test', signal: new AbortController().signal,
    stdout: { write: (c: string) => (stdout += c) }, stderr: { write: (c: string) => (stderr += c) },
    openVolumeApi: () => Promise.resolve({ api, close: async () => void (api.closed += 1) }),
  });
  return { code, stdout, stderr };
}

describe('podvirtctl addvolume / removevolume', () => {
  test('adds a claim as a hotpluggable scsi disk, guarded by the resourceVersion', async () => {
    const api = new FakeVolumeApi('Running');
    const out = await ctl(api, ['addvolume', 'vmi', 'testvm', '--volume-name=data', '--claim=claim-1', '--serial=D1', '--cache=none']);
    assert.equal(out.code, 0, out.stderr);
    assert.deepEqual(api.writes, ['vmi@7 ["root","data"] {"name":"data","disk":{"bus":"scsi"},"serial":"D1","cache":"none"}']);
    assert.deepEqual(api.vmi?.spec.volumes?.at(-1), { name: 'data', persistentVolumeClaim: { claimName: 'claim-1', hotpluggable: true } });
    assert.match(out.stdout, /volume data added to VMI default\/testvm/);
    assert.equal(api.closed, 1);
  });

  test('the claim defaults to the volume name, and --persist edits the VM template too', async () => {
    const api = new FakeVolumeApi('Running', true);
    const out = await ctl(api, ['addvolume', 'testvm', '--volume-name=data', '--persist']);
    assert.equal(out.code, 0, out.stderr);
    assert.equal(api.vmi?.spec.volumes?.at(-1)?.persistentVolumeClaim?.claimName, 'data');
    assert.deepEqual(api.writes.map((w) => w.split(' ')[0]), ['vmi@7', 'vm@3']);
  });

  test('removes it again', async () => {
    const api = new FakeVolumeApi('Running');
    assert.equal((await ctl(api, ['addvolume', 'testvm', '--volume-name=data'])).code, 0);
    const out = await ctl(api, ['removevolume', 'testvm', '--volume-name=data']);
    assert.equal(out.code, 0, out.stderr);
    assert.deepEqual(api.vmi?.spec.volumes?.map((v) => v.name), ['root']);
  });

  test('retries a conflict on a fresh read', async () => {
    const api = new FakeVolumeApi('Running');
    api.conflicts = 2;
    assert.equal((await ctl(api, ['addvolume', 'testvm', '--volume-name=data'])).code, 0);
    assert.equal(api.writes.length, 1);
  });

  test('refuses, naming the flag or the reason, and writes nothing', async () => {
    const cases: [FakeVolumeApi, string[], RegExp][] = [
      [new FakeVolumeApi('Scheduled'), ['addvolume', 'testvm', '--volume-name=data'], /is Scheduled, not Running/],
      [new FakeVolumeApi('Running'), ['addvolume', 'testvm', '--volume-name=root'], /--volume-name: Duplicate value/],
      [new FakeVolumeApi('Running'), ['addvolume', 'testvm', '--volume-name=Data'], /invalid --volume-name/],
      [new FakeVolumeApi('Running'), ['addvolume', 'testvm', '--volume-name=data', '--cache=fast'], /invalid --cache/],
      [new FakeVolumeApi('Running'), ['addvolume', 'testvm'], /--volume-name is required/],
      [new FakeVolumeApi('Running'), ['removevolume', 'testvm', '--volume-name=root'], /not hotpluggable/],
      [new FakeVolumeApi('Running'), ['removevolume', 'testvm', '--volume-name=data', '--claim=x'], /does not take --claim/],
      [new FakeVolumeApi('Running'), ['addvolume', 'testvm', '--volume-name=data', '--persist'], /VM default\/testvm not found/],
    ];
    for (const [api, argv, expected] of cases) {
      const out = await ctl(api, argv);
      assert.notEqual(out.code, 0, argv.join(' '));
      assert.match(out.stderr, expected, argv.join(' '));
      assert.deepEqual(api.writes, [], argv.join(' '));
    }
  });
});
