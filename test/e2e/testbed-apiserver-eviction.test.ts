// pods/eviction and PodDisruptionBudgets in the testbed API server, with Kubernetes' semantics:
// the disruption controller's status, 429 while a budget or a webhook forbids, and `kubectl
// drain` (cordon, DaemonSet pods left with --ignore-daemonsets, evictions retried on 429).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { eventually } from '@podvirt/test-support';
import type { JsonObject } from '../testbed/apiserver/index.js';
import { http, kubectl, podManifest, startTestApiServer, type TestApiServer } from './testbed-helpers.js';

const POLICY = '/apis/policy/v1/namespaces/default/poddisruptionbudgets';
const PODS = '/api/v1/namespaces/default/pods';

describe('testbed API server: evictions and PodDisruptionBudgets', () => {
  let tb: TestApiServer;
  const base = (): string => tb.server.url;
  before(async () => {
    tb = await startTestApiServer();
  });
  after(() => tb.close());

  /** A pod bound to `node`, Running and Ready, as its kubelet would report it. */
  async function readyPod(name: string, node: string, labels: JsonObject, extra: JsonObject = {}): Promise<void> {
    const pod = podManifest(name, { ...extra, metadata: { name, labels, ...((extra['metadata'] as JsonObject | undefined) ?? {}) } });
    (pod['spec'] as JsonObject)['nodeName'] = node;
    assert.equal((await http(base(), 'POST', PODS, pod)).status, 201);
    const status = { status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] } };
    assert.equal((await http(base(), 'PATCH', `${PODS}/${name}/status`, status, 'application/merge-patch+json')).status, 200);
  }
  const budget = async (name: string): Promise<JsonObject> => ((await http(base(), 'GET', `${POLICY}/${name}`)).body['status'] as JsonObject);
  const evict = (name: string, extra: JsonObject = {}) => http(base(), 'POST', `${PODS}/${name}/eviction`, { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name }, ...extra });

  test('the budget status follows its pods; an eviction spends it, then 429 with the budget named', async () => {
    await readyPod('web-a', 'node-1', { app: 'web' });
    await readyPod('web-b', 'node-1', { app: 'web' });
    const created = await http(base(), 'POST', POLICY, { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'web' }, spec: { minAvailable: 1, selector: { matchLabels: { app: 'web' } } } });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const settled = await eventually(async () => {
      const s = await budget('web');
      return s['observedGeneration'] === 1 && s['disruptionsAllowed'] === 1 ? s : undefined;
    }, { what: 'PDB status', deadlineMs: 10_000 });
    assert.deepEqual({ currentHealthy: settled['currentHealthy'], desiredHealthy: settled['desiredHealthy'], expectedPods: settled['expectedPods'] }, { currentHealthy: 2, desiredHealthy: 1, expectedPods: 2 });
    assert.deepEqual(((settled['conditions'] as JsonObject[])[0] as JsonObject)['reason'], 'SufficientPods');

    // A dry-run eviction spends nothing.
    assert.equal((await evict('web-a', { deleteOptions: { dryRun: ['All'] } })).status, 201);
    assert.equal((await budget('web'))['disruptionsAllowed'], 1);

    const first = await evict('web-a');
    assert.equal(first.status, 201, JSON.stringify(first.body));
    assert.equal(first.body['status'], 'Success');
    const evicted = (await http(base(), 'GET', `${PODS}/web-a`)).body;
    assert.notEqual((evicted['metadata'] as JsonObject)['deletionTimestamp'], undefined, 'deleted gracefully');
    const target = ((evicted['status'] as JsonObject)['conditions'] as JsonObject[]).find((c) => c['type'] === 'DisruptionTarget');
    assert.deepEqual({ status: target?.['status'], reason: target?.['reason'] }, { status: 'True', reason: 'EvictionByEvictionAPI' });
    await eventually(async () => ((await budget('web'))['currentHealthy'] === 1 ? true : undefined), { what: 'currentHealthy 1', deadlineMs: 10_000 });

    const refused = await evict('web-b');
    assert.equal(refused.status, 429);
    assert.equal(refused.body['reason'], 'TooManyRequests');
    assert.equal(refused.body['message'], "Cannot evict pod as it would violate the pod's disruption budget.");
    assert.deepEqual((refused.body['details'] as JsonObject)['causes'], [{ reason: 'DisruptionBudget', message: 'The disruption budget web needs 1 healthy pods and has 1 currently' }]);
    assert.equal((await http(base(), 'GET', `${PODS}/web-b`)).status, 200, 'still there');

    // Bad input: the Eviction names another pod.
    const mismatch = await evict('web-b', { metadata: { name: 'other' } });
    assert.equal(mismatch.status, 400);
    assert.equal(mismatch.body['message'], 'name in URL does not match name in Eviction object');
    // A Pending pod goes whatever the budget says.
    assert.equal((await http(base(), 'POST', PODS, podManifest('web-pending', { metadata: { name: 'web-pending', labels: { app: 'web' } } }))).status, 201);
    assert.equal((await evict('web-pending')).status, 201);
    assert.equal((await http(base(), 'GET', `${PODS}/web-pending`)).status, 404);
    await http(base(), 'DELETE', `${POLICY}/web`);
    await http(base(), 'DELETE', `${PODS}?labelSelector=app%3Dweb&gracePeriodSeconds=0`);
  });

  test('kubectl drain: cordons, leaves DaemonSet pods with --ignore-daemonsets, retries on 429 until the budget allows', async () => {
    assert.equal((await http(base(), 'POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'drain-me' } })).status, 201);
    const ds = await http(base(), 'POST', '/apis/apps/v1/namespaces/default/daemonsets', {
      apiVersion: 'apps/v1', kind: 'DaemonSet', metadata: { name: 'agent' },
      spec: { selector: { matchLabels: { app: 'agent' } }, template: { metadata: { labels: { app: 'agent' } }, spec: { containers: [{ name: 'a', image: 'busybox' }] } } },
    });
    assert.equal(ds.status, 201, JSON.stringify(ds.body));
    const owner = { apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'agent', uid: (ds.body['metadata'] as JsonObject)['uid'] ?? '', controller: true };
    await readyPod('agent-x', 'drain-me', { app: 'agent' }, { metadata: { ownerReferences: [owner] } });
    await readyPod('db-a', 'drain-me', { app: 'db' });
    await readyPod('db-b', 'drain-me', { app: 'db' });
    await http(base(), 'POST', POLICY, { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'db' }, spec: { minAvailable: 1, selector: { matchLabels: { app: 'db' } } } });
    await eventually(async () => ((await budget('db'))['disruptionsAllowed'] === 1 ? true : undefined), { what: 'db budget', deadlineMs: 10_000 });

    const drain = ['drain', 'drain-me', '--ignore-daemonsets', '--force', '--grace-period=0'];
    const blocked = await kubectl(tb.kubeconfigPath, [...drain, '--timeout=8s']);
    assert.notEqual(blocked.code, 0, blocked.stdout);
    assert.match(blocked.stdout, /node\/drain-me cordoned/);
    // kubectl joins its warnings on one line, in the order of a Go map: either may come first.
    const warning = blocked.stderr.split('\n').find((line) => line.startsWith('Warning: ')) ?? '';
    assert.match(warning, /ignoring DaemonSet-managed Pods: default\/agent-x(;|$)/, blocked.stderr);
    assert.match(warning, /deleting Pods that declare no controller: default\/db-a, default\/db-b(;|$)/, blocked.stderr);
    assert.match(blocked.stderr, /error when evicting pods\/"db-[ab]" -n "default" \(will retry after 5s\): Cannot evict pod as it would violate the pod's disruption budget\./);
    const node = (await http(base(), 'GET', '/api/v1/nodes/drain-me')).body;
    assert.equal((node['spec'] as JsonObject)['unschedulable'], true);
    const left = ((await http(base(), 'GET', `${PODS}?fieldSelector=spec.nodeName%3Ddrain-me`)).body['items'] as JsonObject[]).map((p) => (p['metadata'] as JsonObject)['name']).sort();
    assert.equal(left.length, 2, `one db pod evicted, the other held by its budget: ${left.join(', ')}`);

    // The budget lowered: the drain's retry goes through and it finishes.
    assert.equal((await http(base(), 'PATCH', `${POLICY}/db`, { spec: { minAvailable: 0 } }, 'application/merge-patch+json')).status, 200);
    const done = await kubectl(tb.kubeconfigPath, [...drain, '--timeout=30s']);
    assert.equal(done.code, 0, done.stderr);
    assert.match(done.stdout, /node\/drain-me drained/);
    const remaining = ((await http(base(), 'GET', `${PODS}?fieldSelector=spec.nodeName%3Ddrain-me`)).body['items'] as JsonObject[]).map((p) => (p['metadata'] as JsonObject)['name']);
    assert.deepEqual(remaining, ['agent-x'], 'only the DaemonSet pod stays');
  });
});
