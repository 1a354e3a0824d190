// The handler's node API on the testbed with a real VM, driven by the real podvirtctl: pause
// and unpause show as the Paused condition with Events; freeze and unfreeze as fsFreezeStatus,
// an unfreeze timeout thaws by itself; a soft reboot reboots the guest (a new boot_id on its
// serial console) while the VMI stays Running. Precise errors for a missing VMI and for one on
// another node; /metrics phase counts match kubectl's view; the heartbeat labels the node and
// a SIGTERMed handler exits 0, leaving the node unschedulable and the VM running.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import type { VirtualMachineInstance } from '@podvirt/api';
import { metricsPort, nodeApiSocket, nodeApiStatus, phaseCounts, podvirtctl, scrape, serialLines, startOtherHandler } from './handler-node.js';
import { guestVmi, NS, VmiSuite } from './vmi-stack.js';

const VM = 'vm-ops';

describe('handler node API on the testbed', () => {
  const suite = VmiSuite.setUp({
    beforeClose: async (s) => {
      await s.kubectl(['delete', 'vmi', '--all', '--wait=false']);
      await s.waitForGone(VM).catch(() => undefined);
    },
  });
  let vmi: VirtualMachineInstance;
  let socket: string;
  const condition = async (type: string) => (await suite.vmi(VM))?.status?.conditions?.find((c) => c.type === type);
  const reasons = async () => (await suite.events(VM)).map((e) => e.reason);

  before(async () => {
    socket = nodeApiSocket(suite.stack);
    await suite.apply(guestVmi(suite.guest, VM));
    vmi = await suite.waitForPhase(VM, 'Running');
    await suite.waitForGuestReady(vmi);
    await suite.eventually('AgentConnected', () => condition('AgentConnected'));
  });

  test('pause → condition Paused (PausedByUser) + Event Paused; unpause clears it + Event Unpaused', async () => {
    const paused = await podvirtctl(socket, 'pause', `${NS}/${VM}`);
    assert.equal(paused.code, 0, paused.stderr);
    const cond = await suite.eventually('Paused condition', () => condition('Paused'));
    assert.equal(cond.reason, 'PausedByUser');
    await suite.eventually('Paused event', async () => ((await reasons()).includes('Paused') ? true : undefined));
    const again = await podvirtctl(socket, 'pause', `${NS}/${VM}`);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /already paused/);

    const unpaused = await podvirtctl(socket, 'unpause', VM, '-n', NS);
    assert.equal(unpaused.code, 0, unpaused.stderr);
    await suite.eventually('Paused condition gone', async () => ((await condition('Paused')) === undefined ? true : undefined));
    await suite.eventually('Unpaused event', async () => ((await reasons()).includes('Unpaused') ? true : undefined));
    assert.equal((await suite.vmi(VM))?.status?.phase, 'Running');
  });

  test('freeze → fsFreezeStatus frozen; unfreeze thaws; an unfreeze timeout thaws by itself', async () => {
    const frozen = await podvirtctl(socket, 'freeze', `${NS}/${VM}`, '--unfreeze-timeout', '0s');
    assert.equal(frozen.code, 0, frozen.stderr);
    await suite.eventually('frozen', async () => ((await suite.vmi(VM))?.status?.fsFreezeStatus === 'frozen' ? true : undefined));
    const thawed = await podvirtctl(socket, 'unfreeze', `${NS}/${VM}`);
    assert.equal(thawed.code, 0, thawed.stderr);
    await suite.eventually('thawed', async () => ((await suite.vmi(VM))?.status?.fsFreezeStatus === undefined ? true : undefined));

    const timed = await podvirtctl(socket, 'freeze', `${NS}/${VM}`, '--unfreeze-timeout', '3s');
    assert.equal(timed.code, 0, timed.stderr);
    await suite.eventually('frozen again', async () => ((await suite.vmi(VM))?.status?.fsFreezeStatus === 'frozen' ? true : undefined));
    const frozenAt = Date.now();
    await suite.eventually('thawed by itself', async () => ((await suite.vmi(VM))?.status?.fsFreezeStatus === undefined ? true : undefined), 30_000);
    assert.ok(Date.now() - frozenAt >= 1_000, 'not thawed at once');
    assert.ok(!(await reasons()).includes('FreezeError'));
  });

  test('soft reboot → the guest boots again (new boot_id) and the VMI stays Running', async () => {
    const log = suite.serialLog(vmi, Object.keys(vmi.status?.activePods ?? {})[0] ?? '');
    const bootIds = async () => (await serialLines(log, suite.guest.readyMarker)).map((l) => /boot_id=(\S+)/.exec(l)?.[1]);
    const before = await bootIds();
    assert.equal(before.length, 1);
    const rebooted = await podvirtctl(socket, 'soft-reboot', `${NS}/${VM}`);
    assert.equal(rebooted.code, 0, rebooted.stderr);
    const after = await suite.eventually('second ready marker', async () => {
      const ids = await bootIds();
      return ids.length >= 2 ? ids : undefined;
    }, 120_000);
    assert.notEqual(after[1], after[0], 'a new boot_id');
    await suite.eventually('SoftRebooted event', async () => ((await reasons()).includes('SoftRebooted') ? true : undefined));
    assert.equal((await suite.vmi(VM))?.status?.phase, 'Running');
    assert.deepEqual(suite.phasesSeen(VM).slice(-1), ['Running'], 'never left Running');
  });

  test('a missing VMI is NOT_FOUND; a VMI on another node is refused naming its node', async () => {
    const missing = await podvirtctl(socket, 'pause', `${NS}/no-such-vmi`);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /^error: VMI default\/no-such-vmi not found\n/);
    assert.deepEqual(await nodeApiStatus(socket, 'pause', { namespace: NS, name: 'no-such-vmi' }), { code: 'NOT_FOUND', details: 'VMI default/no-such-vmi not found' });

    const other = await startOtherHandler(suite.stack, 'node-b');
    try {
      const refused = await suite.eventually('other handler answering', async () => {
        const r = await podvirtctl(other.socket, 'pause', `${NS}/${VM}`);
        return r.code === 3 ? undefined : r;
      });
      assert.equal(refused.code, 1, refused.stderr);
      assert.match(refused.stderr, new RegExp(`runs on node ${suite.stack.nodeName}, not on node-b`));
      const raw = await nodeApiStatus(other.socket, 'guestOsInfo', { namespace: NS, name: VM });
      assert.equal(raw.code, 'FAILED_PRECONDITION');
      assert.equal(raw.details, `VMI ${NS}/${VM} runs on node ${suite.stack.nodeName}, not on node-b; ask the handler on ${suite.stack.nodeName}`);
      const list = await podvirtctl(other.socket, 'list', '-A', '-o', 'json');
      assert.equal(list.code, 0, list.stderr);
      assert.doesNotMatch(list.stdout, new RegExp(VM), 'another node lists none of this node\'s VMIs');
    } finally {
      await other.close();
    }
    assert.equal((await condition('Paused')), undefined, 'nothing else disturbed');
  });

  test('/metrics phase counts match kubectl get vmi', async () => {
    await suite.apply(guestVmi(suite.guest, 'vm-ops-2'));
    await suite.waitForPhase('vm-ops-2', 'Running');
    const port = metricsPort(suite.stack.handler);
    assert.ok(port !== undefined, suite.stack.handler.tail(10));
    const kubectlCounts = async (): Promise<Record<string, number>> => {
      const out = await suite.kubectl(['get', 'vmi', '-A', '-o', 'json']);
      assert.equal(out.code, 0, out.stderr);
      const counts: Record<string, number> = {};
      for (const item of (JSON.parse(out.stdout) as { items: VirtualMachineInstance[] }).items) {
        if (item.status?.nodeName !== suite.stack.nodeName) continue;
        const phase = (item.status.phase ?? '').toLowerCase();
        counts[phase] = (counts[phase] ?? 0) + 1;
      }
      return counts;
    };
    const table = await suite.kubectl(['get', 'vmi', '-A']);
    assert.deepEqual(await kubectlCounts(), { running: 2 }, `${table.stdout}\n${suite.diagnostics()}`);
    const metrics = await scrape(port);
    assert.equal(metrics.status, 200);
    assert.deepEqual(phaseCounts(metrics.body, suite.stack.nodeName), await kubectlCounts());
    assert.match(metrics.body, /podvirt_handler_launcher_call_duration_seconds_count\{method="Pause",code="OK"\} 1/);
    assert.match(metrics.body, /podvirt_handler_node_api_requests_total\{method="Pause",code="NOT_FOUND"\} 2/);
  });

  test('heartbeat labels the node; SIGTERM → exit 0, node unschedulable, VMs keep running; a new handler takes over', async () => {
    const schedulable = async (): Promise<string | undefined> =>
      (await suite.core.readNode({ name: suite.stack.nodeName })).metadata?.labels?.['kubevirt.io/schedulable'];
    const node = await suite.core.readNode({ name: suite.stack.nodeName });
    assert.equal(node.metadata?.labels?.['kubevirt.io/schedulable'], 'true');
    assert.match(node.metadata?.annotations?.['kubevirt.io/heartbeat'] ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    const qemu = await suite.qemuPids(VM);
    assert.equal(qemu.length, 1);

    const handler = suite.stack.handler;
    handler.kill('SIGTERM');
    assert.deepEqual(await handler.exited, { code: 0, signal: null }, handler.tail(10));
    assert.equal(await schedulable(), 'false');
    assert.deepEqual(await suite.qemuPids(VM), qemu, 'the VM keeps running');

    const next = await suite.stack.restartHandler();
    await suite.eventually('schedulable again', async () => ((await schedulable()) === 'true' ? true : undefined));
    assert.ok(next.lines.some((l) => l.msg === 'ghost records loaded' && l['records'] === 2), next.tail(10));
    const paused = await podvirtctl(socket, 'pause', `${NS}/${VM}`);
    assert.equal(paused.code, 0, paused.stderr);
    assert.equal((await podvirtctl(socket, 'unpause', `${NS}/${VM}`)).code, 0);
    assert.equal((await suite.vmi(VM))?.status?.phase, 'Running');
  });
});
