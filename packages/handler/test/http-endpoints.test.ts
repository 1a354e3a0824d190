// /healthz, /readyz and /metrics over a real HTTP listener on 127.0.0.1, port 0.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { healthRoutes } from '../src/health/health-routes.js';
import { HttpEndpoints } from '../src/health/http-endpoints.js';
import { Readiness } from '../src/health/readiness.js';
import { isHandlerError } from '../src/handler-error.js';

test('readyz names what is missing until every check holds; healthz is plain liveness', async (t) => {
  let synced = false;
  const readiness = new Readiness();
  readiness.add('informer-synced', () => synced);
  readiness.add('node-api-listening', () => true);
  const server = await HttpEndpoints.listen({
    host: '127.0.0.1', port: 0,
    routes: { ...healthRoutes(readiness), '/metrics': () => ({ status: 200, contentType: 'text/plain; version=0.0.4', body: 'm 1\n' }), '/boom': () => Promise.reject(new Error('kaput')) },
  });
  t.after(() => server.close());
  const get = async (path: string, method = 'GET') => {
    const res = await fetch(`http://127.0.0.1:${server.port}${path}`, { method });
    return { status: res.status, body: await res.text(), type: res.headers.get('content-type') };
  };
  assert.deepEqual(await get('/healthz'), { status: 200, body: 'ok\n', type: 'text/plain' });
  assert.deepEqual(await get('/readyz'), { status: 503, body: 'not ready: informer-synced\n', type: 'text/plain' });
  synced = true;
  assert.equal((await get('/readyz')).status, 200);
  readiness.markShuttingDown();
  assert.deepEqual(await get('/readyz'), { status: 503, body: 'not ready: shutting-down\n', type: 'text/plain' });
  assert.deepEqual(await get('/metrics?x=1'), { status: 200, body: 'm 1\n', type: 'text/plain; version=0.0.4' });
  assert.equal((await get('/nope')).status, 404);
  assert.equal((await get('/healthz', 'POST')).status, 405);
  assert.deepEqual(await get('/healthz', 'HEAD'), { status: 200, body: '', type: 'text/plain' });
  assert.deepEqual(await get('/boom'), { status: 500, body: 'kaput\n', type: 'text/plain' });
  const port = server.port;
  await server.close();
  await server.close();
  await assert.rejects(fetch(`http://127.0.0.1:${port}/healthz`));
});

test('a port in use is HANDLER_ERR_LISTEN', async (t) => {
  const first = await HttpEndpoints.listen({ host: '127.0.0.1', port: 0, routes: {} });
  t.after(() => first.close());
  await assert.rejects(HttpEndpoints.listen({ host: '127.0.0.1', port: first.port, routes: {} }), (err) => isHandlerError(err, 'HANDLER_ERR_LISTEN'));
});
