import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { eventually } from '@podvirt/test-support';
import { pino } from 'pino';
import { kubeconfigFor, startApiServer } from '../apiserver/index.js';
import type { RequestRecord } from '../apiserver/request-record.js';
import { Scheduler } from './scheduler.js';

const PODS = 6;

test('pods created at once are bound at once: every binding goes out before the first Scheduled Event', async (t) => {
  const server = await startApiServer();
  t.after(() => server.close());
  const kc = new KubeConfig();
  kc.loadFromString(kubeconfigFor(server.url));
  const core = kc.makeApiClient(CoreV1Api);
  await core.createNode({ body: { metadata: { name: 'node01' }, status: { allocatable: { cpu: '8', memory: '16Gi', pods: '110' }, conditions: [{ type: 'Ready', status: 'True' }] } } });
  for (let i = 0; i < PODS; i++) {
    await core.createNamespacedPod({ namespace: 'default', body: { metadata: { name: `p${i}` }, spec: { containers: [{ name: 'c', image: 'i' }] } } });
  }
  const seen: RequestRecord[] = [];
  const stop = server.onRequest((r) => {
    if (r.verb === 'create' && (r.resource === 'bindings' || r.resource === 'events')) seen.push(r);
  });
  t.after(stop);
  const scheduler = new Scheduler({ kubeConfig: kc, logger: pino({ level: 'silent' }) });
  t.after(() => scheduler.close());
  await scheduler.start();
  await eventually(async () => (await core.listNamespacedPod({ namespace: 'default' })).items.every((p) => p.spec?.nodeName === 'node01'), { what: 'every pod bound' });
  const afterBinding = (): string[] => {
    const order = seen.map((r) => r.resource);
    return order.slice(Math.max(0, order.indexOf('bindings')));
  };
  await eventually(() => afterBinding().filter((r) => r === 'events').length >= PODS, { what: 'a Scheduled Event per pod' });
  // (A FailedScheduling Event may come first: a pass can run before the node is listed.)
  const order = afterBinding();
  assert.equal(order.findIndex((r) => r !== 'bindings'), PODS, `the bindings go out together: ${order.join(' ')}`);
});
