import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ObjectReference } from '@podvirt/api';
import { EventRecorder } from '../src/event-recorder.js';
import type { CoreEvent, EventCountPatch, EventSink } from '../src/event-sink.js';
import { KubeApiError } from '../src/kube-api-error.js';

const T0 = Date.parse('2025-01-01T00:00:00Z');
const quiet = { warn: (): void => undefined };

interface Thing {
  readonly name: string;
  readonly uid: string;
}

const reference = (t: Thing): ObjectReference => ({ apiVersion: 'example.io/v1', kind: 'Thing', namespace: 'default', name: t.name, uid: t.uid, resourceVersion: '1' });

class FakeSink implements EventSink {
  readonly events: CoreEvent[] = [];
  writes = 0;

  create(event: CoreEvent, signal: AbortSignal): Promise<CoreEvent> {
    signal.throwIfAborted();
    this.writes++;
    this.events.push(structuredClone(event));
    return Promise.resolve(structuredClone(event));
  }

  patchCount(namespace: string, name: string, patch: EventCountPatch, signal: AbortSignal): Promise<CoreEvent> {
    signal.throwIfAborted();
    this.writes++;
    const ev = this.events.find((e) => e.metadata.namespace === namespace && e.metadata.name === name);
    if (ev === undefined) return Promise.reject(new KubeApiError(404, 'NotFound', `events "${name}" not found`));
    Object.assign(ev, patch);
    return Promise.resolve(structuredClone(ev));
  }
}

function recorder(sink: EventSink, now: () => number, extra: { host?: string } = {}): EventRecorder<Thing> {
  return new EventRecorder<Thing>({ sink, reference, component: 'podvirt-test', instance: 'replica-1', log: quiet, now, ...extra });
}

test('writes core/v1 Events with involvedObject and source; repeats fold into the count of one Event', async () => {
  const sink = new FakeSink();
  let now = T0;
  const rec = recorder(sink, () => now, { host: 'node01' });
  const thing = { name: 'vm1', uid: 'uid-1' };
  await Promise.all([rec.record(thing, 'Warning', 'SyncFailed', 'boom'), rec.record(thing, 'Warning', 'SyncFailed', 'boom')]);
  now += 5_000;
  await rec.record(thing, 'Warning', 'SyncFailed', 'boom');
  await rec.record(thing, 'Warning', 'SyncFailed', 'other text');
  assert.equal(sink.events.length, 2);
  const [first] = sink.events;
  assert.deepEqual(first?.involvedObject, reference(thing));
  assert.deepEqual(first?.source, { component: 'podvirt-test', host: 'node01' });
  assert.deepEqual([first?.reportingComponent, first?.reportingInstance], ['podvirt-test', 'replica-1']);
  assert.equal(first?.count, 3);
  assert.equal(first?.firstTimestamp, '2025-01-01T00:00:00Z');
  assert.equal(first?.lastTimestamp, '2025-01-01T00:00:05Z');
  assert.match(first?.metadata.name ?? '', /^vm1\.[0-9a-f]+$/);
  assert.notEqual(sink.events[1]?.metadata.name, first?.metadata.name);
  await rec.close();
});

test('a retry loop writes one Event, whatever the number of failures; no host for a cluster-wide component', async () => {
  const sink = new FakeSink();
  const rec = recorder(sink, () => T0);
  const thing = { name: 'vm2', uid: 'uid-2' };
  for (let i = 0; i < 25; i++) await rec.record(thing, 'Warning', 'FailedCreate', 'Error creating pod: forbidden');
  assert.equal(sink.events.length, 1);
  assert.equal(sink.events[0]?.count, 25);
  assert.deepEqual(sink.events[0]?.source, { component: 'podvirt-test' });
  await rec.close();
});

test('an expired Event is created afresh; API failures are logged, never thrown', async () => {
  const sink = new FakeSink();
  const rec = recorder(sink, () => T0);
  const thing = { name: 'vm1', uid: 'uid-1' };
  await rec.record(thing, 'Normal', 'Started', 'started');
  sink.events.length = 0;
  await rec.record(thing, 'Normal', 'Started', 'started');
  assert.equal(sink.events.length, 1);
  assert.equal(sink.events[0]?.count, 1);

  const warned: string[] = [];
  const failing: EventSink = {
    create: () => Promise.reject(new KubeApiError(500, 'InternalError', 'etcd is down')),
    patchCount: () => Promise.reject(new Error('unreachable')),
  };
  const broken = new EventRecorder<Thing>({ sink: failing, reference, component: 'c', instance: 'i', log: { warn: (_o, msg) => warned.push(msg) }, now: () => T0 });
  await broken.record(thing, 'Warning', 'SyncFailed', 'x');
  assert.deepEqual(warned, ['recording event failed']);
  await broken.close();
  await rec.close();
});

test('after close() nothing more is written', async () => {
  const sink = new FakeSink();
  const rec = recorder(sink, () => T0);
  await rec.close();
  await rec.close();
  await rec.record({ name: 'vm1', uid: 'uid-1' }, 'Normal', 'Started', 'started');
  assert.equal(sink.writes, 0);
});

test('as client-go\'s spam filter: 25 Events per object, then one per 5 minutes; the drop is logged once; other objects unaffected', async () => {
  const sink = new FakeSink();
  let now = T0;
  const warnings: string[] = [];
  const rec = new EventRecorder<Thing>({ sink, reference, component: 'podvirt-test', instance: 'replica-1', log: { warn: (_o, msg) => void warnings.push(msg) }, now: () => now });
  const busy = { name: 'vm3', uid: 'uid-3' };
  // A pause and an unpause alternating: each one a new Event or a count patch, all one object's.
  for (let i = 0; i < 40; i++) await rec.record(busy, 'Normal', i % 2 === 0 ? 'Paused' : 'Unpaused', `n${i % 2}`);
  assert.equal(sink.writes, 25);
  assert.equal(warnings.length, 1, warnings.join('\n'));
  assert.match(warnings[0] ?? '', /more than 25 Events for this object/);
  await rec.record({ name: 'vm4', uid: 'uid-4' }, 'Normal', 'Paused', 'n0');
  assert.equal(sink.writes, 26, 'another object has its own bucket');
  now += 299_000;
  await rec.record(busy, 'Normal', 'Paused', 'n0');
  assert.equal(sink.writes, 26);
  now += 1_000;
  await rec.record(busy, 'Normal', 'Paused', 'n0');
  await rec.record(busy, 'Normal', 'Paused', 'n0');
  assert.equal(sink.writes, 27, 'one token back after 5 minutes');
  assert.equal(warnings.length, 2, 'a new episode of drops is logged again');
  await rec.close();
});
