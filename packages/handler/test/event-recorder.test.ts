import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EventRecorder } from '../src/events/event-recorder.js';
import { HandlerError } from '../src/handler-error.js';
import type { CoreEvent, EventApi } from '../src/kube/event-api.js';
import { FakeEvents } from './fake-kube.js';
import { makeVmi, NODE, quietLog, T0 } from './fixtures.js';

test('writes core/v1 Events with involvedObject and source; repeats bump count on one Event', async () => {
  const api = new FakeEvents();
  let now = T0;
  const rec = new EventRecorder({ api, host: NODE, log: quietLog(), now: () => now });
  const vmi = makeVmi();
  await Promise.all([rec.record(vmi, 'Warning', 'SyncFailed', 'boom'), rec.record(vmi, 'Warning', 'SyncFailed', 'boom')]);
  now += 5_000;
  await rec.record(vmi, 'Warning', 'SyncFailed', 'boom');
  await rec.record(vmi, 'Warning', 'SyncFailed', 'other text');
  assert.equal(api.events.length, 2);
  const [first] = api.events;
  assert.deepEqual(first?.involvedObject, { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', namespace: 'default', name: 'vm1', uid: 'uid-1', resourceVersion: '1' });
  assert.deepEqual(first?.source, { component: 'virt-handler', host: NODE });
  assert.equal(first?.count, 3);
  assert.equal(first?.firstTimestamp, '2025-01-01T00:00:00Z');
  assert.equal(first?.lastTimestamp, '2025-01-01T00:00:05Z');
  assert.match(first?.metadata.name ?? '', /^vm1\.[0-9a-f]+$/);
  assert.notEqual(api.events[1]?.metadata.name, first?.metadata.name);
  await rec.close();
});

test('an expired Event is created afresh; API failures are logged, never thrown', async () => {
  const api = new FakeEvents();
  const rec = new EventRecorder({ api, host: NODE, log: quietLog(), now: () => T0 });
  await rec.record(makeVmi(), 'Normal', 'Started', 'VirtualMachineInstance started.');
  api.events.length = 0;
  await rec.record(makeVmi(), 'Normal', 'Started', 'VirtualMachineInstance started.');
  assert.equal(api.events.length, 1);
  assert.equal(api.events[0]?.count, 1);

  const failing: EventApi = {
    create: () => Promise.reject(new HandlerError('HANDLER_ERR_KUBE', 'HTTP 500')),
    patchCount: () => Promise.reject(new Error('unreachable')) as Promise<CoreEvent>,
  };
  const broken = new EventRecorder({ api: failing, host: NODE, log: quietLog(), now: () => T0 });
  await broken.record(makeVmi(), 'Warning', 'SyncFailed', 'x');
  await broken.close();
  await rec.close();
});
