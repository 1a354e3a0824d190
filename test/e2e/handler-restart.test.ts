// No VM is lost because the handler died: three VMIs run, the handler is SIGKILLed, the guests
// keep running (their serial heartbeats advance), a fourth VMI is created and one of the three
// deleted while no handler runs; the restarted handler re-adopts the two survivors (same qemu,
// still Running, still controllable), brings the new one to Running, and cleans up after the
// deleted one — its ghost record included.
import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, test } from 'node:test';
import type { VirtualMachineInstance } from '@podvirt/api';
import { ghostRecordDir, nodeApiSocket, podvirtctl, serialLines } from './handler-node.js';
import { guestVmi, NS, VmiSuite } from './vmi-stack.js';

const SURVIVORS = ['vm-keep-1', 'vm-keep-2'];
const DOOMED = 'vm-doomed';
const LATE = 'vm-late';

describe('handler restart on the testbed', () => {
  const suite = VmiSuite.setUp({
    beforeClose: async (s) => {
      await s.kubectl(['delete', 'vmi', '--all', '--wait=false']);
      for (const name of [...SURVIVORS, DOOMED, LATE]) await s.waitForGone(name).catch(() => undefined);
    },
  });

  test('SIGKILL, changes while down, restart: survivors re-adopted, new VMI runs, deleted VMI cleaned up', async () => {
    await suite.apply(...[...SURVIVORS, DOOMED].map((name) => guestVmi(suite.guest, name, { gracePeriodSeconds: 20 })));
    const running = new Map<string, VirtualMachineInstance>();
    for (const name of [...SURVIVORS, DOOMED]) {
      const vmi = await suite.waitForPhase(name, 'Running');
      await suite.waitForGuestReady(vmi);
      running.set(name, vmi);
    }
    const uid = (name: string): string => running.get(name)?.metadata.uid ?? '';
    const records = async () => (await readdir(ghostRecordDir(suite.stack)).catch(() => [])).filter((f) => !f.startsWith('.')).sort();
    assert.deepEqual(await records(), [...SURVIVORS, DOOMED].map(uid).sort(), 'one ghost record per running VMI');
    const qemu = new Map<string, number[]>();
    for (const name of running.keys()) qemu.set(name, await suite.qemuPids(name));

    const killed = suite.stack.handler;
    killed.kill('SIGKILL');
    assert.equal((await killed.exited).signal, 'SIGKILL');

    const heartbeats = async (name: string): Promise<number> => {
      const vmi = running.get(name) ?? assert.fail(name);
      return (await serialLines(suite.serialLog(vmi, Object.keys(vmi.status?.activePods ?? {})[0] ?? ''), suite.guest.heartbeatMarker)).length;
    };
    const beatsBefore = await Promise.all([...running.keys()].map(heartbeats));
    await suite.apply(guestVmi(suite.guest, LATE));
    assert.equal((await suite.kubectl(['delete', 'vmi', DOOMED, '--wait=false'])).code, 0);
    // The guests print a heartbeat every 5 s: wait for at least one more while no handler runs.
    await sleep(6_000);
    const beatsDown = await Promise.all([...running.keys()].map(heartbeats));
    beatsDown.forEach((n, i) => assert.ok(n > (beatsBefore[i] ?? 0), `guest ${[...running.keys()][i]} kept running (${beatsBefore[i]} → ${n})`));
    assert.notEqual((await suite.vmi(LATE))?.status?.phase, 'Running', 'nobody brings a VMI to Running without a handler');

    await suite.stack.restartHandler();
    await suite.waitForPhase(LATE, 'Running');
    await suite.waitForGone(DOOMED, 120_000);
    await suite.eventually('no qemu of the deleted VMI', async () => ((await suite.qemuPids(DOOMED)).length === 0 ? true : undefined));

    for (const name of SURVIVORS) {
      const vmi = await suite.vmi(name);
      assert.equal(vmi?.status?.phase, 'Running', `${name} still Running`);
      assert.deepEqual(suite.phasesSeen(name).slice(-1), ['Running'], `${name} never left Running`);
      assert.deepEqual(await suite.qemuPids(name), qemu.get(name), `${name} runs the same qemu`);
    }
    const socket = nodeApiSocket(suite.stack);
    for (const name of SURVIVORS) {
      const paused = await podvirtctl(socket, 'pause', `${NS}/${name}`);
      assert.equal(paused.code, 0, `${paused.stderr}\n${suite.diagnostics()}`);
      await suite.eventually(`${name} Paused`, async () => (await suite.vmi(name))?.status?.conditions?.find((c) => c.type === 'Paused'));
      const unpaused = await podvirtctl(socket, 'unpause', `${NS}/${name}`);
      assert.equal(unpaused.code, 0, unpaused.stderr);
    }
    const late = (await suite.vmi(LATE))?.metadata.uid ?? '';
    await suite.eventually('ghost records of the living VMIs only', async () => {
      const now = await records();
      return now.join() === [...SURVIVORS.map(uid), late].sort().join() ? true : undefined;
    });
    const restartedLog = suite.stack.handler.lines.find((l) => l.msg === 'ghost records loaded');
    assert.equal(restartedLog?.['records'], 3, 'the restarted handler loaded the three records');
  });
});
