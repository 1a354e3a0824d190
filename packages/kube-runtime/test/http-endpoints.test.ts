// The plain HTTP endpoints of the handler and the controller, over a real listener on
// 127.0.0.1, port 0: routes, GET and HEAD only, a failing route, /metrics from a registry, close.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { HttpEndpoints, metricsRoute } from '../src/http-endpoints.js';

test('routes answer GET and HEAD; unknown paths 404, other methods 405, a failing route 500', async (t) => {
  let scrapes = 0;
  const registry = { contentType: 'text/plain; version=0.0.4; charset=utf-8', metrics: async () => `m ${++scrapes}\n` };
  const server = await HttpEndpoints.listen({
    host: '127.0.0.1', port: 0,
    routes: { '/healthz': () => ({ status: 200, contentType: 'text/plain', body: 'ok\n' }), '/metrics': metricsRoute(registry), '/boom': () => Promise.reject(new Error('kaput')) },
  });
  t.after(() => server.close());
  const get = async (path: string, method = 'GET') => {
    const res = await fetch(`http://127.0.0.1:${server.port}${path}`, { method });
    return { status: res.status, body: await res.text(), type: res.headers.get('content-type') };
  };
  assert.deepEqual(await get('/healthz'), { status: 200, body: 'ok\n', type: 'text/plain' });
  assert.deepEqual(await get('/metrics?x=1'), { status: 200, body: 'm 1\n', type: registry.contentType });
  assert.deepEqual(await get('/metrics'), { status: 200, body: 'm 2\n', type: registry.contentType }, 'rendered at each scrape');
  assert.equal((await get('/nope')).status, 404);
  assert.equal((await get('/healthz', 'POST')).status, 405);
  assert.deepEqual(await get('/healthz', 'HEAD'), { status: 200, body: '', type: 'text/plain' });
  assert.deepEqual(await get('/boom'), { status: 500, body: 'kaput\n', type: 'text/plain' });
  const port = server.port;
  await server.close();
  await server.close();
  await assert.rejects(fetch(`http://127.0.0.1:${port}/healthz`));
});

test('a port in use is KUBE_ERR_LISTEN', async (t) => {
  const first = await HttpEndpoints.listen({ host: '127.0.0.1', port: 0, routes: {} });
  t.after(() => first.close());
  await assert.rejects(HttpEndpoints.listen({ host: '127.0.0.1', port: first.port, routes: {} }), (err) => (err as { code?: string }).code === 'KUBE_ERR_LISTEN');
});
