// Conformance of the testbed API server's REST verbs against what kube-apiserver does.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CoreV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { eventually } from '@podvirt/test-support';
import { http, podManifest, startTestApiServer, type TestApiServer } from './testbed-helpers.js';

describe('testbed API server: CRUD', () => {
  let tb: TestApiServer;
  let core: CoreV1Api;
  let base: string;
  const podsPath = '/api/v1/namespaces/default/pods';
  before(async () => {
    tb = await startTestApiServer();
    core = tb.kubeConfig.makeApiClient(CoreV1Api);
    base = tb.server.url;
  });
  after(() => tb.close());

  test('discovery lists kinds, verbs, short names and subresources', async () => {
    const core1 = await http(base, 'GET', '/api/v1');
    const resources = core1.body['resources'] as Array<Record<string, unknown>>;
    const pods = resources.find((r) => r['name'] === 'pods');
    assert.deepEqual(pods?.['shortNames'], ['po']);
    assert.ok((pods?.['verbs'] as string[]).includes('watch'));
    for (const sub of ['pods/status', 'pods/binding', 'pods/log', 'nodes/status']) {
      assert.ok(resources.some((r) => r['name'] === sub), sub);
    }
    const kv = await http(base, 'GET', '/apis/kubevirt.io/v1');
    const vmis = (kv.body['resources'] as Array<Record<string, unknown>>).find((r) => r['name'] === 'virtualmachineinstances');
    assert.deepEqual(vmis?.['shortNames'], ['vmi', 'vmis']);
    assert.deepEqual(vmis?.['categories'], ['all']);
    const groups = await http(base, 'GET', '/apis');
    const names = (groups.body['groups'] as Array<Record<string, unknown>>).map((g) => g['name']);
    // Besides what the components use, the kinds of the install manifests (stored only, for
    // `kubectl apply`), and StorageClasses for persistent volumes.
    assert.deepEqual(names.sort(), [
      'admissionregistration.k8s.io', 'apiextensions.k8s.io', 'apiregistration.k8s.io', 'apps', 'coordination.k8s.io', 'events.k8s.io', 'kubevirt.io', 'policy', 'rbac.authorization.k8s.io',
      'storage.k8s.io',
    ]);
    assert.equal((await http(base, 'GET', '/version')).body['major'], '1');
  });

  test('create sets uid, creationTimestamp, generation, resourceVersion and generateName', async () => {
    const pod = await core.createNamespacedPod({ namespace: 'default', body: { metadata: { generateName: 'gen-' }, spec: podManifest('x')['spec'] as never } });
    assert.match(pod.metadata?.name ?? '', /^gen-[a-z0-9]{5}$/);
    assert.match(pod.metadata?.uid ?? '', /^[0-9a-f-]{36}$/);
    assert.ok(pod.metadata?.creationTimestamp instanceof Date);
    assert.equal(pod.metadata?.generation, 1);
    assert.equal(pod.status?.phase, 'Pending');
    const again = await http(base, 'POST', podsPath, { ...podManifest(pod.metadata?.name ?? '') });
    assert.equal(again.status, 409);
    assert.deepEqual(again.body, {
      kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure',
      message: `pods "${pod.metadata?.name ?? ''}" already exists`, reason: 'AlreadyExists',
      details: { name: pod.metadata?.name ?? '', kind: 'pods' }, code: 409,
    });
  });

  test('get and list of a missing object answer NotFound with a Status body', async () => {
    const res = await http(base, 'GET', `${podsPath}/nope`);
    assert.equal(res.status, 404);
    assert.equal(res.body['reason'], 'NotFound');
    assert.equal(res.body['message'], 'pods "nope" not found');
    const ns = await http(base, 'POST', '/api/v1/namespaces/missing/pods', podManifest('a'));
    assert.equal(ns.status, 404);
    assert.equal(ns.body['message'], 'namespaces "missing" not found');
  });

  test('pods are validated: containers and image required', async () => {
    const res = await http(base, 'POST', podsPath, { metadata: { name: 'Bad_Name' }, spec: { containers: [{ name: 'c' }] } });
    assert.equal(res.status, 422);
    assert.equal(res.body['reason'], 'Invalid');
    const causes = (res.body['details'] as { causes: Array<{ field: string }> }).causes.map((c) => c.field);
    assert.deepEqual(causes, ['metadata.name', 'spec.containers[0].image']);
    const none = await http(base, 'POST', podsPath, { metadata: { name: 'empty' }, spec: { containers: [] } });
    assert.match(String(none.body['message']), /spec\.containers: Required value/);
  });

  test('update with a stale resourceVersion is a 409 Conflict; generation follows spec changes only', async () => {
    const ns = await core.createNamespace({ body: { metadata: { name: 'upd' } } });
    const stale = structuredClone(ns);
    const updated = await core.replaceNamespace({ name: 'upd', body: { ...ns, metadata: { ...ns.metadata, labels: { a: 'b' } } } });
    assert.notEqual(updated.metadata?.resourceVersion, ns.metadata?.resourceVersion);
    assert.equal(updated.metadata?.generation, 1);
    const res = await http(base, 'PUT', '/api/v1/namespaces/upd', { ...stale, metadata: { ...stale.metadata, labels: { a: 'c' } } });
    assert.equal(res.status, 409);
    assert.equal(res.body['reason'], 'Conflict');
    assert.equal(res.body['message'], 'Operation cannot be fulfilled on namespaces "upd": the object has been modified; please apply your changes to the latest version and try again');
    const specChange = await http(base, 'PUT', '/api/v1/namespaces/upd', { metadata: { name: 'upd' }, spec: { finalizers: ['kubernetes', 'x/y'] } });
    assert.equal((specChange.body['metadata'] as { generation: number }).generation, 2);
    const noop = await http(base, 'PUT', '/api/v1/namespaces/upd', specChange.body);
    assert.equal((noop.body['metadata'] as { resourceVersion: string }).resourceVersion, (specChange.body['metadata'] as { resourceVersion: string }).resourceVersion);
  });

  test('JSON merge, JSON patch and strategic merge patch', async () => {
    await core.createNamespacedPod({ namespace: 'default', body: podManifest('patchme', { spec: { containers: [{ name: 'a', image: 'busybox' }, { name: 'b', image: 'busybox' }], volumes: [{ name: 'v1', emptyDir: {} }, { name: 'v2', emptyDir: {} }] } }) as never });
    const merged = await core.patchNamespacedPod({ namespace: 'default', name: 'patchme', body: { metadata: { labels: { merged: 'yes', app: null } } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
    assert.deepEqual(merged.metadata?.labels, { merged: 'yes' });
    const jsonPatched = await core.patchNamespacedPod({ namespace: 'default', name: 'patchme', body: [
      { op: 'test', path: '/metadata/labels/merged', value: 'yes' },
      { op: 'add', path: '/metadata/annotations', value: { note: 'x' } },
      { op: 'replace', path: '/spec/containers/0/image', value: 'busybox:2' },
    ] }, setHeaderOptions('Content-Type', PatchStrategy.JsonPatch));
    assert.equal(jsonPatched.spec?.containers[0]?.image, 'busybox:2');
    assert.equal(jsonPatched.metadata?.annotations?.['note'], 'x');
    const failedTest = await http(base, 'PATCH', `${podsPath}/patchme`, [{ op: 'test', path: '/metadata/labels/merged', value: 'no' }], 'application/json-patch+json');
    assert.equal(failedTest.status, 422);
    const smp = await core.patchNamespacedPod({ namespace: 'default', name: 'patchme', body: {
      spec: { containers: [{ name: 'b', image: 'busybox:3' }] },
    } }, setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch));
    assert.deepEqual(smp.spec?.containers.map((c) => [c.name, c.image]), [['a', 'busybox:2'], ['b', 'busybox:3']]);
    assert.deepEqual(smp.spec?.volumes?.map((v) => v.name), ['v1', 'v2']);
    // Dropping a volume by merge key is well-formed, but pod specs are immutable there.
    const dropVolume = await http(base, 'PATCH', `${podsPath}/patchme`, { spec: { volumes: [{ name: 'v1', $patch: 'delete' }] } }, 'application/strategic-merge-patch+json');
    assert.equal(dropVolume.status, 422);
    const conditions = await core.patchNamespacedPodStatus({ namespace: 'default', name: 'patchme', body: {
      status: { conditions: [{ type: 'Ready', status: 'False' }, { type: 'Custom', status: 'True' }] },
    } }, setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch));
    assert.equal(conditions.status?.conditions?.length, 2);
    const ready = await core.patchNamespacedPodStatus({ namespace: 'default', name: 'patchme', body: {
      status: { conditions: [{ type: 'Ready', status: 'True' }, { type: 'Custom', $patch: 'delete' }] },
    } }, setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch));
    assert.deepEqual(ready.status?.conditions?.map((c) => [c.type, c.status]), [['Ready', 'True']]);
    const unsupported = await http(base, 'PATCH', `${podsPath}/patchme`, {}, 'application/apply-patch+yaml');
    assert.equal(unsupported.status, 415);
  });

  test('status subresource: main writes ignore status, status writes ignore the rest', async () => {
    const pod = await core.createNamespacedPod({ namespace: 'default', body: podManifest('statusy') as never });
    const main = await core.replaceNamespacedPod({ namespace: 'default', name: 'statusy', body: { ...pod, metadata: { ...pod.metadata, labels: { changed: 'yes' } }, status: { phase: 'Running' } } });
    assert.equal(main.status?.phase, 'Pending');
    assert.equal(main.metadata?.labels?.['changed'], 'yes');
    const status = await core.replaceNamespacedPodStatus({ namespace: 'default', name: 'statusy', body: { ...main, metadata: { ...main.metadata, labels: {} }, spec: { containers: [{ name: 'zzz', image: 'other' }] }, status: { phase: 'Running', podIP: '10.0.0.9' } } });
    assert.equal(status.status?.phase, 'Running');
    assert.equal(status.metadata?.labels?.['changed'], 'yes');
    assert.equal(status.spec?.containers[0]?.name, 'main');
    const immutable = await http(base, 'PATCH', `${podsPath}/statusy`, { spec: { restartPolicy: 'Never' } }, 'application/merge-patch+json');
    assert.equal(immutable.status, 422);
    assert.match(String(immutable.body['message']), /spec: Forbidden: pod updates may not change fields/);
  });

  test('delete preconditions on uid and resourceVersion', async () => {
    const pod = await core.createNamespacedPod({ namespace: 'default', body: podManifest('precond') as never });
    const wrongUid = await http(base, 'DELETE', `${podsPath}/precond`, { preconditions: { uid: 'not-it' } });
    assert.equal(wrongUid.status, 409);
    assert.equal(wrongUid.body['message'], `Operation cannot be fulfilled on pods "precond": Precondition failed: UID in precondition: not-it, UID in object meta: ${pod.metadata?.uid ?? ''}`);
    const wrongRv = await http(base, 'DELETE', `${podsPath}/precond`, { preconditions: { resourceVersion: '1' } });
    assert.equal(wrongRv.status, 409);
    const ok = await http(base, 'DELETE', `${podsPath}/precond`, { preconditions: { uid: pod.metadata?.uid, resourceVersion: pod.metadata?.resourceVersion } });
    assert.equal(ok.status, 200);
    assert.equal((await http(base, 'GET', `${podsPath}/precond`)).status, 404);
  });

  test('finalizers hold deletion until removed', async () => {
    await core.createNamespacedPod({ namespace: 'default', body: podManifest('fin', { metadata: { name: 'fin', finalizers: ['example.com/hold'] } }) as never });
    const deleting = await core.deleteNamespacedPod({ namespace: 'default', name: 'fin' });
    assert.ok(deleting.metadata?.deletionTimestamp !== undefined);
    const still = await core.readNamespacedPod({ namespace: 'default', name: 'fin' });
    assert.deepEqual(still.metadata?.finalizers, ['example.com/hold']);
    await core.patchNamespacedPod({ namespace: 'default', name: 'fin', body: [{ op: 'remove', path: '/metadata/finalizers' }] }, setHeaderOptions('Content-Type', PatchStrategy.JsonPatch));
    assert.equal((await http(base, 'GET', `${podsPath}/fin`)).status, 404);
  });

  test('graceful pod deletion waits for the kubelet unless the pod is unbound', async () => {
    await core.createNamespacedPod({ namespace: 'default', body: podManifest('bound', { spec: { nodeName: 'n1', terminationGracePeriodSeconds: 20, containers: [{ name: 'c', image: 'busybox' }] } }) as never });
    const first = await core.deleteNamespacedPod({ namespace: 'default', name: 'bound' });
    assert.equal(first.metadata?.deletionGracePeriodSeconds, 20);
    const shorter = await core.deleteNamespacedPod({ namespace: 'default', name: 'bound', gracePeriodSeconds: 5 });
    assert.equal(shorter.metadata?.deletionGracePeriodSeconds, 5);
    assert.equal((await http(base, 'GET', `${podsPath}/bound`)).status, 200);
    const current = await core.readNamespacedPod({ namespace: 'default', name: 'bound' });
    await core.deleteNamespacedPod({ namespace: 'default', name: 'bound', gracePeriodSeconds: 0, body: { preconditions: { uid: current.metadata?.uid ?? '' } } });
    assert.equal((await http(base, 'GET', `${podsPath}/bound`)).status, 404);
    await core.createNamespacedPod({ namespace: 'default', body: podManifest('unbound') as never });
    await core.deleteNamespacedPod({ namespace: 'default', name: 'unbound' });
    assert.equal((await http(base, 'GET', `${podsPath}/unbound`)).status, 404);
  });

  test('binding assigns a node once', async () => {
    await core.createNamespacedPod({ namespace: 'default', body: podManifest('tobind') as never });
    await core.createNamespacedBinding({ namespace: 'default', body: { metadata: { name: 'tobind' }, target: { kind: 'Node', name: 'n1' } } });
    const pod = await core.readNamespacedPod({ namespace: 'default', name: 'tobind' });
    assert.equal(pod.spec?.nodeName, 'n1');
    assert.equal(pod.status?.conditions?.find((c) => c.type === 'PodScheduled')?.status, 'True');
    const again = await http(base, 'POST', `${podsPath}/tobind/binding`, { metadata: { name: 'tobind' }, target: { kind: 'Node', name: 'n2' } });
    assert.equal(again.status, 409);
    assert.equal(again.body['message'], 'Operation cannot be fulfilled on pods/binding "tobind": pod tobind is already assigned to node "n1"');
  });

  test('ownerReferences: background GC deletes dependents, orphan keeps them', async () => {
    const owner = await core.createNamespacedPod({ namespace: 'default', body: podManifest('owner') as never });
    const ref = { apiVersion: 'v1', kind: 'Pod', name: 'owner', uid: owner.metadata?.uid ?? '' };
    await core.createNamespacedPod({ namespace: 'default', body: podManifest('dependent', { metadata: { name: 'dependent', ownerReferences: [ref] } }) as never });
    await core.deleteNamespacedPod({ namespace: 'default', name: 'owner' });
    await eventually(async () => ((await http(base, 'GET', `${podsPath}/dependent`)).status === 404 ? true : undefined), { what: 'dependent collected', deadlineMs: 10_000 });
    const owner2 = await core.createNamespacedPod({ namespace: 'default', body: podManifest('owner2') as never });
    await core.createNamespacedPod({ namespace: 'default', body: podManifest('orphan', { metadata: { name: 'orphan', ownerReferences: [{ ...ref, name: 'owner2', uid: owner2.metadata?.uid ?? '' }] } }) as never });
    await core.deleteNamespacedPod({ namespace: 'default', name: 'owner2', propagationPolicy: 'Orphan' });
    await eventually(async () => (await core.readNamespacedPod({ namespace: 'default', name: 'orphan' })).metadata?.ownerReferences === undefined, { what: 'orphan released by its owner', deadlineMs: 10_000 });
  });

  test('foreground deletion keeps the owner until dependents are gone', async () => {
    const owner = await core.createNamespacedPod({ namespace: 'default', body: podManifest('fg-owner') as never });
    await core.createNamespacedPod({ namespace: 'default', body: podManifest('fg-dep', { metadata: { name: 'fg-dep', ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'fg-owner', uid: owner.metadata?.uid ?? '' }] } }) as never });
    const deleting = await core.deleteNamespacedPod({ namespace: 'default', name: 'fg-owner', propagationPolicy: 'Foreground' });
    assert.deepEqual(deleting.metadata?.finalizers, ['foregroundDeletion']);
    await eventually(async () => ((await http(base, 'GET', `${podsPath}/fg-owner`)).status === 404 ? true : undefined), { what: 'owner gone', deadlineMs: 10_000 });
    assert.equal((await http(base, 'GET', `${podsPath}/fg-dep`)).status, 404);
  });

  test('namespace deletion removes its content, then the namespace', async () => {
    await core.createNamespace({ body: { metadata: { name: 'doomed' } } });
    await core.createNamespacedPod({ namespace: 'doomed', body: podManifest('inside') as never });
    const ns = await http(base, 'DELETE', '/api/v1/namespaces/doomed');
    assert.equal((ns.body['status'] as { phase: string }).phase, 'Terminating');
    await eventually(async () => ((await http(base, 'GET', '/api/v1/namespaces/doomed')).status === 404 ? true : undefined), { what: 'namespace gone', deadlineMs: 10_000 });
  });

  test('dryRun=All validates without persisting', async () => {
    const res = await http(base, 'POST', `${podsPath}?dryRun=All`, podManifest('dry'));
    assert.equal(res.status, 201);
    assert.equal((await http(base, 'GET', `${podsPath}/dry`)).status, 404);
    const rv = tb.server.revision;
    await http(base, 'DELETE', `${podsPath}/statusy?dryRun=All`);
    assert.equal(tb.server.revision, rv);
  });

  test('label and field selectors, limit and continue', async () => {
    await core.createNamespace({ body: { metadata: { name: 'sel' } } });
    for (const [name, tier] of [['s1', 'web'], ['s2', 'db'], ['s3', 'web'], ['s4', 'cache']] as const) {
      await core.createNamespacedPod({ namespace: 'sel', body: podManifest(name, { metadata: { name, labels: { tier, ...(name === 's4' ? {} : { keep: 'x' }) } } }) as never });
    }
    const names = async (q: Record<string, string>): Promise<string[]> => {
      const list = await core.listNamespacedPod({ namespace: 'sel', ...q });
      return list.items.map((p) => p.metadata?.name ?? '');
    };
    assert.deepEqual(await names({ labelSelector: 'tier=web' }), ['s1', 's3']);
    assert.deepEqual(await names({ labelSelector: 'tier==web' }), ['s1', 's3']);
    assert.deepEqual(await names({ labelSelector: 'tier!=web' }), ['s2', 's4']);
    assert.deepEqual(await names({ labelSelector: 'tier in (db, cache)' }), ['s2', 's4']);
    assert.deepEqual(await names({ labelSelector: 'tier notin (db,cache),keep' }), ['s1', 's3']);
    assert.deepEqual(await names({ labelSelector: '!keep' }), ['s4']);
    assert.deepEqual(await names({ fieldSelector: 'metadata.name=s2' }), ['s2']);
    assert.deepEqual(await names({ fieldSelector: 'metadata.name!=s2,status.phase=Pending' }), ['s1', 's3', 's4']);
    assert.deepEqual(await names({ fieldSelector: 'spec.nodeName=' }), ['s1', 's2', 's3', 's4']);
    const bad = await http(base, 'GET', '/api/v1/namespaces/sel/pods?fieldSelector=spec.bogus%3Dx');
    assert.equal(bad.status, 400);
    assert.equal(bad.body['message'], 'field label not supported: spec.bogus');
    const page1 = await core.listNamespacedPod({ namespace: 'sel', limit: 3 });
    assert.equal(page1.items.length, 3);
    assert.equal(page1.metadata?.remainingItemCount, 1);
    const page2 = await core.listNamespacedPod({ namespace: 'sel', limit: 3, _continue: page1.metadata?._continue ?? '' });
    assert.deepEqual(page2.items.map((p) => p.metadata?.name), ['s4']);
  });
});
