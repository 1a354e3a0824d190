import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeVmi, hotplugVolumeNames, validateAddVolumeOptions, withVolumeAdded, withVolumeRemoved, type AddVolumeOptions, type HotplugSpec } from '../src/index.js';
import { ephemeralVmi } from './fixtures.js';

function spec(): HotplugSpec {
  return decodeVmi(ephemeralVmi()).spec;
}

const ADD: AddVolumeOptions = { name: 'data', disk: { name: 'data', disk: { bus: 'scsi' }, serial: 'D1' }, volumeSource: { persistentVolumeClaim: { claimName: 'claim-1' } } };

function fieldsOf(raw: unknown): string[] {
  return validateAddVolumeOptions(raw).map((e) => `${e.field} ${e.type}`);
}

describe('hotplug requests', () => {
  it('accepts KubeVirt’s AddVolumeOptions with a claim on bus scsi', () => {
    assert.deepEqual(fieldsOf(ADD), []);
  });

  it('names each bad field of a request', () => {
    assert.deepEqual(fieldsOf({ ...ADD, name: 'Bad_Name' }), ['name Invalid']);
    assert.deepEqual(fieldsOf({ ...ADD, disk: { disk: { bus: 'virtio' } } }), ['disk.disk.bus NotSupported']);
    assert.deepEqual(fieldsOf({ ...ADD, disk: { cdrom: { bus: 'scsi' } } }), ['disk NotSupported']);
    assert.deepEqual(fieldsOf({ ...ADD, disk: { disk: {}, serial: 'a/b' } }), ['disk.serial Invalid']);
    assert.deepEqual(fieldsOf({ ...ADD, volumeSource: { dataVolume: { name: 'dv' } } }), ['volumeSource.dataVolume NotSupported']);
    assert.deepEqual(fieldsOf({ ...ADD, volumeSource: { persistentVolumeClaim: {} } }), ['volumeSource.persistentVolumeClaim.claimName Required']);
    assert.deepEqual(fieldsOf({ name: 'x' }), ['disk Required', 'volumeSource Required']);
  });

  it('adds a hotpluggable volume and its scsi disk, and the result decodes', () => {
    const result = withVolumeAdded(spec(), ADD);
    assert.ok('spec' in result);
    assert.deepEqual(result.spec.volumes?.at(-1), { name: 'data', persistentVolumeClaim: { claimName: 'claim-1', hotpluggable: true } });
    assert.deepEqual(result.spec.domain.devices?.disks?.at(-1), { name: 'data', disk: { bus: 'scsi' }, serial: 'D1' });
    assert.deepEqual([...hotplugVolumeNames(result.spec)], ['data']);
    const vmi = { ...ephemeralVmi(), spec: result.spec };
    assert.doesNotThrow(() => decodeVmi(vmi));
  });

  it('refuses a name or a claim the spec already has', () => {
    const once = withVolumeAdded(spec(), ADD);
    assert.ok('spec' in once);
    const again = withVolumeAdded(once.spec, ADD);
    assert.ok('errors' in again);
    assert.deepEqual(again.errors.map((e) => `${e.field} ${e.type}`), ['name Duplicate', 'volumeSource.persistentVolumeClaim.claimName Duplicate']);
    const clash = withVolumeAdded(spec(), { ...ADD, name: 'containerdisk', volumeSource: { persistentVolumeClaim: { claimName: 'other' } } });
    assert.ok('errors' in clash);
    assert.deepEqual(clash.errors.map((e) => e.field), ['name']);
  });

  it('removes only a hotplugged volume, with its disk', () => {
    const added = withVolumeAdded(spec(), ADD);
    assert.ok('spec' in added);
    const removed = withVolumeRemoved(added.spec, { name: 'data' });
    assert.ok('spec' in removed);
    assert.deepEqual(removed.spec, spec());
    const boot = withVolumeRemoved(added.spec, { name: 'containerdisk' });
    assert.ok('errors' in boot);
    assert.equal(boot.errors[0]?.type, 'Invalid');
    const missing = withVolumeRemoved(added.spec, { name: 'nope' });
    assert.ok('errors' in missing);
    assert.equal(missing.errors[0]?.type, 'NotFound');
  });
});
