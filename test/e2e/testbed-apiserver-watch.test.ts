// Watch semantics of the testbed API server: resume, bookmarks, 410 Expired, selector
// transitions, and client-node informers across dropped connections and forced relists.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { describe, test } from 'node:test';
import { CoreV1Api, makeInformer, PatchStrategy, setHeaderOptions, type V1Pod } from '@kubernetes/client-node';
import { eventually } from '@podvirt/test-support';
import { podManifest, startTestApiServer } from './testbed-helpers.js';
import { openWatch } from './testbed-watch-stream.js';

const pods = '/api/v1/namespaces/default/pods';

describe('testbed API server: watch', () => {
  test('a watch resumes after a resourceVersion and replays only later changes', async (t) => {
    const tb = await startTestApiServer();
    t.after(() => tb.close());
    const core = tb.kubeConfig.makeApiClient(CoreV1Api);
    await core.createNamespacedPod({ namespace: 'default', body: podManifest('before') as never });
    const rv = String(tb.server.revision);
    await core.createNamespacedPod({ namespace: 'default', body: podManifest('after') as never });
    await core.deleteNamespacedPod({ namespace: 'default', name: 'before' });
    const w = await openWatch(`${tb.server.url}${pods}?watch=true&resourceVersion=${rv}`);
    t.after(() => w.close());
    const events = await w.until((e) => e.length >= 2);
    assert.deepEqual(events.map((e) => [e.type, e.object.metadata?.name]), [['ADDED', 'after'], ['DELETED', 'before']]);
    await core.createNamespacedPod({ namespace: 'default', body: podManifest('live') as never });
    const live = await w.until((e) => e.length >= 3);
    assert.deepEqual([live[2]?.type, live[2]?.object.metadata?.name], ['ADDED', 'live']);
    assert.equal(Number(live[2]?.object.metadata?.resourceVersion), tb.server.revision);
  });

  test('a watch without resourceVersion starts with the current objects; bookmarks carry progress', async (t) => {
    const tb = await startTestApiServer({ bookmarkIntervalMs: 50 });
    t.after(() => tb.close());
    const core = tb.kubeConfig.makeApiClient(CoreV1Api);
    await core.createNamespacedPod({ namespace: 'default', body: podManifest('existing') as never });
    const w = await openWatch(`${tb.server.url}${pods}?watch=1&allowWatchBookmarks=true&fieldSelector=metadata.name%3Dexisting`);
    t.after(() => w.close());
    await w.until((e) => e.length >= 1);
    // A change the watch does not see (outside its selector) is progress a bookmark tells.
    await core.createNamespacedPod({ namespace: 'default', body: podManifest('unseen') as never });
    const events = await w.until((e) => e.some((x) => x.type === 'BOOKMARK'));
    assert.deepEqual([events[0]?.type, events[0]?.object.metadata?.name], ['ADDED', 'existing']);
    const bookmark = events.find((e) => e.type === 'BOOKMARK');
    assert.equal(bookmark?.object['kind'], 'Pod');
    assert.equal(bookmark?.object.metadata?.resourceVersion, String(tb.server.revision));
  });

  test('sendInitialEvents: the current objects whatever the resourceVersion, then the k8s.io/initial-events-end BOOKMARK; =false from a version: no initial objects', async (t) => {
    const tb = await startTestApiServer();
    t.after(() => tb.close());
    const core = tb.kubeConfig.makeApiClient(CoreV1Api);
    const old = String(tb.server.revision);
    await core.createNamespacedPod({ namespace: 'default', body: podManifest('one') as never });
    const w = await openWatch(`${tb.server.url}${pods}?watch=true&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&resourceVersion=${old}`);
    t.after(() => w.close());
    const events = await w.until((e) => e.some((x) => x.type === 'BOOKMARK'));
    // Not the change since `old` as well: the state not older than it, once.
    assert.deepEqual(events.map((e) => [e.type, e.object.metadata?.name]), [['ADDED', 'one'], ['BOOKMARK', undefined]]);
    assert.deepEqual(events[1]?.object.metadata?.annotations, { 'k8s.io/initial-events-end': 'true' });
    assert.equal(events[1]?.object.metadata?.resourceVersion, String(tb.server.revision));

    const quiet = await openWatch(`${tb.server.url}${pods}?watch=true&sendInitialEvents=false&resourceVersionMatch=NotOlderThan&resourceVersion=${tb.server.revision}`);
    t.after(() => quiet.close());
    await core.createNamespacedPod({ namespace: 'default', body: podManifest('two') as never });
    const later = await quiet.until((e) => e.length >= 1);
    assert.deepEqual(later.map((e) => [e.type, e.object.metadata?.name]), [['ADDED', 'two']]);
  });

  test('a watch with bookmarks gets one 2 s before its timeout ends it, once there is a newer version; without, none', async (t) => {
    const tb = await startTestApiServer();
    t.after(() => tb.close());
    const core = tb.kubeConfig.makeApiClient(CoreV1Api);
    for (const [bookmarks, change] of [[true, true], [false, true], [true, false]] as const) {
      const rv = tb.server.revision;
      const openedAt = Date.now();
      const w = await openWatch(`${tb.server.url}${pods}?watch=true&timeoutSeconds=3&labelSelector=app%3Dnone&resourceVersion=${rv}${bookmarks ? '&allowWatchBookmarks=true' : ''}`);
      t.after(() => w.close());
      if (change) await core.createNamespacedPod({ namespace: 'default', body: podManifest(`p-${String(bookmarks)}`) as never });
      const marks: number[] = [];
      if (bookmarks && change) {
        await w.until((e) => e.some((x) => x.type === 'BOOKMARK'));
        marks.push(Date.now() - openedAt);
      }
      await w.ended;
      const endedAfter = Date.now() - openedAt;
      const events = await w.until(() => true).catch(() => []);
      assert.deepEqual(events.map((e) => e.type), bookmarks && change ? ['BOOKMARK'] : []);
      if (bookmarks && change) assert.equal(events[0]?.object.metadata?.resourceVersion, String(rv + 1));
      // The server's 10 s interval never came: the one bookmark is the one before the timeout.
      for (const at of marks) assert.ok(at >= 900 && endedAfter - at >= 1500, `bookmark at ${at} ms, end at ${endedAfter} ms`);
    }
  });

  test('sendInitialEvents and resourceVersionMatch are checked as kube-apiserver checks them, 422 naming the field', async (t) => {
    const tb = await startTestApiServer();
    t.after(() => tb.close());
    const cases: Array<[string, string]> = [
      ['?watch=true&sendInitialEvents=true', 'resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan'],
      ['?watch=true&resourceVersionMatch=NotOlderThan', 'resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided'],
      ['?sendInitialEvents=true&resourceVersion=1&resourceVersionMatch=NotOlderThan', 'sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list'],
      ['?resourceVersionMatch=Exact', 'resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided'],
    ];
    for (const [query, message] of cases) {
      const res = await fetch(`${tb.server.url}${pods}${query}`);
      const body = await res.json() as { reason?: string; message?: string; details?: { causes?: Array<{ field?: string }> } };
      assert.equal(res.status, 422, query);
      assert.equal(body.reason, 'Invalid');
      assert.equal(body.message, `ListOptions.meta.k8s.io "" is invalid: ${message}`);
    }
  });

  test('a resourceVersion older than the history gets a 410 Expired ERROR event', async (t) => {
    const tb = await startTestApiServer({ historySize: 3 });
    t.after(() => tb.close());
    const core = tb.kubeConfig.makeApiClient(CoreV1Api);
    const old = String(tb.server.revision);
    for (const name of ['a', 'b', 'c', 'd', 'e']) await core.createNamespacedPod({ namespace: 'default', body: podManifest(name) as never });
    const w = await openWatch(`${tb.server.url}${pods}?watch=true&resourceVersion=${old}`);
    const [event] = await w.until((e) => e.length >= 1);
    await w.ended;
    assert.equal(event?.type, 'ERROR');
    assert.deepEqual(event?.object, {
      kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure',
      message: `too old resource version: ${old} (${tb.server.revision - 3})`, reason: 'Expired', code: 410,
    });
    const exact = await fetch(`${tb.server.url}${pods}?resourceVersion=${old}&resourceVersionMatch=Exact`);
    assert.equal(exact.status, 410);
    assert.equal(((await exact.json()) as { reason: string }).reason, 'Gone');
  });

  test('objects leaving or entering a selector are DELETED or ADDED for that watch', async (t) => {
    const tb = await startTestApiServer();
    t.after(() => tb.close());
    const core = tb.kubeConfig.makeApiClient(CoreV1Api);
    await core.createNamespacedPod({ namespace: 'default', body: podManifest('sel') as never });
    const w = await openWatch(`${tb.server.url}${pods}?watch=true&labelSelector=app%3Ddemo`);
    t.after(() => w.close());
    await w.until((e) => e.length === 1);
    await core.patchNamespacedPod({ namespace: 'default', name: 'sel', body: [{ op: 'replace', path: '/metadata/labels/app', value: 'other' }] }, setHeaderOptions('Content-Type', PatchStrategy.JsonPatch));
    await core.patchNamespacedPod({ namespace: 'default', name: 'sel', body: [{ op: 'replace', path: '/metadata/labels/app', value: 'demo' }] }, setHeaderOptions('Content-Type', PatchStrategy.JsonPatch));
    const events = await w.until((e) => e.length === 3);
    assert.deepEqual(events.map((e) => e.type), ['ADDED', 'DELETED', 'ADDED']);
  });

  test('an informer resumes after its watch ends or its connection resets, and relists after a forced 410', async (t) => {
    const tb = await startTestApiServer({ historySize: 5 });
    t.after(() => tb.close());
    const core = tb.kubeConfig.makeApiClient(CoreV1Api);
    let lists = 0;
    const informer = makeInformer<V1Pod>(tb.kubeConfig, pods, () => {
      lists += 1;
      return core.listNamespacedPod({ namespace: 'default' });
    });
    const deleted: string[] = [];
    let errors = 0;
    let stopped = false;
    let gate: Promise<void> = Promise.resolve();
    informer.on('delete', (p) => deleted.push(p.metadata?.name ?? ''));
    // client-node hands connection errors to the caller; restarting is the documented pattern.
    informer.on('error', () => {
      errors += 1;
      void gate.then(() => (stopped ? undefined : informer.start()));
    });
    await core.createNamespacedPod({ namespace: 'default', body: podManifest('one') as never });
    await informer.start();
    t.after(async () => {
      stopped = true;
      await informer.stop();
    });
    assert.deepEqual(informer.list().map((p) => p.metadata?.name), ['one']);
    await eventually(() => (tb.server.dropWatches() > 0 ? true : undefined), { what: 'watch open', deadlineMs: 10_000 });
    await core.createNamespacedPod({ namespace: 'default', body: podManifest('two') as never });
    await eventually(() => (informer.get('two', 'default') !== undefined ? true : undefined), { what: 'informer sees two', deadlineMs: 10_000 });
    await eventually(() => (tb.server.dropWatches({ abrupt: true }) > 0 ? true : undefined), { what: 'watch open again', deadlineMs: 10_000 });
    await core.createNamespacedPod({ namespace: 'default', body: podManifest('three') as never });
    await eventually(() => (informer.get('three', 'default') !== undefined ? true : undefined), { what: 'informer sees three', deadlineMs: 10_000 });
    assert.equal(errors, 1);
    assert.equal(lists, 1, 'a resumed watch starts from its resourceVersion, without relisting');

    // While the informer is away, more changes happen than the history holds: it comes back to a 410.
    let open = (): void => undefined;
    gate = new Promise((resolve) => (open = resolve));
    await eventually(() => (tb.server.dropWatches({ abrupt: true }) > 0 ? true : undefined), { what: 'watch open once more', deadlineMs: 10_000 });
    await eventually(() => (errors === 2 ? true : undefined), { what: 'error seen', deadlineMs: 10_000 });
    await core.deleteNamespacedPod({ namespace: 'default', name: 'one' });
    for (const n of ['x1', 'x2', 'x3', 'x4', 'x5', 'x6']) await core.createNamespacedPod({ namespace: 'default', body: podManifest(n) as never });
    open();
    await eventually(() => (lists === 2 && informer.list().length === 8 ? true : undefined), { what: 'relisted cache', deadlineMs: 10_000 });
    assert.equal(informer.get('one', 'default'), undefined);
    assert.ok(deleted.includes('one'));
  });

  test('kubectl get -w sees a change', async (t) => {
    const tb = await startTestApiServer();
    t.after(() => tb.close());
    const core = tb.kubeConfig.makeApiClient(CoreV1Api);
    await core.createNamespacedPod({ namespace: 'default', body: podManifest('watched') as never });
    const child = spawn('kubectl', ['--kubeconfig', tb.kubeconfigPath, 'get', 'pods', '-w', '--output-watch-events'], { stdio: ['ignore', 'pipe', 'pipe'] });
    t.after(() => child.kill());
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    await eventually(() => (out.includes('watched') ? true : undefined), { what: 'initial row', deadlineMs: 10_000 });
    await core.deleteNamespacedPod({ namespace: 'default', name: 'watched' });
    await eventually(() => (/DELETED\s+watched/.test(out) ? true : undefined), { what: 'deleted row', deadlineMs: 10_000 });
    assert.match(out, /EVENT\s+NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE/);
    assert.match(out, /ADDED\s+watched\s+0\/1\s+Pending/);
  });
});
