// The handler's hotplug decisions, pure: a Sync is due for a volume mounted into the pod and not
// attached yet, or for one that left the spec while the domain may hold it; after a Sync that
// succeeded, the mounted volumes are Ready.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { VirtualMachineInstance, VolumeStatus } from '@podvirt/api';
import { readyStates } from '../src/hotplug/hotplug-mounts.js';
import { LauncherState } from '../src/launcher/launcher-state.js';
import { decide, hotplugPending } from '../src/reconcile/decide.js';
import { defaultedOf, makeDomain, makeVmi } from './fixtures.js';

function vmi(hotplugged: string[], statuses: Record<string, string>): VirtualMachineInstance {
  const v = makeVmi({ phase: 'Running' });
  v.spec.volumes = [...(v.spec.volumes ?? []), ...hotplugged.map((name) => ({ name, persistentVolumeClaim: { claimName: `${name}-c`, hotpluggable: true } }))];
  const volumeStatus: VolumeStatus[] = Object.entries(statuses).map(([name, phase]) => ({ name, target: '', phase: phase as 'Ready' }));
  v.status = { ...v.status, volumeStatus };
  return v;
}

test('a Sync is due for a mounted volume not attached yet, and for one that left the spec while attached', () => {
  assert.equal(hotplugPending(vmi(['hp'], { hp: 'AttachedToNode' })), false);
  assert.equal(hotplugPending(vmi(['hp'], { hp: 'MountedToPod' })), true);
  assert.equal(hotplugPending(vmi(['hp'], { hp: 'Ready' })), false);
  assert.equal(hotplugPending(vmi([], { hp: 'Ready' })), true);
  assert.equal(hotplugPending(vmi([], { hp: 'Detaching' })), true);
  assert.equal(hotplugPending(vmi([], {})), false);
});

test('after a Sync that succeeded, what was mounted is Ready; other phases stay', () => {
  const states = readyStates(vmi(['a', 'b'], { a: 'MountedToPod', b: 'AttachedToNode' }), new Map());
  assert.deepEqual([...states.entries()].map(([k, s]) => [k, s.phase, s.reason]), [['a', 'Ready', 'VolumeReady']]);
});

test('a removed volume the launcher pod still has mounted (its disk maybe in the domain): a Sync is due, whatever the status says', () => {
  const v = vmi([], {});
  const domain = makeDomain('Running', 'Booted');
  assert.equal(decide(v, defaultedOf(v), domain, LauncherState.Ready, 0).type, 'updateStatus');
  assert.equal(decide(v, defaultedOf(v), domain, LauncherState.Ready, 0, true).type, 'sync');
});
