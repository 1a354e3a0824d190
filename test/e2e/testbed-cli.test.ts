// `testbed up` / `testbed down` as a user runs them: background processes, a kubeconfig,
// a pod running, and nothing left behind afterwards.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { eventually } from '@podvirt/test-support';
import { repoRoot } from '../testbed/guest/repo-root.js';
import { kubectl } from './testbed-helpers.js';

const bin = join(repoRoot(fileURLToPath(import.meta.url)), 'test/testbed/bin/testbed');

function testbed(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(bin, args, { timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : 1, stdout, stderr });
    });
  });
}

async function pids(stateDir: string): Promise<number[]> {
  const files = (await readdir(stateDir)).filter((f) => f.endsWith('.pid'));
  return Promise.all(files.map(async (f) => Number((await readFile(join(stateDir, f), 'utf8')).trim())));
}

async function isRunning(pid: number): Promise<boolean> {
  try {
    return !/^\d+ \(.*\) Z /.test(await readFile(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

test('testbed up starts the components in the background; testbed down leaves nothing behind', async (t) => {
  const parent = await mkdtemp(join(tmpdir(), 'podvirt-cli-'));
  t.after(() => rm(parent, { recursive: true, force: true }));
  const stateDir = join(parent, 'state');
  const up = await testbed(['up', '--state-dir', stateDir]);
  t.after(() => testbed(['down', '--state-dir', stateDir]));
  assert.equal(up.code, 0, up.stderr);
  const kubeconfig = join(stateDir, 'kubeconfig');
  assert.equal(up.stdout, `export KUBECONFIG=${kubeconfig}\n`);
  const running = await pids(stateDir);
  assert.equal(running.length, 3);
  assert.equal((await testbed(['up', '--state-dir', stateDir])).code, 1, 'a second up refuses');

  const pod = JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'sleeper' }, spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox', command: ['sh', '-c', 'echo hi; sleep 317'] }] } });
  assert.equal((await kubectl(kubeconfig, ['apply', '-f', '-'], pod)).code, 0);
  await eventually(async () => ((await kubectl(kubeconfig, ['get', 'pod', 'sleeper', '-o', 'jsonpath={.status.phase}'])).stdout === 'Running' ? true : undefined), { what: 'pod running', deadlineMs: 20_000 });
  assert.equal((await kubectl(kubeconfig, ['logs', 'sleeper'])).stdout.split('\n')[0], 'hi');
  const podDirs = await readdir(join(stateDir, 'kubelet', 'pods'));
  assert.equal(podDirs.length, 1);

  const down = await testbed(['down', '--state-dir', stateDir]);
  assert.equal(down.code, 0, down.stderr);
  assert.equal(existsSync(stateDir), false);
  // This machine's PID 1 does not reap orphans, so an exited daemon may linger as a zombie.
  for (const pid of running) assert.equal(await isRunning(pid), false, `pid ${pid} is gone`);
  const mounts = await readFile('/proc/self/mountinfo', 'utf8');
  assert.equal(mounts.includes(parent), false);
  const { stdout } = await new Promise<{ stdout: string }>((resolve) => execFile('ps', ['-eo', 'args'], (_e, out) => resolve({ stdout: out })));
  // A duration no other test uses: test files run in parallel, and some start `sleep 300`.
  assert.equal(stdout.includes('sleep 317'), false, 'the pod process is gone');
});
