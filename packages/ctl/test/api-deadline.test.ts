// --timeout on the API server's route: a stalled API server (or podvirt-api behind it) ends every
// command that talks to it at the deadline, with an error naming the deadline and the flag.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, mock, test } from 'node:test';
import { ApiTimeoutError, withApiDeadline } from '../src/api-deadline.js';
import { runCli } from '../src/cli.js';

describe('withApiDeadline', () => {
  test('past the deadline: the work\'s signal aborts and the command rejects at once, even if the work ignores it', async () => {
    mock.timers.enable({ apis: ['setTimeout'] });
    try {
      let seen: AbortSignal | undefined;
      const pending = withApiDeadline(new AbortController().signal, 2000, (signal) => {
        seen = signal;
        return new Promise<never>(() => undefined);
      });
      const outcome = pending.then(() => 'resolved', (err: unknown) => err);
      mock.timers.tick(1999);
      assert.equal(seen?.aborted, false);
      mock.timers.tick(1);
      const err = await outcome;
      assert.ok(err instanceof ApiTimeoutError);
      assert.equal(err.code, 'CTL_ERR_API_TIMEOUT');
      assert.equal(err.message, 'no answer from the API server within 2s (--timeout)');
      assert.equal(seen?.aborted, true);
    } finally {
      mock.timers.reset();
    }
  });

  test('the user\'s abort is not a timeout; a result before the deadline is returned', async () => {
    const user = new AbortController();
    const aborted = withApiDeadline(user.signal, 60_000, (signal) => new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(new Error('cancelled')))));
    user.abort();
    await assert.rejects(aborted, (err: unknown) => !(err instanceof ApiTimeoutError) && (err as Error).message === 'cancelled');
    assert.equal(await withApiDeadline(new AbortController().signal, 60_000, () => Promise.resolve(7)), 7);
  });
});

describe('podvirtctl against an API server that never answers', () => {
  let server: Server;
  let dir: string;
  let kubeconfig: string;
  const requests: string[] = [];

  before(async () => {
    // Reads each request and answers nothing.
    server = createServer((req) => requests.push(`${req.method ?? ''} ${req.url ?? ''}`));
    server.on('upgrade', (req) => requests.push(`UPGRADE ${req.url ?? ''}`));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    dir = await mkdtemp(join(tmpdir(), 'podvirtctl-deadline-'));
    kubeconfig = join(dir, 'kubeconfig');
    await writeFile(kubeconfig, JSON.stringify({
      apiVersion: 'v1', kind: 'Config', 'current-context': 't',
      clusters: [{ name: 't', cluster: { server: `http://127.0.0.1:${(server.address() as AddressInfo).port}` } }],
      users: [{ name: 't', user: { token: 'alice' } }],
      contexts: [{ name: 't', context: { cluster: 't', user: 't' } }],
    }));
  });

  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await rm(dir, { recursive: true, force: true });
  });

  for (const argv of [
    ['pause', 'prod/v1'],
    ['guestosinfo', 'prod/v1'],
    ['start', 'vm', 'prod/v1'],
    ['stop', 'vm', 'prod/v1'],
    ['migrate', 'vmi', 'prod/v1'],
    ['addvolume', 'vmi', 'prod/v1', '--volume-name', 'data'],
    ['removevolume', 'vmi', 'prod/v1', '--volume-name', 'data', '--persist'],
  ]) {
    test(`${argv.join(' ')} --timeout 300ms: exit 1 naming the deadline and the flag`, async () => {
      const before = requests.length;
      let stdout = '';
      let stderr = '';
      const code = await runCli({
        argv: [...argv, '--kubeconfig', kubeconfig, '--timeout', '300ms'], env: { socket: join(dir, 'no-such.sock') }, version: 'test',
        signal: new AbortController().signal, stdout: { write: (c: string) => (stdout += c) }, stderr: { write: (c: string) => (stderr += c) },
        kube: { env: {}, homeDir: dir },
      });
      assert.equal(code, 1, stderr);
      assert.equal(stdout, '');
      assert.match(stderr, /^error: no answer from the API server within 300ms \(--timeout\)\nhint: .*allow longer with --timeout\n$/);
      assert.ok(requests.length > before, 'the request reached the server');
    });
  }
});
