// VMIs whose launcher pods run from the built images (the kubelet's image runtime, podman +
// runc, whatever PODVIRT_TESTBED_RUNTIME says), for what only a real container runtime shows:
// - a compute container without a capability the launcher needs (a node whose runtime withholds
//   SETPCAP): the launcher's log names it and why, and the VMI fails with a Warning Event;
// - an image the runtime's store does not have: ErrImagePull, then ImagePullBackOff, on the VMI;
// - the kubelet's hold on a running container lost (its `podman wait` killed — podman has no
//   daemon to restart, conmon keeps the container): the VM keeps running, the kubelet waits on
//   it again, and deleting the VMI still stops it cleanly.
// Needs the images (scripts/images; scripts/test builds them first).
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { describe, test } from 'node:test';
import { guestVmi, NS, VmiSuite } from './vmi-stack.js';

/** Pids of `podman wait <id>` processes on this machine for one container id. */
async function podmanWaiters(id: string): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of (await readdir('/proc')).filter((n) => /^\d+$/.test(n))) {
    const argv = (await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '')).split('\0');
    if (argv[0]?.endsWith('podman') === true && argv[1] === 'wait' && argv[2] === id) pids.push(Number(entry));
  }
  return pids;
}

describe('VMIs in the image runtime: a node that withholds SETPCAP', () => {
  const suite = VmiSuite.setUp({ stack: { runtime: 'image', withheldCapabilities: ['SETPCAP'] } });

  test('the launcher names the missing capability and why in its log; the VMI fails with a Warning Event', async () => {
    await suite.apply(guestVmi(suite.guest, 'vm-nocap'));
    const failed = await suite.waitForPhase('vm-nocap', 'Failed');
    assert.equal(failed.status?.reason, 'PodFailed');
    const [pod] = await suite.podsOf(failed);
    const podName = pod?.metadata?.name ?? '';
    const compute = pod?.status?.containerStatuses?.find((c) => c.name === 'compute');
    assert.equal(compute?.state?.terminated?.exitCode, 1);
    const logs = await suite.kubectl(['logs', podName, '-c', 'compute']);
    assert.equal(logs.code, 0, logs.stderr);
    const fatal = logs.stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { level?: number; err?: { code?: string; message?: string } })
      .find((l) => l.level === 60);
    assert.equal(fatal?.err?.code, 'LAUNCHER_ERR_CAPABILITIES', logs.stdout);
    assert.equal(fatal.err.message, 'CAP_SETPCAP missing: the libvirt daemon drops capabilities before it starts qemu'
      + ' (add SETPCAP to the compute container\'s securityContext.capabilities)');
    assert.doesNotMatch(logs.stdout, /libvirt daemon started/, 'the check comes before the daemon');
    const events = (await suite.events('vm-nocap')).filter((e) => e.reason === 'PodFailed');
    assert.equal(events[0]?.type, 'Warning');
    assert.match(events[0]?.message ?? '', new RegExp(`^virt-launcher pod ${podName} has terminated \\(compute: Error, exit code 1\\)$`));
    assert.deepEqual(await suite.qemuPids('vm-nocap'), []);
    assert.equal((await suite.kubectl(['delete', 'vmi', 'vm-nocap'])).code, 0);
    await suite.waitForGone('vm-nocap');
    await suite.waitForPodsGone(failed);
  });
});

describe('VMIs in the image runtime', () => {
  const suite = VmiSuite.setUp({ stack: { runtime: 'image' } });

  test('an image the store does not have: ErrImagePull, then ImagePullBackOff, as the VMI\'s condition and Events', async () => {
    const vmi = guestVmi(suite.guest, 'vm-noimage') as { spec: { volumes: { containerDisk?: { image: string } }[] } };
    const volume = vmi.spec.volumes[0];
    if (volume?.containerDisk !== undefined) volume.containerDisk.image = 'localhost/podvirt/no-such-disk:1';
    await suite.apply(vmi as unknown as Record<string, unknown>);
    const condition = (reason: string) => suite.eventually(`Synchronized ${reason}`, async () =>
      (await suite.vmi('vm-noimage'))?.status?.conditions?.find((c) => c.type === 'Synchronized' && c.reason === reason));
    const pulled = await condition('ErrImagePull');
    assert.equal(pulled.status, 'False');
    // podman's own words, as a kubelet passes on its runtime's.
    assert.match(pulled.message ?? '', /^failed to pull and unpack image "localhost\/podvirt\/no-such-disk:1": failed to resolve reference "localhost\/podvirt\/no-such-disk:1": .*image not known/);
    const backoff = await condition('ImagePullBackOff');
    assert.equal(backoff.message, 'Back-off pulling image "localhost/podvirt/no-such-disk:1"');
    const events = (await suite.events('vm-noimage')).map((e) => `${e.type ?? ''}/${e.reason ?? ''}`);
    assert.ok(events.includes('Warning/ErrImagePull') && events.includes('Warning/ImagePullBackOff'), events.join(','));
    const [pod] = await suite.podsOf((await suite.vmi('vm-noimage')) ?? assert.fail('VMI vanished'));
    const podEvents = (await suite.core.listNamespacedEvent({ namespace: NS })).items
      .filter((e) => e.involvedObject.kind === 'Pod' && e.involvedObject.name === pod?.metadata?.name)
      .map((e) => `${e.reason ?? ''}: ${e.message ?? ''}`);
    assert.ok(podEvents.some((e) => e.startsWith('Failed: Failed to pull image "localhost/podvirt/no-such-disk:1"')), podEvents.join('\n'));
    assert.equal((await suite.vmi('vm-noimage'))?.status?.phase, 'Scheduling');
    assert.equal((await suite.kubectl(['delete', 'vmi', 'vm-noimage'])).code, 0);
    await suite.waitForGone('vm-noimage');
  });

  test('the kubelet loses its hold on the running compute container: the VM keeps running, the kubelet waits again, delete still works', async () => {
    await suite.apply(guestVmi(suite.guest, 'vm-rewait'));
    const running = await suite.waitForPhase('vm-rewait', 'Running');
    await suite.waitForGuestReady(running);
    const [pod] = await suite.podsOf(running);
    const id = (pod?.status?.containerStatuses?.find((c) => c.name === 'compute')?.containerID ?? '').replace(/^podman:\/\//, '');
    assert.match(id, /^[0-9a-f]{64}$/);
    const [qemu] = await suite.qemuPids('vm-rewait');
    const [waiter] = await podmanWaiters(id);
    assert.ok(waiter !== undefined, 'the kubelet waits on the compute container through podman wait');
    process.kill(waiter, 'SIGKILL');
    const again = await suite.eventually('a new podman wait', async () => (await podmanWaiters(id)).find((p) => p !== waiter));
    assert.notEqual(again, waiter);
    assert.deepEqual(await suite.qemuPids('vm-rewait'), [qemu], 'the same qemu still runs');
    const now = await suite.core.readNamespacedPod({ namespace: NS, name: pod?.metadata?.name ?? '' });
    const compute = now.status?.containerStatuses?.find((c) => c.name === 'compute');
    assert.ok(compute?.state?.running !== undefined, JSON.stringify(compute?.state));
    assert.equal(compute.restartCount, 0);
    assert.equal((await suite.vmi('vm-rewait'))?.status?.phase, 'Running');
    assert.equal((await suite.kubectl(['delete', 'vmi', 'vm-rewait', '--wait=false'])).code, 0);
    assert.equal((await suite.waitForPhase('vm-rewait', 'Succeeded')).status?.phase, 'Succeeded');
    await suite.waitForGone('vm-rewait');
    await suite.waitForPodsGone(running);
    assert.deepEqual(await suite.qemuPids('vm-rewait'), []);
  });
});
