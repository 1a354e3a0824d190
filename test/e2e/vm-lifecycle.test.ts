// VirtualMachines on the testbed with real guests (controller and handler as processes): a VM
// manifest in KubeVirt's own form (manifests/examples/vm-test-guest.yaml) is applied, started, stopped, restarted and deleted with
// podvirtctl and kubectl, and `kubectl get vm` shows KubeVirt's columns at each step; under
// RerunOnFailure a guest whose qemu is killed comes back as a new VMI; a deleted VM is
// Terminating until its VMI stopped; podvirt-controller SIGKILLed while it starts a VM and
// started again leaves one VMI, whose guest boots once. PODVIRT_TESTBED_CONTROL_PLANE=real runs
// it all on the real kube-apiserver. The three VMs' own stories (the example, RerunOnFailure, the
// guest powering off) run at once; the controller's kill comes after, alone. Figures (restart and
// crash recovery against a fresh VMI boot in the same run, the three VMs sharing the cores) are
// printed as test diagnostics.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';
import type { VirtualMachine, VirtualMachineInstance, VmPrintableStatus } from '@podvirt/api';
import { spawn as spawnPty } from 'node-pty';
import { repoRoot, StackProcess } from '../testbed/index.js';
import { nodeApiSocket } from './handler-node.js';
import { guestVmi, NS, VmiSuite } from './vmi-stack.js';

const CTL = fileURLToPath(new URL('../../../packages/ctl/bin/podvirtctl.js', import.meta.url));
const VM_API = { group: 'kubevirt.io', version: 'v1', namespace: NS, plural: 'virtualmachines' };
const BOOT_TIMEOUT_MS = 150_000;
/** KubeVirt's user-guide VM (testvm's shape) with the test guest's image, as a new user applies it. */
const EXAMPLE = join(repoRoot(import.meta.url), 'manifests/examples/vm-test-guest.yaml');

describe('VirtualMachines on the testbed', () => {
  /** The controller started again after a kill -9 (the stack's own is dead then); stopped before the stack closes. */
  let restarted: StackProcess | undefined;
  const suite = VmiSuite.setUp({ beforeClose: async () => void (await restarted?.stop()) });

  /** A VM as KubeVirt's user guide writes one, with the test guest as its template. */
  const vmManifest = (name: string, strategy: string): Record<string, unknown> => {
    const template = guestVmi(suite.guest, name, { gracePeriodSeconds: 5 }) as { spec: unknown };
    return {
      apiVersion: 'kubevirt.io/v1',
      kind: 'VirtualMachine',
      metadata: { name, namespace: NS, labels: { 'kubevirt.io/vm': name } },
      spec: { runStrategy: strategy, template: { metadata: { labels: { 'kubevirt.io/size': 'small', 'kubevirt.io/domain': name } }, spec: template.spec } },
    };
  };

  const vm = async (name: string): Promise<VirtualMachine | undefined> => {
    try {
      return (await suite.custom.getNamespacedCustomObject({ ...VM_API, name })) as VirtualMachine;
    } catch (err) {
      if ((err as { code?: number }).code === 404) return undefined;
      throw err;
    }
  };
  const ctl = (...args: string[]): ReturnType<VmiSuite['podvirtctl']> => suite.podvirtctl(...args);
  const printable = (name: string, want: VmPrintableStatus, timeoutMs = BOOT_TIMEOUT_MS): Promise<VirtualMachine> =>
    suite.eventually(`VM ${name} ${want}`, async () => {
      const found = await vm(name);
      return found?.status?.printableStatus === want ? found : undefined;
    }, timeoutMs);
  /** The VM's VMI Running, other than the one with `notUid`. */
  const runningVmi = (name: string, notUid?: string): Promise<VirtualMachineInstance> =>
    suite.eventually(`a new VMI of ${name} Running`, async () => {
      const vmi = await suite.vmi(name);
      return vmi?.status?.phase === 'Running' && vmi.metadata.uid !== notUid ? vmi : undefined;
    }, BOOT_TIMEOUT_MS);
  /** `kubectl get vm NAME`: the header and the row, split on whitespace. */
  const getVm = async (name: string): Promise<string[][]> => {
    const out = await suite.kubectl(['get', 'vm', name]);
    assert.equal(out.code, 0, out.stderr);
    return out.stdout.trim().split('\n').map((line) => line.trim().split(/\s+/));
  };
  const vmEvents = async (name: string): Promise<string[]> =>
    (await suite.core.listNamespacedEvent({ namespace: NS })).items
      .filter((e) => e.involvedObject.kind === 'VirtualMachine' && e.involvedObject.name === name)
      .map((e) => `${e.type ?? ''} ${e.reason ?? ''}`);

  test('the API server the suite runs on', async (t) => {
    const version = await suite.kubectl(['version', '-o', 'json']);
    assert.equal(version.code, 0, version.stderr);
    t.diagnostic(`server ${(JSON.parse(version.stdout) as { serverVersion?: { gitVersion?: string } }).serverVersion?.gitVersion ?? '?'}`);
  });

  /** Powers the guest off from inside: `poweroff -f` typed on its serial console through podvirtctl. */
  const powerOff = async (name: string): Promise<void> => {
    const pty = spawnPty(process.execPath, [CTL, 'console', 'vmi', name, '-n', NS, '--socket', nodeApiSocket(suite.stack)], { name: 'xterm', cols: 100, rows: 30 });
    let output = '';
    pty.onData((d) => (output += d));
    let ended = false;
    pty.onExit(() => (ended = true));
    try {
      await suite.eventually(`console of ${name} attached`, () => Promise.resolve(/Press Ctrl\+\] to detach/.test(output) ? true : undefined), 30_000);
      const mark = output.length;
      pty.write('\r');
      await suite.eventually(`shell prompt of ${name}`, () => Promise.resolve(output.slice(mark).includes('# ') ? true : undefined), 30_000);
      pty.write('poweroff -f\r');
      // The console ends when the guest is gone.
      await suite.eventually(`console of ${name} ended`, () => Promise.resolve(ended ? true : undefined), 60_000);
    } finally {
      try {
        pty.kill();
      } catch {
        // Exited already.
      }
    }
  };

  // The three VMs' stories are independent (each its own VM, VMI, qemu and Events, found by
  // name), so they run at once: their boots and waits overlap instead of adding up.
  describe('three VMs at once', { concurrency: true }, () => {
    test('the example (KubeVirt\'s user-guide VM) applied with kubectl (Halted) → Stopped; start → Running; stop → Stopped; start; restart → a new VMI; delete → VMI and pod gone', async (t) => {
      const name = 'testvm-vm';
      const applied = await suite.kubectl(['apply', '-f', EXAMPLE]);
      assert.equal(applied.code, 0, applied.stderr);
      await printable(name, 'Stopped', 30_000);
      const [header, stopped] = await getVm(name);
      assert.deepEqual(header, ['NAME', 'AGE', 'STATUS', 'READY']);
      assert.deepEqual([stopped?.[0], stopped?.[2], stopped?.[3]], [name, 'Stopped', 'False']);
      assert.equal(await suite.vmi(name), undefined, 'Halted: no VMI');

      const startedAt = Date.now();
      const start = await ctl('start', 'vm', name);
      assert.equal(start.code, 0, start.stderr);
      assert.equal(start.stdout, `VM ${name} was scheduled to start\n`);
      assert.equal((await vm(name))?.spec.runStrategy, 'Always', 'start of a Halted VM sets runStrategy Always');
      const first = await runningVmi(name);
      await suite.waitForGuestReady(first);
      const freshBootMs = Date.now() - startedAt;
      assert.deepEqual(first.metadata.ownerReferences?.map((r) => `${r.kind}/${r.name} controller=${String(r.controller)}`), [`VirtualMachine/${name} controller=true`]);
      assert.equal(first.metadata.labels?.['kubevirt.io/vm'], name);
      assert.equal(first.metadata.labels?.['kubevirt.io/size'], 'small', 'the template labels are copied');
      const running = await printable(name, 'Running');
      assert.equal(running.status?.created, true);
      assert.equal(running.status?.conditions?.some((c) => c.type === 'RestartRequired'), false, 'the VMI as stored is the template: no restart required');
      await suite.eventually('VM ready', async () => ((await vm(name))?.status?.ready === true ? true : undefined));
      const [, row] = await getVm(name);
      assert.deepEqual([row?.[2], row?.[3]], ['Running', 'True']);

      // stop: runStrategy Always → Halted, the VMI goes gracefully and its pod with it.
      const stop = await ctl('stop', 'vm', name);
      assert.equal(stop.code, 0, stop.stderr);
      await suite.waitForGone(name);
      await suite.waitForPodsGone(first);
      await printable(name, 'Stopped', 30_000);

      // start again, then restart: the same VM, a new VMI.
      const restartAt = Date.now();
      assert.equal((await ctl('start', 'vm', name)).code, 0);
      const second = await runningVmi(name, first.metadata.uid);
      await suite.waitForGuestReady(second);
      const startAgainMs = Date.now() - restartAt;
      const restartedAt = Date.now();
      const restart = await ctl('restart', 'vm', name);
      assert.equal(restart.code, 0, restart.stderr);
      const third = await runningVmi(name, second.metadata.uid);
      await suite.waitForGuestReady(third);
      const restartMs = Date.now() - restartedAt;
      await suite.waitForPodsGone(second);
      assert.deepEqual(third.spec, second.spec, 'the restart keeps the template spec');
      await printable(name, 'Running');
      assert.equal((await vm(name))?.status?.stateChangeRequests, undefined, 'the restart requests are done');
      const events = await vmEvents(name);
      assert.ok(events.filter((e) => e === 'Normal SuccessfulCreate').length >= 1 && events.includes('Normal SuccessfulDelete'), events.join(', '));
      t.diagnostic(`fresh VM start to guest ready ${freshBootMs} ms; start after stop ${startAgainMs} ms; restart ${restartMs} ms`);

      // kubectl delete vm: the VM is Terminating while it stops its VMI (its finalizer holds it),
      // then goes; the VMI's pod goes with the VMI.
      assert.equal((await suite.kubectl(['delete', 'vm', name, '--wait=false'])).code, 0);
      await printable(name, 'Terminating', 30_000);
      await suite.eventually('VM gone', async () => ((await vm(name)) === undefined ? true : undefined), 60_000);
      assert.equal(await suite.vmi(name), undefined, 'the VMI went before the VM');
      await suite.waitForPodsGone(third);
    });

    test('RerunOnFailure: qemu killed → a new VMI at once (it had run); kubectl patch of a Stop request stops it, of runStrategy starts it; stop --force --grace-period 0', async (t) => {
      const name = 'vm-rerun';
      await suite.apply(vmManifest(name, 'RerunOnFailure'));
      const first = await runningVmi(name);
      await suite.waitForGuestReady(first);
      const [qemu] = await suite.qemuPids(name);
      assert.ok(qemu !== undefined, 'qemu runs the guest');
      const killedAt = Date.now();
      process.kill(qemu, 'SIGKILL');
      const second = await runningVmi(name, first.metadata.uid);
      await suite.waitForGuestReady(second);
      t.diagnostic(`qemu killed to a new guest ready ${Date.now() - killedAt} ms`);
      const status = (await vm(name))?.status;
      assert.equal(status?.startFailure, undefined, 'a VMI that ran is not a start failure: no back-off');

      // kubectl patch as KubeVirt's stop subresource writes it: a Stop request naming the VMI.
      const patch = JSON.stringify({ status: { stateChangeRequests: [{ action: 'Stop', uid: second.metadata.uid }] } });
      const patched = await suite.kubectl(['patch', 'vm', name, '--subresource=status', '--type=merge', '-p', patch]);
      assert.equal(patched.code, 0, patched.stderr);
      await suite.waitForGone(name);
      await printable(name, 'Stopped', 60_000);
      // and runStrategy through a plain spec patch.
      const always = await suite.kubectl(['patch', 'vm', name, '--type=merge', '-p', '{"spec":{"runStrategy":"Always"}}']);
      assert.equal(always.code, 0, always.stderr);
      const third = await runningVmi(name, second.metadata.uid);
      // A forced stop: the VMI's grace period is shortened first (podvirt-api lets that one spec
      // change through), then the strategy turns Halted.
      const forced = await ctl('stop', 'vm', name, '--force', '--grace-period', '0');
      assert.equal(forced.code, 0, forced.stderr);
      const stopping = await suite.vmi(name);
      assert.ok(stopping === undefined || stopping.spec.terminationGracePeriodSeconds === 0, `grace period ${String(stopping?.spec.terminationGracePeriodSeconds)}`);
      assert.equal((await vm(name))?.spec.runStrategy, 'Halted');
      await suite.waitForGone(name);
      await suite.waitForPodsGone(third);
      await printable(name, 'Stopped', 30_000);
      assert.equal((await suite.kubectl(['delete', 'vm', name, '--wait=false'])).code, 0);
      await suite.eventually('VM gone', async () => ((await vm(name)) === undefined ? true : undefined), 30_000);
    });

    test('the guest powers off: Stopped under RerunOnFailure, a new VMI under Always', async () => {
      const name = 'vm-off';
      await suite.apply(vmManifest(name, 'RerunOnFailure'));
      const first = await runningVmi(name);
      await suite.waitForGuestReady(first);
      await powerOff(name);
      await suite.waitForGone(name);
      const stopped = await printable(name, 'Stopped', 60_000);
      assert.equal(stopped.status?.created, false);
      assert.equal(await suite.vmi(name), undefined, 'a clean shutdown is not restarted under RerunOnFailure');
      const events = await vmEvents(name);
      assert.equal(events.filter((e) => e === 'Normal SuccessfulCreate').length, 1, events.join(', '));

      const always = await suite.kubectl(['patch', 'vm', name, '--type=merge', '-p', '{"spec":{"runStrategy":"Always"}}']);
      assert.equal(always.code, 0, always.stderr);
      const second = await runningVmi(name, first.metadata.uid);
      await suite.waitForGuestReady(second);
      await powerOff(name);
      const third = await runningVmi(name, second.metadata.uid);
      assert.notEqual(third.metadata.uid, second.metadata.uid, 'Always brings it back');
      assert.equal((await suite.kubectl(['delete', 'vm', name, '--wait=false'])).code, 0);
      await suite.waitForGone(name);
      await suite.waitForPodsGone(third);
    });
  });

  test('an invalid VM is refused at admission naming the field (both lanes call podvirt-api); no VMI is made', async () => {
    const name = 'vm-bad';
    const manifest = vmManifest(name, 'Always') as { spec: Record<string, unknown> };
    manifest.spec['running'] = true;
    // podvirt-api's webhook runs validateVm before the VM is stored, as KubeVirt's admission does.
    const refused = await suite.kubectl(['apply', '-f', '-'], JSON.stringify(manifest));
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /spec\.running: Invalid value/);
    assert.equal(await vm(name), undefined, 'nothing stored');
    assert.equal(await suite.vmi(name), undefined);
  });

  test('podvirt-controller SIGKILLed as it starts a VM, then started again: one VMI, its guest booted once, the VM Running', async () => {
    const name = 'vm-kill';
    await suite.apply(vmManifest(name, 'Always'));
    // Killed as soon as the VMI exists: the guest has not booted, the VM's status may not be written.
    const made = await suite.eventually('VMI made', () => suite.vmi(name), 60_000);
    suite.stack.controller.kill('SIGKILL');
    assert.equal((await suite.stack.controller.exited).signal, 'SIGKILL');
    const command = suite.stack.controllerCommand;
    restarted = new StackProcess({ name: 'controller', argv: command.argv, env: { ...process.env, ...command.env } });
    await suite.eventually('controller started again', () => Promise.resolve(restarted?.lines.some((l) => l.msg === 'controller started') === true ? true : undefined), 60_000);
    const running = await runningVmi(name);
    await suite.waitForGuestReady(running);
    assert.equal(running.metadata.uid, made.metadata.uid, 'the one VMI, not a second');
    assert.equal(suite.phasesSeen(name).filter((p) => p === 'Running').length, 1, 'Running once: the guest was not started twice');
    const vmNow = await printable(name, 'Running');
    assert.deepEqual(vmNow.metadata.finalizers, ['kubevirt.io/virtualMachineControllerFinalize']);
    // The VMI's creation Event is posted after the create answered; the SIGKILL right after it may
    // take it with it (an Event is best effort, as KubeVirt's recorder). The one VMI is the uid
    // above; no second creation is the bound.
    const created = (await vmEvents(name)).filter((e) => e === 'Normal SuccessfulCreate').length;
    assert.ok(created <= 1, `at most one SuccessfulCreate Event: ${created}`);
    assert.equal((await suite.kubectl(['delete', 'vm', name, '--timeout=120s'])).code, 0);
    await suite.waitForGone(name);
    await suite.waitForPodsGone(running);
  });
});
