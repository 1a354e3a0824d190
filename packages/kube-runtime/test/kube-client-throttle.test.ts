// Throttling as client-go handles it: a 429 (and a 5xx that names a Retry-After, except on
// POST) is sent again after the server's Retry-After, a bounded number of times.
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { test, type TestContext } from 'node:test';
import { KubeClient } from '../src/kube-client.js';
import { status, TestServer } from './test-server.js';

async function setup(t: TestContext, maxThrottleRetries?: number): Promise<{ server: TestServer; client: KubeClient }> {
  const server = await TestServer.start();
  t.after(() => server.close());
  const client = await KubeClient.create({ server: server.url, insecureSkipTlsVerify: false }, maxThrottleRetries === undefined ? {} : { maxThrottleRetries });
  t.after(() => client.close());
  return { server, client };
}

function reply(res: ServerResponse, code: number, body: object, retryAfter?: string): void {
  res.writeHead(code, { 'Content-Type': 'application/json', ...(retryAfter === undefined ? {} : { 'Retry-After': retryAfter }) });
  res.end(JSON.stringify(body));
}

test('a 429 is sent again after Retry-After, for a POST too, until the server takes it', async (t) => {
  const { server, client } = await setup(t);
  let n = 0;
  server.handle((_req, res) => (++n <= 2 ? reply(res, 429, status(429, 'TooManyRequests', 'slow down'), '0') : reply(res, 201, { n })));
  assert.deepEqual(await client.request({ method: 'POST', path: '/api/v1/namespaces/default/pods', body: {} }), { n: 3 });
  assert.equal(server.requests.length, 3);
});

test('after maxThrottleRetries the 429 is the caller\'s, with its stable code', async (t) => {
  const { server, client } = await setup(t, 3);
  server.handle((_req, res) => reply(res, 429, status(429, 'TooManyRequests', 'slow down', { retryAfterSeconds: 0 }), '0'));
  await assert.rejects(client.request({ path: '/api/v1/pods' }), { code: 'KUBE_ERR_TOO_MANY_REQUESTS' });
  assert.equal(server.requests.length, 4, 'the first try and three retries');
});

test('a 503 with Retry-After is retried except for POST; one without Retry-After is not', async (t) => {
  const { server, client } = await setup(t);
  let n = 0;
  server.handle((req, res) => {
    n++;
    if (req.url.pathname === '/plain') return reply(res, 503, status(503, 'ServiceUnavailable', 'down'));
    return n % 2 === 1 ? reply(res, 503, status(503, 'ServiceUnavailable', 'starting'), '0') : reply(res, 200, { n });
  });
  assert.deepEqual(await client.request({ method: 'PUT', path: '/a', body: {} }), { n: 2 });
  await assert.rejects(client.request({ method: 'POST', path: '/b', body: {} }), { code: 'KUBE_ERR_SERVICE_UNAVAILABLE' });
  await assert.rejects(client.request({ path: '/plain' }), { code: 'KUBE_ERR_SERVICE_UNAVAILABLE' });
  assert.equal(server.requests.length, 4);
});

test('an abort while waiting out a Retry-After ends the request at once', async (t) => {
  const { server, client } = await setup(t);
  let answered: () => void = () => undefined;
  const throttled = new Promise<void>((resolve) => (answered = resolve));
  server.handle((_req, res) => {
    reply(res, 429, status(429, 'TooManyRequests', 'slow down'), '30');
    answered();
  });
  const ac = new AbortController();
  const pending = client.request({ path: '/a', signal: ac.signal });
  await throttled;
  ac.abort();
  await assert.rejects(pending, { code: 'KUBE_ERR_ABORTED' });
  assert.equal(server.requests.length, 1);
});
