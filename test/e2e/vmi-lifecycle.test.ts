// A VMI on the testbed becomes a running VM and stops again, with the controller and the
// handler as real processes and the launcher pod run by the kubelet (monitor as PID 1):
// Pending → Scheduling → Scheduled → Running, the guest's ready marker in its pod, kubectl's
// view, the launcher's JSON logs; delete → ACPI shutdown → Succeeded; a guest that ignores
// ACPI is destroyed at its grace deadline → Failed.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { describe, test } from 'node:test';
import { consoleLogTail, UNPRIVILEGED_TAIL } from './console-log-process.js';
import { guestVmi, VmiSuite } from './vmi-stack.js';

describe('VMI lifecycle on the testbed', () => {
  const suite = VmiSuite.setUp();

  test('create → Running with the guest ready; kubectl shows phase, node and launcher logs; delete → Succeeded', async () => {
    await suite.apply(guestVmi(suite.guest, 'vm-life'));
    const running = await suite.waitForPhase('vm-life', 'Running');
    const phases = (running.status?.phaseTransitionTimestamps ?? []).map((p) => p.phase);
    assert.deepEqual(phases, ['Pending', 'Scheduling', 'Scheduled', 'Running']);
    assert.equal(running.status?.nodeName, suite.stack.nodeName);
    const readyCondition = await suite.eventually('Ready=True', async () =>
      (await suite.vmi('vm-life'))?.status?.conditions?.find((c) => c.type === 'Ready' && c.status === 'True'));
    assert.equal(readyCondition.reason, undefined, 'a True Ready copied from the pod carries no stale reason');
    const ready = await suite.waitForGuestReady(running);
    assert.match(ready, /PODVIRT-GUEST-READY/);

    const table = await suite.kubectl(['get', 'vmi', 'vm-life']);
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, new RegExp(`vm-life\\s+\\S+\\s+Running\\s+.*${suite.stack.nodeName}`));

    const [pod] = await suite.podsOf(running);
    const podName = pod?.metadata?.name ?? '';
    // The monitor is PID 1 of the compute container, and qemu (double-forked by libvirt) its child.
    const [qemu] = await suite.qemuPids('vm-life');
    const computePid = Number(/^PPid:\s+(\d+)$/m.exec(await readFile(`/proc/${qemu ?? 0}/status`, 'utf8'))?.[1]);
    const status = await readFile(`/proc/${computePid}/status`, 'utf8');
    assert.match(status, new RegExp(`^NSpid:\\s+${computePid}\\s+1$`, 'm'));
    assert.match(await readFile(`/proc/${computePid}/cmdline`, 'utf8'), /podvirt-launcher-monitor/);
    // The process runtime's container id is its PID 1; the image runtime's is podman's.
    const containerID = pod?.status?.containerStatuses?.find((c) => c.name === 'compute')?.containerID ?? '';
    assert.ok(containerID === `testbed://${computePid}` || /^podman:\/\/[0-9a-f]{64}$/.test(containerID), containerID);
    // In the image runtime the VM runs with exactly the rendered capabilities (never privileged):
    // CHOWN DAC_OVERRIDE SETGID SETUID SETPCAP NET_BIND_SERVICE.
    if (containerID.startsWith('podman://')) {
      assert.match(status, /^CapBnd:\s+00000000000005c3$/m);
      // The guest-console-log sidecar as rendered: uid 107, no capability, no_new_privs.
      assert.deepEqual(await consoleLogTail(running.metadata?.uid ?? ''), UNPRIVILEGED_TAIL, 'the guest-console-log process runs, unprivileged');
    }
    const logs = await suite.kubectl(['logs', podName, '-c', 'compute']);
    assert.equal(logs.code, 0, logs.stderr);
    const lines = logs.stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
    const subcomponents = new Set(lines.map((l) => l['subcomponent']));
    assert.ok(subcomponents.has('libvirt'), `libvirt lines in the launcher pod's log: ${[...subcomponents].join(',')}`);
    assert.ok(subcomponents.has('qemu'), `qemu lines in the launcher pod's log: ${[...subcomponents].join(',')}`);
    assert.ok(lines.some((l) => l['component'] === 'virt-launcher-monitor'), 'the monitor logs too');

    const reasons = (await suite.events('vm-life')).map((e) => e.reason);
    for (const r of ['SuccessfulCreate', 'Created', 'Started']) assert.ok(reasons.includes(r), `Event ${r} in ${reasons.join(',')}`);

    assert.equal((await suite.kubectl(['delete', 'vmi', 'vm-life', '--wait=false'])).code, 0);
    const stopped = await suite.waitForPhase('vm-life', 'Succeeded');
    assert.equal(stopped.status?.phase, 'Succeeded');
    assert.deepEqual(suite.phasesSeen('vm-life').slice(-2), ['Running', 'Succeeded']);
    await suite.waitForGone('vm-life');
    const after = (await suite.events('vm-life')).map((e) => e.reason);
    assert.ok(after.includes('ShuttingDown'), `ShuttingDown in ${after.join(',')}`);
    await suite.waitForPodsGone(running);
    assert.deepEqual(await suite.qemuPids('vm-life'), []);
  });

  test('a guest that ignores ACPI is destroyed at its grace deadline → Failed', async () => {
    const args = `${suite.guest.acpiIgnoreArg} ${suite.guest.noAgentArg}`;
    await suite.apply(guestVmi(suite.guest, 'vm-stubborn', { gracePeriodSeconds: 5, extraKernelArgs: args }));
    const running = await suite.waitForPhase('vm-stubborn', 'Running');
    await suite.waitForGuestReady(running);
    assert.equal((await suite.kubectl(['delete', 'vmi', 'vm-stubborn', '--wait=false'])).code, 0);
    // KubeVirt: a domain destroyed while ACPI was in play (grace > 0) failed to shut down in time.
    const failed = await suite.waitForPhase('vm-stubborn', 'Failed');
    assert.equal(failed.status?.phase, 'Failed');
    await suite.waitForGone('vm-stubborn');
    const reasons = (await suite.events('vm-stubborn')).map((e) => `${e.type ?? ''} ${e.reason ?? ''}`);
    assert.ok(reasons.includes('Normal ShuttingDown'), reasons.join(','));
    assert.ok(reasons.includes('Normal Deleted'), `the kill is recorded: ${reasons.join(',')}`);
    await suite.waitForPodsGone(running);
    assert.deepEqual(await suite.qemuPids('vm-stubborn'), []);
  });
});
