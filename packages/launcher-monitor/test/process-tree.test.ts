import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ProcessTree } from '../src/process-tree.js';
import { makeTempDir } from './helpers/monitor-process.js';

// stat line fields after comm: state ppid pgrp session tty tpgid flags minflt cminflt majflt
// cmajflt utime stime cutime cstime priority nice threads itrealvalue starttime …
function statLine(pid: number, comm: string, state: string, ppid: number, start: number): string {
  return `${pid} (${comm}) ${state} ${ppid} 0 0 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 ${start} 0 0\n`;
}

function fakeProc(dir: string, procs: { pid: number; comm: string; state?: string; ppid: number; children?: number[] }[], withChildren: boolean): void {
  for (const p of procs) {
    const task = join(dir, String(p.pid), 'task', String(p.pid));
    mkdirSync(task, { recursive: true });
    writeFileSync(join(dir, String(p.pid), 'stat'), statLine(p.pid, p.comm, p.state ?? 'S', p.ppid, 1000 + p.pid));
    if (withChildren) writeFileSync(join(task, 'children'), (p.children ?? []).map((c) => `${c} `).join(''));
  }
}

const PROCS = [
  { pid: 1, comm: 'node', ppid: 0, children: [10, 11] },
  { pid: 10, comm: 'sh', ppid: 1, children: [20] },
  { pid: 11, comm: 'qemu-system-x86', ppid: 1 },
  { pid: 20, comm: 'weird) (name', state: 'Z', ppid: 10 },
];

test('parses stat lines, including a comm with spaces and parentheses', (t) => {
  const dir = makeTempDir(t);
  fakeProc(dir, PROCS, true);
  const tree = new ProcessTree(dir);
  assert.deepEqual(tree.stat(20), { pid: 20, comm: 'weird) (name', state: 'Z', ppid: 10, startTime: 1020 });
  assert.equal(tree.stat(99), undefined);
});

test('lists children and descendants from the per-thread children files', (t) => {
  const dir = makeTempDir(t);
  fakeProc(dir, PROCS, true);
  const tree = new ProcessTree(dir);
  assert.deepEqual(tree.children(1).sort(), [10, 11]);
  assert.deepEqual(tree.descendants(1), [10, 11, 20]);
  assert.deepEqual(tree.children(99), []);
});

test('falls back to scanning stat files where the kernel has no children files', (t) => {
  const dir = makeTempDir(t);
  fakeProc(dir, PROCS, false);
  symlinkSync('1', join(dir, 'self'));
  const tree = new ProcessTree(dir);
  assert.deepEqual(tree.children('self').sort(), [10, 11]);
  assert.deepEqual(tree.descendants(1), [10, 11, 20]);
});

test('sees this process its real children through /proc', async (t) => {
  const child = spawn('sleep', ['5'], { stdio: 'ignore' });
  t.after(() => child.kill('SIGKILL'));
  const tree = new ProcessTree();
  assert.ok(child.pid !== undefined);
  assert.ok(tree.children('self').includes(child.pid));
  assert.equal(tree.stat(child.pid)?.ppid, process.pid);
  child.kill('SIGKILL');
  await once(child, 'exit');
  assert.ok(!tree.children('self').includes(child.pid));
});
