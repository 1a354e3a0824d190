// /healthz and /readyz of the handler over a real HTTP listener on 127.0.0.1, port 0.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { HttpEndpoints } from '@podvirt/kube-runtime';
import { healthRoutes } from '../src/health/health-routes.js';
import { Readiness } from '../src/health/readiness.js';

test('readyz names what is missing until every check holds; healthz is plain liveness', async (t) => {
  let synced = false;
  const readiness = new Readiness();
  readiness.add('informer-synced', () => synced);
  readiness.add('node-api-listening', () => true);
  const server = await HttpEndpoints.listen({ host: '127.0.0.1', port: 0, routes: healthRoutes(readiness) });
  t.after(() => server.close());
  const get = async (path: string) => {
    const res = await fetch(`http://127.0.0.1:${server.port}${path}`);
    return { status: res.status, body: await res.text(), type: res.headers.get('content-type') };
  };
  assert.deepEqual(await get('/healthz'), { status: 200, body: 'ok\n', type: 'text/plain' });
  assert.deepEqual(await get('/readyz'), { status: 503, body: 'not ready: informer-synced\n', type: 'text/plain' });
  synced = true;
  assert.equal((await get('/readyz')).status, 200);
  readiness.markShuttingDown();
  assert.deepEqual(await get('/readyz'), { status: 503, body: 'not ready: shutting-down\n', type: 'text/plain' });
});
