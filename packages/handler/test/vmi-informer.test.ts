import assert from 'node:assert/strict';
import { test } from 'node:test';
import { VmiInformer, type InformerEventType } from '../src/kube/vmi-informer.js';
import { eventually } from '@podvirt/test-support';
import { FakeKube } from './fake-kube.js';
import { makeVmi, quietLog } from './fixtures.js';

function informer(kube: FakeKube, resyncPeriodMs = 60_000) {
  const seen: string[] = [];
  const inf = new VmiInformer({
    api: kube,
    labelSelector: 'kubevirt.io/nodeName=node01',
    resyncPeriodMs,
    log: quietLog(),
    retryMs: 10,
    onEvent: (type: InformerEventType, vmi) => seen.push(`${type} ${vmi.metadata.name}`),
  });
  return { inf, seen };
}

test('lists, then follows the watch; other nodes\' VMIs are filtered out', async (t) => {
  const kube = new FakeKube();
  kube.create(makeVmi({ name: 'a' }));
  const other = makeVmi({ name: 'elsewhere' });
  other.metadata.labels = { 'kubevirt.io/nodeName': 'node02' };
  kube.create(other);
  const { inf, seen } = informer(kube);
  inf.start();
  t.after(() => inf.close());
  assert.equal(await inf.waitForSync(AbortSignal.timeout(2_000)), true);
  assert.deepEqual(seen, ['ADDED a']);
  kube.create(makeVmi({ name: 'b', uid: 'uid-b' }));
  kube.modify('default/a', (v) => (v.metadata.annotations = { x: '1' }));
  kube.remove('default/b');
  await eventually(() => seen.length === 4);
  assert.deepEqual(seen, ['ADDED a', 'ADDED b', 'MODIFIED a', 'DELETED b']);
  assert.equal(inf.get('default/a')?.metadata.annotations?.['x'], '1');
  assert.equal(inf.get('default/b'), undefined);
});

test('a 410 relists; objects deleted meanwhile are reported DELETED', async (t) => {
  const kube = new FakeKube();
  kube.create(makeVmi({ name: 'a' }));
  kube.create(makeVmi({ name: 'b', uid: 'uid-b' }));
  kube.expireNextWatch = true;
  const { inf, seen } = informer(kube);
  inf.start();
  t.after(() => inf.close());
  await eventually(() => kube.lists === 2 && kube.openWatches === 1);
  assert.deepEqual(seen, ['ADDED a', 'ADDED b'], 'an unchanged relist reports nothing new');
  // The watch ends, the next one gets 410, and b was deleted meanwhile: the relist reports it.
  kube.removeQuietly('default/b');
  kube.expireNextWatch = true;
  kube.dropWatches();
  await eventually(() => kube.lists === 3 && kube.openWatches === 1);
  assert.deepEqual(seen, ['ADDED a', 'ADDED b', 'DELETED b']);
  assert.equal(inf.get('default/b'), undefined);
});

test('resync re-delivers every cached VMI; close() ends the watch', async (t) => {
  t.mock.timers.enable({ apis: ['setInterval'] });
  const kube = new FakeKube();
  kube.create(makeVmi({ name: 'a' }));
  const { inf, seen } = informer(kube, 1_000);
  inf.start();
  assert.equal(await inf.waitForSync(AbortSignal.timeout(2_000)), true);
  t.mock.timers.tick(1_000);
  t.mock.timers.tick(1_000);
  assert.deepEqual(seen, ['ADDED a', 'RESYNC a', 'RESYNC a']);
  await inf.close();
  assert.equal(kube.openWatches, 0);
});
