// The reaper inside this test process, with the real addon: the process makes itself a
// subreaper (node --test gives every file its own process), so double-forked children
// re-parent here, exactly as qemu does under the monitor.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { before, test } from 'node:test';
import type { TestContext } from 'node:test';
import { loadNativeBinding } from '../src/native-binding.js';
import type { NativeBinding } from '../src/native-binding.js';
import { ProcessTree } from '../src/process-tree.js';
import { Reaper } from '../src/reaper.js';
import type { ReapedChild } from '../src/reaper.js';
import { killQuietly } from './helpers/monitor-process.js';
import { eventually } from '@podvirt/test-support';

const binding = loadNativeBinding();
const tree = new ProcessTree();

before(() => {
  binding.setChildSubreaper();
});

function spawnOwned(t: TestContext, owned: Set<number>, script: string): ChildProcess {
  const child = spawn('sh', ['-c', script], { stdio: 'ignore' });
  assert.ok(child.pid !== undefined);
  owned.add(child.pid);
  t.after(() => killQuietly(child.pid ?? 0));
  return child;
}

function orphans(count: number, seconds: number): string {
  return `i=0; while [ $i -lt ${count} ]; do (sleep ${seconds} &); i=$((i + 1)); done`;
}

test('becomes a child subreaper', () => {
  assert.equal(binding.isChildSubreaper(), true);
});

test('reaps every orphan and reports what it was', async (t) => {
  const owned = new Set<number>();
  const reaper = new Reaper({ binding, tree, isOwned: (pid) => owned.has(pid) });
  const parent = spawnOwned(t, owned, orphans(20, 0.05));
  await once(parent, 'exit');
  const reaped: ReapedChild[] = [];
  await eventually(() => {
    reaped.push(...reaper.sweep());
    return reaped.length >= 20;
  }, { what: '20 orphans reaped', deadlineMs: 10_000 });
  assert.equal(reaped.length, 20);
  assert.ok(reaped.every((c) => c.comm === 'sleep' && c.code === 'exited' && c.status === 0));
  assert.deepEqual(tree.children('self').filter((pid) => tree.stat(pid)?.state === 'Z'), []);
});

test('never collects a child libuv waits for, even when its zombie hides the orphans', async (t) => {
  const owned = new Set<number>();
  const perPidPeeks: number[] = [];
  const spy: NativeBinding = { ...binding, peekExited: (pid) => (pid !== undefined && perPidPeeks.push(pid), binding.peekExited(pid)) };
  const reaper = new Reaper({ binding: spy, tree, isOwned: (pid) => owned.has(pid) });

  // Spawned first, so its zombie comes first in the kernel's list of children.
  const launcher = spawnOwned(t, owned, 'exit 9');
  const exited = once(launcher, 'exit');
  spawnOwned(t, owned, orphans(5, 0.01));
  // Block the event loop so that libuv cannot collect either owned child meanwhile.
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 700);
  assert.ok(launcher.pid !== undefined && binding.peekExited(launcher.pid) !== undefined, 'launcher is a zombie');

  const reaped = reaper.sweep();
  assert.equal(reaped.length, 5);
  assert.ok(reaped.every((c) => c.comm === 'sleep' && !owned.has(c.pid)));
  assert.ok(perPidPeeks.length > 0, 'looked past the owned zombie pid by pid');
  assert.deepEqual(await exited, [9, null]);
});

test('a sweep on every SIGCHLD keeps up with orphans exiting beside a spawned child', async (t) => {
  const owned = new Set<number>();
  const reaper = new Reaper({ binding, tree, isOwned: (pid) => owned.has(pid) });
  const reaped: ReapedChild[] = [];
  const onChild = (): void => void reaped.push(...reaper.sweep());
  process.on('SIGCHLD', onChild);
  t.after(() => process.off('SIGCHLD', onChild));

  const launcher = spawnOwned(t, owned, `${orphans(40, 0.2)}; sleep 0.2; exit 5`);
  assert.deepEqual(await once(launcher, 'exit'), [5, null]);
  await eventually(() => reaped.length >= 40, { what: '40 orphans reaped', deadlineMs: 10_000 });
  assert.equal(reaped.length, 40);
});

test('an idle sweep reaps nothing and leaves running children alone', async (t) => {
  const owned = new Set<number>();
  const reaper = new Reaper({ binding, tree, isOwned: (pid) => owned.has(pid) });
  const running = spawnOwned(t, owned, 'sleep 5');
  owned.delete(running.pid ?? 0); // even an unowned child is only reaped once it has exited
  assert.deepEqual(reaper.sweep(), []);
  assert.equal(binding.reap(running.pid ?? 0), undefined);
  assert.equal(binding.peekExited(running.pid ?? 0), undefined);
  owned.add(running.pid ?? 0);
  running.kill('SIGKILL');
  assert.deepEqual(await once(running, 'exit'), [null, 'SIGKILL']);
});

test('the addon rejects pids that are not positive integers', () => {
  assert.throws(() => binding.reap(0), TypeError);
  assert.throws(() => binding.reap(-1), TypeError);
  assert.throws(() => binding.peekExited(Number.NaN), TypeError);
});
