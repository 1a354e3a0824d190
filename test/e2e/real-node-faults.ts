// Faults on the real node (test/testbed/real-node/), podvirt installed from manifests/, as tests of
// real-node.test.ts on its stack (one stack for the real-node pass: a start and an install less).
// One VMI runs through containerd restarted and then the kubelet restarted (each time it stays
// Running on the same qemu, its launcher's containers not restarted, kubectl exec reaches them,
// the device plugins allocatable again), then its qemu is killed -9 (Failed with the reason, the
// pod ends); a second VMI's launcher pod deleted directly ends it as KubeVirt does; a containerDisk
// image that is not in containerd's store and cannot be pulled gives ErrImagePull on the VMI.
// During each fault the writes of podvirt's controller and handler are counted from
// kube-apiserver's audit log and stay small; after each VMI nothing of its pod runs or stays
// mounted on the node (the kubelet's removal of its sandbox is checked once, at the file's end).
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { eventually } from '@podvirt/test-support';
import { readAuditLog, serviceAccountUser, writesOf } from '../testbed/control-plane/audit-log.js';
import { cniNetns, NODE, qemuInPods, type LauncherPod, type RealNodeStack } from './real-node-stack.js';

const CONTROLLER = serviceAccountUser('podvirt', 'podvirt-controller');
const HANDLER = serviceAccountUser('podvirt', 'podvirt-handler');
// Writes per ServiceAccount in one fault window (~20-60 s): a heartbeat, the VMI's status and an
// Event or two; a retry loop without backoff writes hundreds in that time.
const MAX_WRITES_PER_FAULT = 40;
const NO_SUCH_IMAGE = 'registry.invalid/no-such-disk:1';

/**
 * The fault tests, registered in the caller's describe after podvirt is installed on the stack
 * `s()` returns; each fault's writes are printed after the tests.
 */
export function realNodeFaultTests(s: () => RealNodeStack): void {
  const report: string[] = [];

  after(() => {
    console.log(`real node faults:\n  ${report.join('\n  ')}`);
  });

  /** Runs a fault; counts the controller's and the handler's writes from its start to the end of `run`. */
  async function fault(what: string, run: () => Promise<void>): Promise<void> {
    const from = Date.now();
    await run();
    const to = Date.now();
    const events = await readAuditLog(s().cp.auditLogPath);
    for (const user of [CONTROLLER, HANDLER]) {
      const writes = writesOf(events, user, from, to);
      report.push(`${what} (${Math.round((to - from) / 1000)} s): ${user.split(':').pop() ?? ''} wrote ${writes.count}: ${writes.calls}`);
      assert.ok(writes.count <= MAX_WRITES_PER_FAULT, `${what}: ${writes.count} writes by ${user}: ${writes.calls}`);
    }
  }

  /** Applies the test guest as `name`, waits for Running; its uid and its one launcher pod. */
  async function running(name: string): Promise<{ uid: string; pod: LauncherPod }> {
    await s().applyTestGuest(name);
    await s().waitForPhase(name, 'Running');
    const uid = (await s().vmi(name))?.metadata.uid ?? assert.fail(`VMI ${name} vanished`);
    const pods = await s().launcherPods(uid);
    assert.equal(pods.length, 1, `one launcher pod of ${name}`);
    return { uid, pod: pods[0]! };
  }

  /**
   * The kubelet renewed its node Lease after `since` (it works again), the launcher pod's
   * containers are all Ready and none restarted, `kubectl exec` reaches the compute container
   * (API server → kubelet → containerd → the container's shim, which outlived the restart), and the
   * node is Ready with kvm and tun allocatable again (the handler registered its device plugins
   * with the restarted kubelet).
   */
  async function podAndNodeBack(pod: LauncherPod, since: number): Promise<void> {
    await eventually(async () => Date.parse((await s().admin(['-n', 'kube-node-lease', 'get', 'lease', NODE, '-o', 'jsonpath={.spec.renewTime}'])).trim()) > since,
      { what: 'the node Lease renewed after the restart', deadlineMs: 90_000, stepMs: 1_000 });
    await eventually(async () => {
      const now = JSON.parse(await s().admin(['get', 'pod', pod.metadata.name, '-o', 'json'])) as LauncherPod;
      const statuses = now.status?.containerStatuses ?? [];
      assert.deepEqual(statuses.map((c) => c.restartCount), statuses.map(() => 0), `no container of ${pod.metadata.name} restarted`);
      return statuses.length > 0 && statuses.every((c) => c.ready);
    }, { what: `the containers of ${pod.metadata.name} Ready`, deadlineMs: 90_000, stepMs: 1_000 });
    await eventually(async () => {
      const got = JSON.parse(await s().admin(['get', 'node', NODE, '-o', 'json'])) as { status: { allocatable: Record<string, string>; conditions: Array<{ type: string; status: string }> } };
      const some = (q: string | undefined): boolean => q !== undefined && !/^0+$/.test(q);
      return got.status.conditions.some((c) => c.type === 'Ready' && c.status === 'True') && some(got.status.allocatable['devices.kubevirt.io/kvm']) && some(got.status.allocatable['devices.kubevirt.io/tun']);
    }, { what: 'the node Ready with devices.kubevirt.io/kvm and tun allocatable', deadlineMs: 90_000, stepMs: 1_000 });
    // A restarted kubelet answers its Lease and the node's status before its pod manager has
    // taken the pods from the API server; until then it answers exec "pod does not exist".
    // Only that answer is waited out; any other error fails the test.
    const hostname = await eventually(async () => {
      try {
        return (await s().admin(['exec', pod.metadata.name, '-c', 'compute', '--', 'cat', '/etc/hostname'])).trim();
      } catch (error) {
        if (error instanceof Error && /pod does not exist/.test(error.message)) return undefined;
        throw error;
      }
    }, { what: `kubectl exec reaches ${pod.metadata.name}`, deadlineMs: 60_000, stepMs: 1_000 });
    assert.equal(hostname, pod.metadata.name);
  }

  async function stillRunning(name: string, pod: LauncherPod, qemu: readonly string[]): Promise<void> {
    assert.equal((await s().vmi(name))?.status?.phase, 'Running', `${name} after the fault`);
    assert.deepEqual(await qemuInPods(pod.metadata.uid), qemu, `the same qemu runs ${name}`);
  }

  test('containerd restarted, then the kubelet restarted: the VMI stays Running on the same qemu; qemu killed -9: Failed with the reason, the pod ends', async () => {
    const netnsBefore = await cniNetns();
    const { uid, pod } = await running('vm-faults');
    const qemu = await qemuInPods(pod.metadata.uid);
    assert.equal(qemu.length, 1, 'one qemu runs the VMI');

    for (const component of ['containerd', 'kubelet'] as const) {
      await fault(`${component} restarted`, async () => {
        const before = s().node.process(component);
        assert.ok(before?.running === true, `${component} runs`);
        const stopped = Date.now();
        await before.stop();
        await s().node.restart(component);
        assert.notEqual(s().node.process(component)?.pid, before.pid);
        await podAndNodeBack(pod, stopped);
      });
      await stillRunning('vm-faults', pod, qemu);
    }

    await fault('qemu killed -9', async () => {
      process.kill(Number(qemu[0]!.split(' ')[0]), 'SIGKILL');
      await s().waitForPhase('vm-faults', 'Failed');
      await eventually(async () => {
        const phase = (await s().launcherPods(uid))[0]?.status?.phase;
        return phase === 'Succeeded' || phase === 'Failed';
      }, { what: `launcher pod ${pod.metadata.name} ended`, deadlineMs: 60_000, stepMs: 1_000 });
    });
    const warnings = await s().warnings('vm-faults');
    assert.ok(warnings.some((w) => w.startsWith('Stopped:')), `a Warning Stopped Event with the reason: ${warnings.join(' | ')}`);
    assert.deepEqual(await qemuInPods(pod.metadata.uid), []);
    await s().deleteAndCheckGone('vm-faults', pod, netnsBefore);
  });

  // As KubeVirt: the pod's deletion is the launcher's SIGTERM, which shuts the guest down through
  // ACPI; while the pod terminates the VMI stays Running with Ready=False PodTerminating, and a
  // guest that powered off ends Succeeded ("shut down"), one destroyed after the grace period
  // Failed (virt-handler's phase for a Shutoff domain by its reason).
  test('the launcher pod deleted directly: Ready=False PodTerminating, the guest shut down, Succeeded, nothing left', async () => {
    const netnsBefore = await cniNetns();
    const { pod } = await running('vm-podgone');
    const phases = s().watch('vm-podgone', '{.status.phase}');
    const ready = s().watch('vm-podgone', '{.status.conditions[?(@.type=="Ready")].reason}');
    try {
      await fault('launcher pod deleted', async () => {
        await s().admin(['delete', 'pod', pod.metadata.name, '--wait=false']);
        await s().waitForPhase('vm-podgone', 'Succeeded');
      });
    } finally {
      await phases.stop();
      await ready.stop();
    }
    assert.deepEqual(phases.seen, ['Running', 'Succeeded'], `phases seen: ${phases.seen.join(' → ')}`);
    assert.ok(ready.seen.includes('PodTerminating'), `Ready reasons seen: ${ready.seen.join(' → ')}`);
    const events = await s().admin(['get', 'events', '--field-selector', 'involvedObject.name=vm-podgone,reason=Stopped', '-o', 'jsonpath={.items[*].message}']);
    assert.match(events, /shut down/);
    assert.deepEqual(await qemuInPods(pod.metadata.uid), []);
    await s().deleteAndCheckGone('vm-podgone', pod, netnsBefore);
  });

  test('a containerDisk image that is not in the store: ErrImagePull on the VMI, naming the image', async () => {
    const netnsBefore = await cniNetns();
    await fault('image not in the store', async () => {
      await s().applyTestGuest('vm-noimage', (vmi) => {
        const volume = vmi.spec.volumes?.[0];
        if (volume?.containerDisk !== undefined) volume.containerDisk.image = NO_SUCH_IMAGE;
      });
      const synced = await eventually(async () => {
        const found = (await s().vmi('vm-noimage'))?.status?.conditions?.find((c) => c.type === 'Synchronized' && (c.reason === 'ErrImagePull' || c.reason === 'ImagePullBackOff'));
        return found;
      }, { what: 'Synchronized=False ErrImagePull on vm-noimage', deadlineMs: 90_000, stepMs: 1_000 });
      assert.equal(synced.status, 'False');
      assert.match(synced.message ?? '', /registry\.invalid\/no-such-disk:1/);
    });
    const uid = (await s().vmi('vm-noimage'))?.metadata.uid ?? assert.fail('vm-noimage vanished');
    const [pod] = await s().launcherPods(uid);
    assert.ok(pod !== undefined, 'the launcher pod waits for its image');
    assert.equal((await s().vmi('vm-noimage'))?.status?.phase, 'Scheduling');
    await s().deleteAndCheckGone('vm-noimage', pod, netnsBefore);
  });
}
