// KubeClient against a real HTTP server on port 0: JSON round trips, Status errors decoded into
// stable codes, watch streams split at awkward chunk boundaries, ERROR events, dropped and
// aborted watches, timeouts, keep-alive reuse and bearer token rotation.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { eventually } from '@podvirt/test-support';
import { KubeApiError } from '../src/kube-api-error.js';
import { KubeClient, MERGE_PATCH, type KubeClientOptions, type KubeWatchEvent } from '../src/kube-client.js';
import type { KubeClientError } from '../src/kube-client-error.js';
import type { KubeConfig } from '../src/kube-config.js';
import { sendJson, status, TestServer } from './test-server.js';

async function setup(t: TestContext, config: Partial<KubeConfig> = {}, options: KubeClientOptions = {}): Promise<{ server: TestServer; client: KubeClient }> {
  const server = await TestServer.start();
  t.after(() => server.close());
  const client = await KubeClient.create({ server: server.url, insecureSkipTlsVerify: false, ...config }, options);
  t.after(() => client.close());
  return { server, client };
}

function watchHead(res: ServerResponse): void {
  res.writeHead(200, { 'Content-Type': 'application/json' });
  res.flushHeaders();
}

test('JSON round trip: method, path, query, body, content type, bearer token, reused connection', async (t) => {
  const { server, client } = await setup(t, { token: 'secret' });
  server.handle((req, res) => sendJson(res, 200, { echo: JSON.parse(req.body || 'null') as unknown, path: req.url.pathname }));
  const out = await client.request<{ echo: unknown; path: string }>({
    method: 'PATCH', path: '/api/v1/nodes/n1', query: { labelSelector: 'a=b,c!=d', dryRun: undefined, limit: 5, watch: false },
    body: { metadata: { labels: { x: 'ü' } } }, contentType: MERGE_PATCH,
  });
  assert.deepEqual(out, { echo: { metadata: { labels: { x: 'ü' } } }, path: '/api/v1/nodes/n1' });
  const [req] = server.requests;
  assert.equal(req?.method, 'PATCH');
  assert.equal(req.url.searchParams.get('labelSelector'), 'a=b,c!=d');
  assert.equal(req.url.searchParams.get('limit'), '5');
  assert.equal(req.url.searchParams.get('watch'), 'false');
  assert.equal(req.url.searchParams.has('dryRun'), false);
  assert.equal(req.headers['content-type'], MERGE_PATCH);
  assert.equal(req.headers['authorization'], 'Bearer secret');
  assert.equal(req.headers['accept'], 'application/json');
  await client.request({ path: '/api/v1/nodes' });
  assert.equal(server.requests[1]?.headers['content-type'], undefined, 'a GET sends no body');
  assert.equal(server.connectionsSeen, 1, 'the second request reused the kept-alive connection');
});

test('Status errors become KubeApiError with a stable code', async (t) => {
  const { server, client } = await setup(t);
  const cases = [
    { http: 404, reason: 'NotFound', code: 'KUBE_ERR_NOT_FOUND' },
    { http: 409, reason: 'Conflict', code: 'KUBE_ERR_CONFLICT' },
    { http: 409, reason: 'AlreadyExists', code: 'KUBE_ERR_ALREADY_EXISTS' },
    { http: 410, reason: 'Gone', code: 'KUBE_ERR_GONE' },
    { http: 410, reason: 'Expired', code: 'KUBE_ERR_EXPIRED' },
    { http: 422, reason: 'Invalid', code: 'KUBE_ERR_INVALID' },
    { http: 403, reason: 'Forbidden', code: 'KUBE_ERR_FORBIDDEN' },
    { http: 500, reason: '', code: 'KUBE_ERR_INTERNAL' },
    { http: 418, reason: '', code: 'KUBE_ERR_UNKNOWN' },
  ] as const;
  for (const c of cases) {
    const details = { name: 'vm1', kind: 'virtualmachineinstances', causes: [{ field: 'spec', message: 'bad' }] };
    server.handle((_req, res) => sendJson(res, c.http, status(c.http, c.reason, `${c.reason} message`, details)));
    const err = await client.request({ path: '/x' }).then(() => undefined, (e: unknown) => e);
    assert.ok(err instanceof KubeApiError, `${c.http} ${c.reason}`);
    assert.equal(err.code, c.code);
    assert.equal(err.status, c.http);
    assert.equal(err.reason, c.reason);
    assert.equal(err.message, `${c.reason} message`);
    assert.deepEqual(err.details, details);
  }
  server.handle((_req, res) => void res.writeHead(404, { 'Content-Type': 'text/plain' }).end('404 page not found\n'));
  await assert.rejects(client.request({ path: '/nope' }), (err: KubeApiError) => {
    assert.equal(err.code, 'KUBE_ERR_NOT_FOUND');
    assert.match(err.message, /GET \/nope: HTTP 404: 404 page not found/);
    return true;
  });
  server.handle((_req, res) => void res.writeHead(200).end('not json'));
  await assert.rejects(client.request({ path: '/x' }), { name: 'KubeClientError', code: 'KUBE_ERR_BAD_RESPONSE' });
});

test('a request times out, aborts, and fails to connect with client error codes', async (t) => {
  const { server, client } = await setup(t, {}, { timeoutMs: 100 });
  server.handle(() => undefined); // never answers
  await assert.rejects(client.request({ path: '/slow' }), { code: 'KUBE_ERR_TIMEOUT' });
  const ac = new AbortController();
  const pending = client.request({ path: '/slow', signal: ac.signal, timeoutMs: 10_000 });
  setTimeout(() => ac.abort(), 20);
  await assert.rejects(pending, (err: KubeClientError) => err.code === 'KUBE_ERR_ABORTED' && err.cause === ac.signal.reason);
  await assert.rejects(client.request({ path: '/x', signal: AbortSignal.abort() }), { code: 'KUBE_ERR_ABORTED' });
  await eventually(() => server.openConnections === 0, { what: 'abandoned sockets closed' });

  const closed = await TestServer.start();
  const url = closed.url;
  await closed.close();
  const nowhere = await KubeClient.create({ server: url, insecureSkipTlsVerify: false });
  t.after(() => nowhere.close());
  await assert.rejects(nowhere.request({ path: '/x' }), { code: 'KUBE_ERR_CONNECTION' });
});

test('watch: lines split across chunks (mid-object, CRLF, inside a UTF-8 character) arrive whole', async (t) => {
  const { server, client } = await setup(t);
  const events = [
    { type: 'ADDED', object: { metadata: { name: 'a', resourceVersion: '1' }, note: 'grüße 🚀' } },
    { type: 'MODIFIED', object: { metadata: { name: 'a', resourceVersion: '2' } } },
    { type: 'BOOKMARK', object: { metadata: { resourceVersion: '3' } } },
    { type: 'DELETED', object: { metadata: { name: 'a', resourceVersion: '4' } } },
  ];
  const wire = Buffer.from(events.map((e, i) => JSON.stringify(e) + (i === 1 ? '\r\n' : '\n')).join(''));
  const rocket = wire.indexOf(Buffer.from('🚀'));
  // Cut points: inside the emoji, mid-object, between CR and LF, right after a newline.
  const cuts = [5, rocket + 2, wire.indexOf('\r') + 1, wire.indexOf('BOOKMARK'), wire.length - 3];
  server.handle(async (req, res) => {
    assert.equal(req.url.searchParams.get('watch'), 'true');
    watchHead(res);
    let from = 0;
    for (const cut of [...cuts, wire.length]) {
      res.write(wire.subarray(from, cut));
      from = cut;
      await sleep(5);
    }
    res.end();
  });
  const got: Array<KubeWatchEvent<unknown>> = [];
  for await (const e of client.watch({ path: '/apis/g/v1/things', query: { resourceVersion: '0' } })) got.push(e);
  assert.deepEqual(got, events);
  assert.equal(server.requests[0]?.url.searchParams.get('resourceVersion'), '0');
});

test('watch: an ERROR event throws its Status; a 410 before streaming too', async (t) => {
  const { server, client } = await setup(t);
  server.handle((_req, res) => {
    watchHead(res);
    res.write(`${JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'a' } } })}\n`);
    res.end(`${JSON.stringify({ type: 'ERROR', object: status(410, 'Expired', 'too old resource version: 5 (9)') })}\n`);
  });
  const got: string[] = [];
  await assert.rejects(
    (async () => {
      for await (const e of client.watch({ path: '/w' })) got.push(e.type);
    })(),
    (err: KubeApiError) => err instanceof KubeApiError && err.code === 'KUBE_ERR_EXPIRED' && err.status === 410 && /too old/.test(err.message),
  );
  assert.deepEqual(got, ['ADDED']);
  server.handle((_req, res) => sendJson(res, 403, status(403, 'Forbidden', 'watch is forbidden')));
  await assert.rejects(client.watch({ path: '/w' }).next(), { code: 'KUBE_ERR_FORBIDDEN' });
  server.handle((_req, res) => {
    watchHead(res);
    res.end('{"type":"SURPRISE","object":{}}\n');
  });
  await assert.rejects(client.watch({ path: '/w' }).next(), { code: 'KUBE_ERR_BAD_RESPONSE' });
});

test('watch: a dropped connection ends the iterable; a silent one ends after the idle bound', async (t) => {
  const { server, client } = await setup(t);
  server.handle((_req, res) => {
    watchHead(res);
    res.write(`${JSON.stringify({ type: 'ADDED', object: { n: 1 } })}\n{"type":"MOD`);
    setTimeout(() => res.destroy(), 20);
  });
  const got: unknown[] = [];
  for await (const e of client.watch({ path: '/w' })) got.push(e.object);
  assert.deepEqual(got, [{ n: 1 }], 'the event cut off by the drop is not delivered');

  server.handle((_req, res) => {
    watchHead(res);
    res.write(`${JSON.stringify({ type: 'ADDED', object: { n: 2 } })}\n`);
  });
  const started = Date.now();
  const idle: unknown[] = [];
  for await (const e of client.watch({ path: '/w', idleTimeoutMs: 150 })) idle.push(e.object);
  assert.deepEqual(idle, [{ n: 2 }]);
  assert.ok(Date.now() - started >= 140);
  await eventually(() => server.openConnections === 0, { what: 'the silent connection closed' });
});

test('watch: abort mid-watch throws KUBE_ERR_ABORTED and leaves no socket; so does leaving the loop', async (t) => {
  const { server, client } = await setup(t);
  server.handle((_req, res) => {
    watchHead(res);
    res.write(`${JSON.stringify({ type: 'ADDED', object: { n: 1 } })}\n`);
  });
  const ac = new AbortController();
  const seen: unknown[] = [];
  await assert.rejects(
    (async () => {
      for await (const e of client.watch({ path: '/w', signal: ac.signal })) {
        seen.push(e.object);
        ac.abort();
      }
    })(),
    { code: 'KUBE_ERR_ABORTED' },
  );
  assert.deepEqual(seen, [{ n: 1 }]);
  await eventually(() => server.openConnections === 0, { what: 'server side socket closed' });

  for await (const _e of client.watch({ path: '/w' })) break;
  await eventually(() => server.openConnections === 0, { what: 'socket closed after break' });

  const pending = client.watch({ path: '/w' });
  assert.equal((await pending.next()).done, false);
  const next = pending.next();
  await client.close();
  await assert.rejects(next, { code: 'KUBE_ERR_CLOSED' });
  await eventually(() => server.openConnections === 0, { what: 'socket closed by close()' });
  await assert.rejects(client.request({ path: '/x' }), { code: 'KUBE_ERR_CLOSED' });
});

test('a token file is re-read after the refresh period and right after a 401', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'pvkr-token-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const tokenFile = join(dir, 'token');
  await writeFile(tokenFile, 'first\n');
  let now = 1_000_000;
  const { server, client } = await setup(t, { tokenFile, token: 'ignored-when-a-file-is-set' }, { tokenRefreshMs: 60_000, now: () => now });
  server.handle((req, res) => (req.headers['authorization'] === 'Bearer third'
    ? sendJson(res, 401, status(401, 'Unauthorized', 'Unauthorized'))
    : sendJson(res, 200, {})));
  const sent = (): string[] => server.requests.map((r) => r.headers['authorization'] ?? '');
  await client.request({ path: '/a' });
  await writeFile(tokenFile, 'second\n');
  now += 59_000;
  await client.request({ path: '/a' });
  now += 2_000;
  await client.request({ path: '/a' });
  assert.deepEqual(sent(), ['Bearer first', 'Bearer first', 'Bearer second']);
  await writeFile(tokenFile, 'third');
  now += 60_000;
  await assert.rejects(client.request({ path: '/a' }), { code: 'KUBE_ERR_UNAUTHORIZED' });
  await writeFile(tokenFile, 'fourth');
  await client.request({ path: '/a' });
  assert.deepEqual(sent().slice(3), ['Bearer third', 'Bearer fourth'], 'a 401 forces a re-read without waiting');
  await rm(tokenFile);
  now += 120_000;
  await client.request({ path: '/a' });
  assert.equal(sent().at(-1), 'Bearer fourth', 'a missing file keeps the last token');
});

test('a reset on a reused kept-alive socket is retried once on a fresh connection, except for POST', async (t) => {
  const { server, client } = await setup(t);
  let n = 0;
  server.handle((_req, res) => {
    if (++n === 2) res.socket?.resetAndDestroy();
    else sendJson(res, 200, { n });
  });
  await client.request({ path: '/a' });
  assert.deepEqual(await client.request({ method: 'PUT', path: '/b', body: {} }), { n: 3 }, 'answered by the retry');
  assert.equal(server.connectionsSeen, 2);
  n = 1;
  await assert.rejects(client.request({ method: 'POST', path: '/c', body: {} }), { code: 'KUBE_ERR_CONNECTION' });
  assert.equal(server.requests.length, 4, 'the POST was sent once');
});
