import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { eventually } from '@podvirt/test-support';
import { pino } from 'pino';
import { PodExpectations } from '../src/reconcile/pod-expectations.js';
import { ownerKey, VmiController } from '../src/reconcile/vmi-controller.js';
import { FakeCluster } from './fake-cluster.js';
import { launcherPod, vmiFixture } from './fixtures.js';

const log = pino({ level: 'silent' });

describe('VmiController', () => {
  test('syncs every VMI of the store on start, follows pod events, and stops on abort', async () => {
    const cluster = new FakeCluster();
    const expectations = new PodExpectations();
    cluster.addVmi(vmiFixture());
    const controller = new VmiController({
      log,
      workers: 2,
      deps: {
        vmis: cluster, pods: cluster, vmiClient: cluster, podClient: cluster, events: cluster, expectations,
        podConfig: { image: 'i', allowEmulation: false, random: () => 0 }, now: () => new Date(), log,
      },
    });
    const stop = new AbortController();
    const run = controller.run(stop.signal);
    await eventually(() => cluster.calls.includes('create pod'), { what: 'pod created' });
    const [pod] = cluster.ownedBy('default', 'vmi-uid');
    assert.ok(pod);
    assert.equal(ownerKey(pod), 'default/testvmi');
    // The informer reports the pod: the expectation is met and the VMI moves on.
    controller.podChanged(pod, 'add');
    await eventually(() => cluster.vmi('default', 'testvmi').status?.phase === 'Scheduling', { what: 'Scheduling' });
    assert.equal(cluster.calls.filter((c) => c === 'create pod').length, 1);
    stop.abort();
    await run;
    controller.vmiChanged(cluster.vmi('default', 'testvmi'));
  });

  test('a failing sync is retried with backoff until it succeeds', async () => {
    const cluster = new FakeCluster();
    cluster.addVmi(vmiFixture());
    cluster.createFailure = 'apiserver down';
    const controller = new VmiController({
      log,
      workers: 1,
      queue: { baseDelayMs: 1, maxDelayMs: 4 },
      deps: {
        vmis: cluster, pods: cluster, vmiClient: cluster, podClient: cluster, events: cluster, expectations: new PodExpectations(),
        podConfig: { image: 'i', allowEmulation: false, random: () => 0 }, now: () => new Date(), log,
      },
    });
    const stop = new AbortController();
    const run = controller.run(stop.signal);
    await eventually(() => cluster.calls.filter((c) => c === 'create pod').length >= 3, { what: 'three failures' });
    cluster.createFailure = undefined;
    await eventually(() => cluster.ownedBy('default', 'vmi-uid').length === 1, { what: 'created' });
    stop.abort();
    await run;
  });

  test('pods without a VMI owner are ignored', () => {
    const pod = launcherPod();
    pod.metadata = { ...pod.metadata, ownerReferences: [] };
    assert.equal(ownerKey(pod), undefined);
  });
});
