// The qemu-stopping policy against a fake process table whose processes react to signals,
// so that the bound and the escalation are checked without real processes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { JsonLogger } from '../src/json-logger.js';
import { stopLeftoverQemu } from '../src/leftover-qemu.js';
import type { ProcessStat } from '../src/process-tree.js';

interface FakeProc extends ProcessStat {
  diesOn: readonly NodeJS.Signals[];
}

function fakeTable(procs: FakeProc[]) {
  const table = new Map(procs.map((p) => [p.pid, { ...p }]));
  const signals: [number, NodeJS.Signals][] = [];
  return {
    signals,
    tree: {
      descendants: () => [...table.keys()],
      stat: (pid: number): ProcessStat | undefined => table.get(pid),
    },
    kill: (pid: number, signal: NodeJS.Signals) => {
      signals.push([pid, signal]);
      const proc = table.get(pid);
      if (proc === undefined) throw Object.assign(new Error('no such process'), { code: 'ESRCH' });
      if (proc.diesOn.includes(signal)) table.set(pid, { ...proc, state: 'Z' });
    },
  };
}

function proc(pid: number, comm: string, diesOn: NodeJS.Signals[], state = 'S'): FakeProc {
  return { pid, comm, state, ppid: 1, startTime: pid * 10, diesOn };
}

const lines: string[] = [];
const log = new JsonLogger({ bindings: { component: 'test' }, write: (line) => lines.push(line) });

test('does nothing when no qemu is left', async () => {
  const table = fakeTable([proc(5, 'virtlogd', []), proc(6, 'qemu-system-x86', [], 'Z')]);
  assert.equal(await stopLeftoverQemu({ ...table, log, timeoutMs: 1_000 }), 'none');
  assert.deepEqual(table.signals, []);
});

test('SIGTERMs every qemu-system and qemu-kvm process, and only those', async () => {
  const table = fakeTable([proc(5, 'virtlogd', []), proc(6, 'qemu-system-x86', ['SIGTERM']), proc(7, 'qemu-kvm', ['SIGTERM'])]);
  assert.equal(await stopLeftoverQemu({ ...table, log, timeoutMs: 1_000, pollIntervalMs: 5 }), 'terminated');
  assert.deepEqual(table.signals, [[6, 'SIGTERM'], [7, 'SIGTERM']]);
});

test('SIGKILLs only after the bound when qemu ignores SIGTERM', async () => {
  const table = fakeTable([proc(6, 'qemu-system-x86', ['SIGKILL'])]);
  const began = Date.now();
  assert.equal(await stopLeftoverQemu({ ...table, log, timeoutMs: 150, pollIntervalMs: 5 }), 'killed');
  assert.ok(Date.now() - began >= 150);
  assert.deepEqual(table.signals, [[6, 'SIGTERM'], [6, 'SIGKILL']]);
});

test('reports a qemu that survives SIGKILL', async () => {
  const table = fakeTable([proc(6, 'qemu-system-x86', [])]);
  const result = await stopLeftoverQemu({ ...table, log, timeoutMs: 20, killTimeoutMs: 20, pollIntervalMs: 5 });
  assert.equal(result, 'survived');
  assert.ok(lines.some((line) => line.includes('"msg":"qemu survived SIGKILL"')));
});

test('a pid reused by another process counts as stopped', async () => {
  const table = fakeTable([proc(6, 'qemu-system-x86', [])]);
  const tree = {
    ...table.tree,
    stat: (pid: number) => {
      const stat = table.tree.stat(pid);
      // After the SIGTERM the pid belongs to a process started later.
      return stat && table.signals.length > 0 ? { ...stat, startTime: stat.startTime + 1 } : stat;
    },
  };
  assert.equal(await stopLeftoverQemu({ ...table, tree, log, timeoutMs: 1_000, pollIntervalMs: 5 }), 'terminated');
});
