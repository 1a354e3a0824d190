// What a user sees when a VMI goes wrong on the testbed (controller and handler as processes):
// qemu killed under a running guest → Failed with a Warning Event, and the launcher pod ends;
// a VMI asking for a device podvirt does not have → Synchronized=False and a Warning SyncFailed
// naming the field (on the real control plane podvirt-api refuses it at apply, by the same
// field), while a good VMI next to it runs undisturbed; a volume the launcher cannot
// prepare (an emptyDisk larger than the pod's filesystem) → Failed with a reason, not retried.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { guestVmi, VmiSuite } from './vmi-stack.js';

describe('VMI failures on the testbed', () => {
  const suite = VmiSuite.setUp();

  test('qemu killed → Failed with a Warning Event; the launcher pod ends', async () => {
    await suite.apply(guestVmi(suite.guest, 'vm-crash'));
    const running = await suite.waitForPhase('vm-crash', 'Running');
    await suite.waitForGuestReady(running);
    const [qemu, ...others] = await suite.qemuPids('vm-crash');
    assert.ok(qemu !== undefined && others.length === 0, 'one qemu runs the VMI');
    process.kill(qemu, 'SIGKILL');

    const failed = await suite.waitForPhase('vm-crash', 'Failed');
    assert.equal(failed.status?.phase, 'Failed');
    const warnings = (await suite.events('vm-crash')).filter((e) => e.type === 'Warning').map((e) => `${e.reason ?? ''}: ${e.message ?? ''}`);
    assert.ok(warnings.some((w) => w.startsWith('Stopped:')), `a Warning Stopped Event: ${warnings.join(' | ')}`);
    const [pod] = await suite.podsOf(running);
    await suite.eventually('launcher pod finished', async () => {
      const phase = (await suite.podsOf(running))[0]?.status?.phase;
      return phase === 'Succeeded' || phase === 'Failed' || phase === undefined ? true : undefined;
    });
    assert.ok(pod?.metadata?.name);
    assert.deepEqual(await suite.qemuPids('vm-crash'), []);

    assert.equal((await suite.kubectl(['delete', 'vmi', 'vm-crash'])).code, 0);
    await suite.waitForGone('vm-crash');
    await suite.eventually('launcher pod deleted', async () => ((await suite.podsOf(running)).length === 0 ? true : undefined));
  });

  test('an unsupported device → refused at apply naming the field (both lanes call podvirt-api), nothing stored; the good VMI beside it runs', async () => {
    const gpu = { gpus: [{ name: 'gpu1', deviceName: 'nvidia.com/GP102GL_Tesla_P40' }] };
    // podvirt-api's webhook runs the controller's own checks before the VMI is stored.
    await suite.apply(guestVmi(suite.guest, 'vm-good'));
    const refused = await suite.kubectl(['apply', '-f', '-'], JSON.stringify(guestVmi(suite.guest, 'vm-gpu', { devices: gpu })));
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /The VirtualMachineInstance "vm-gpu" is invalid: spec\.domain\.devices\.gpus\[0\]/);
    assert.equal(await suite.vmi('vm-gpu'), undefined, 'nothing stored');
    const good = await suite.waitForPhase('vm-good', 'Running');
    await suite.waitForGuestReady(good);
    assert.equal((await suite.kubectl(['delete', 'vmi', 'vm-good', '--wait=false'])).code, 0);
    await suite.waitForPhase('vm-good', 'Succeeded');
    await suite.waitForGone('vm-good');
  });

  test("what the node lacks → Synchronized=False and a Warning SyncFailed naming the field, before libvirt sees it", async () => {
    const vmi = guestVmi(suite.guest, 'vm-passthrough') as { spec: { domain: Record<string, unknown> } };
    // Under TCG there is no host CPU to pass through: the launcher answers FAILED_PRECONDITION.
    vmi.spec.domain['cpu'] = { model: 'host-passthrough' };
    await suite.apply(vmi);
    const reported = await suite.eventually('Synchronized=False on vm-passthrough', async () => {
      const found = await suite.vmi('vm-passthrough');
      return found?.status?.conditions?.find((c) => c.type === 'Synchronized' && c.status === 'False');
    });
    assert.match(reported.message ?? '', /spec\.domain\.cpu\.model: host-passthrough is not available on this node/);
    const syncFailed = await suite.eventually('SyncFailed Event', async () =>
      (await suite.events('vm-passthrough')).find((e) => e.type === 'Warning' && e.reason === 'SyncFailed'));
    assert.match(syncFailed.message ?? '', /spec\.domain\.cpu\.model/);
    assert.deepEqual(await suite.qemuPids('vm-passthrough'), [], 'no qemu was started');

    assert.equal((await suite.kubectl(['delete', 'vmi', 'vm-passthrough', '--wait=false'])).code, 0);
    await suite.waitForGone('vm-passthrough');
  });

  test('an emptyDisk larger than the pod filesystem → Failed with VolumePreparationFailed and Warning Events naming the field; deleting it takes its launcher pod', async () => {
    const vmi = guestVmi(suite.guest, 'vm-huge-disk') as { spec: { domain: { devices: { disks: unknown[] } }; volumes: unknown[] } };
    // 1 PiB: far past the largest file the node's filesystem takes (EFBIG), so it can never be created.
    vmi.spec.domain.devices.disks.push({ name: 'scratch', disk: { bus: 'virtio' } });
    vmi.spec.volumes.push({ name: 'scratch', emptyDisk: { capacity: '1Pi' } });
    await suite.apply(vmi);
    const failed = await suite.waitForPhase('vm-huge-disk', 'Failed');
    assert.equal(failed.status?.reason, 'VolumePreparationFailed');
    const field = /spec\.volumes\[1\]\.emptyDisk\.capacity: \d+ bytes is larger than the pod's filesystem can hold/;
    assert.match(failed.status?.conditions?.find((c) => c.type === 'Synchronized')?.message ?? '', field);
    const warnings = await suite.eventually('SyncFailed and Stopped Events', async () => {
      const events = (await suite.events('vm-huge-disk')).filter((e) => e.type === 'Warning');
      return events.some((e) => e.reason === 'SyncFailed') && events.some((e) => e.reason === 'Stopped') ? events : undefined;
    });
    assert.match(warnings.find((e) => e.reason === 'SyncFailed')?.message ?? '', field);
    assert.match(warnings.find((e) => e.reason === 'Stopped')?.message ?? '', /VolumePreparationFailed.*spec\.volumes\[1\]\.emptyDisk\.capacity/);
    assert.equal(warnings.find((e) => e.reason === 'SyncFailed')?.count ?? 1, 1, 'one attempt: a failure retrying cannot cure is not retried');
    assert.deepEqual(await suite.qemuPids('vm-huge-disk'), [], 'no qemu was started');
    assert.equal((await suite.vmi('vm-huge-disk'))?.status?.phase, 'Failed', 'and it stays Failed');

    // Deleting it ends at once and takes its launcher pod along, as for any final VMI.
    assert.equal((await suite.kubectl(['delete', 'vmi', 'vm-huge-disk', '--wait=false'])).code, 0);
    await suite.waitForGone('vm-huge-disk');
    await suite.eventually('launcher pod deleted', async () => ((await suite.podsOf(failed)).length === 0 ? true : undefined));
  });
});
