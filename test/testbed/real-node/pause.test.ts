// images/pause/pause.c, the real node's sandbox process, compiled as scripts/images does: it
// waits, exits 0 on SIGTERM and on SIGINT, and as PID 1 of a PID namespace reaps the orphans that
// land on it.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { eventually } from '@podvirt/test-support';
import { repoRoot } from '../guest/repo-root.js';
import { runCommand } from '../sandbox/run-command.js';

const exited = (child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> =>
  new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));

/** /proc/<pid>/status fields. */
async function status(pid: number): Promise<Record<string, string>> {
  const text = await readFile(`/proc/${pid}/status`, 'utf8');
  return Object.fromEntries(text.split('\n').map((l) => l.split(':\t')).filter((kv) => kv.length === 2).map(([k, v]) => [k, (v ?? '').trim()]));
}

async function childrenOf(pid: number): Promise<number[]> {
  const text = await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8').catch(() => '');
  return text.trim().split(/\s+/).filter((s) => s !== '').map(Number);
}

describe('podvirt/pause', () => {
  let dir = '';
  let pause = '';
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'podvirt-pause-'));
    pause = join(dir, 'pause');
    const cc = await runCommand(['gcc', '-static', '-Os', '-s', '-Wall', '-Wextra', '-Werror', '-o', pause, join(repoRoot(import.meta.url), 'images/pause/pause.c')], { timeoutMs: 120_000 });
    assert.equal(cc.code, 0, cc.stderr);
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    test(`waits until ${signal}, then exits 0`, async () => {
      const child = spawn(pause, [], { stdio: 'ignore' });
      const done = exited(child);
      const pid = child.pid ?? 0;
      // Asleep in sigsuspend, not exited: the state is S.
      await eventually(async () => (await status(pid))['State']?.startsWith('S') === true, { what: 'pause asleep', deadlineMs: 10_000 });
      child.kill(signal);
      assert.deepEqual(await done, { code: 0, signal: null });
    });
  }

  test('as PID 1 of a PID namespace it reaps the orphans handed to it', async () => {
    const unshare = spawn('unshare', ['--pid', '--fork', '--kill-child', pause], { stdio: 'ignore' });
    const done = exited(unshare);
    let pid = 0;
    try {
      pid = await eventually(async () => (await childrenOf(unshare.pid ?? 0))[0], { what: 'pause under unshare', deadlineMs: 10_000 });
      assert.equal((await status(pid))['NSpid']?.split(/\s+/).pop(), '1');
      // A subshell that starts a short sleep and exits at once: the sleep is orphaned onto pause
      // (its output elsewhere, so that nsenter's pipes close without waiting for it).
      const orphan = await runCommand(['nsenter', '-t', String(pid), '-p', '--', 'sh', '-c', '(sleep 2 </dev/null >/dev/null 2>&1 &); exit 0']);
      assert.equal(orphan.code, 0, orphan.stderr);
      const adopted = await childrenOf(pid);
      assert.equal(adopted.length, 1, 'the orphaned sleep is pause\'s child');
      // Once the sleep ends, pause waits for it: no zombie stays.
      await eventually(async () => (await childrenOf(pid)).length === 0, { what: 'the orphan reaped', deadlineMs: 10_000 });
      assert.equal((await status(pid))['State']?.startsWith('S'), true);
    } finally {
      // unshare ignores SIGTERM while it waits for its child: stop pause, and unshare follows.
      if (pid !== 0) process.kill(pid, 'SIGTERM');
      else unshare.kill('SIGKILL');
      await done;
    }
  });
});
