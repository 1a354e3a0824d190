// The handler's Kubernetes adapters (KubeVmiApi, kube-runtime's KubeEventSink, KubeNodePatcher) over the thin
// client against a real HTTP server on port 0: the paths, verbs, content types and query
// parameters they send, the status subresource, and how API failures become HandlerError codes
// — including the informer relisting when a watch answers 410.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { test, type TestContext } from 'node:test';
import { KubeClient, KubeEventSink, MERGE_PATCH, type CoreEvent } from '@podvirt/kube-runtime';
import { KubeNodePatcher } from '../src/heartbeat/kube-node-patcher.js';
import { KubeVmiApi } from '../src/kube/kube-vmi-api.js';
import { VmiInformer } from '../src/kube/vmi-informer.js';
import { eventually } from '@podvirt/test-support';
import { makeVmi, quietLog } from './fixtures.js';

interface Seen {
  method: string;
  url: URL;
  contentType: string | undefined;
  body: unknown;
}

type Reply = (seen: Seen, res: ServerResponse) => void;

const VMIS = '/apis/kubevirt.io/v1/virtualmachineinstances';
const SELECTOR = 'kubevirt.io/nodeName=node01';

async function apiServer(t: TestContext, reply: Reply): Promise<{ client: KubeClient; seen: Seen[]; sockets: Set<Socket> }> {
  const seen: Seen[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString();
      const s = { method: req.method ?? '', url: new URL(req.url ?? '/', 'http://x'), contentType: req.headers['content-type'], body: text === '' ? undefined : JSON.parse(text) as unknown };
      seen.push(s);
      reply(s, res);
    });
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.after(() => new Promise<void>((resolve) => {
    for (const s of sockets) s.destroy();
    server.close(() => resolve());
  }));
  const client = await KubeClient.create({ server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, insecureSkipTlsVerify: true });
  t.after(() => client.close());
  return { client, seen, sockets };
}

function json(res: ServerResponse, code: number, body: unknown): void {
  res.writeHead(code, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
}

function failure(code: number, reason: string): object {
  return { kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason, message: `${reason} from the test server` };
}

test('VMI list, get and status update: paths, selector, status subresource, 404 and 409', async (t) => {
  const vmi = makeVmi();
  const { client, seen } = await apiServer(t, (s, res) => {
    if (s.method === 'GET' && s.url.pathname === VMIS) return json(res, 200, { items: [vmi], metadata: { resourceVersion: '42' } });
    if (s.url.pathname.endsWith('/vm1/status')) return s.body !== undefined && (s.body as typeof vmi).metadata.resourceVersion === 'stale'
      ? json(res, 409, failure(409, 'Conflict'))
      : json(res, 200, { ...(s.body as object), written: true });
    if (s.url.pathname.endsWith('/vm1')) return json(res, 200, vmi);
    return json(res, 404, failure(404, 'NotFound'));
  });
  const api = new KubeVmiApi(client);
  const signal = AbortSignal.timeout(5_000);
  assert.deepEqual(await api.list(SELECTOR, signal), { items: [vmi], resourceVersion: '42' });
  assert.equal(seen[0]?.url.searchParams.get('labelSelector'), SELECTOR);
  assert.deepEqual(await api.get('default', 'vm1', signal), vmi);
  assert.equal(seen[1]?.url.pathname, '/apis/kubevirt.io/v1/namespaces/default/virtualmachineinstances/vm1');
  assert.equal(await api.get('default', 'gone', signal), undefined);
  const written = await api.updateStatus(vmi, signal);
  assert.equal((written as unknown as { written: boolean }).written, true);
  assert.equal(seen[3]?.method, 'PUT');
  assert.equal(seen[3].url.pathname, '/apis/kubevirt.io/v1/namespaces/default/virtualmachineinstances/vm1/status');
  const stale = makeVmi();
  stale.metadata.resourceVersion = 'stale';
  await assert.rejects(api.updateStatus(stale, signal), { code: 'HANDLER_ERR_CONFLICT' });
  await assert.rejects(api.updateStatus(vmi, AbortSignal.abort()), { code: 'HANDLER_ERR_ABORTED' });
});

test('VMI watch: resume parameters, events delivered, server end resolves, 410 rejects, abort resolves', async (t) => {
  let mode: 'stream' | 'expired' | 'hang' = 'stream';
  const { client, seen, sockets } = await apiServer(t, (_s, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    if (mode === 'expired') return void res.end(`${JSON.stringify({ type: 'ERROR', object: failure(410, 'Expired') })}\n`);
    const vmi = makeVmi();
    vmi.metadata.resourceVersion = '43';
    res.write(`${JSON.stringify({ type: 'MODIFIED', object: vmi })}\n`);
    if (mode === 'stream') res.end(`${JSON.stringify({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '44' } } })}\n`);
  });
  const api = new KubeVmiApi(client);
  const events: string[] = [];
  await api.watch(SELECTOR, '42', (e) => events.push(`${e.type} ${e.object.metadata.resourceVersion ?? ''}`), AbortSignal.timeout(5_000));
  assert.deepEqual(events, ['MODIFIED 43', 'BOOKMARK 44']);
  const q = seen[0]?.url.searchParams;
  assert.equal(q?.get('watch'), 'true');
  assert.equal(q.get('resourceVersion'), '42');
  assert.equal(q.get('labelSelector'), SELECTOR);
  assert.equal(q.get('allowWatchBookmarks'), 'true');
  assert.equal(q.get('timeoutSeconds'), '300');

  mode = 'expired';
  await assert.rejects(api.watch(SELECTOR, '1', () => undefined, AbortSignal.timeout(5_000)), { code: 'HANDLER_ERR_WATCH_EXPIRED' });

  mode = 'hang';
  const ac = new AbortController();
  const watching = api.watch(SELECTOR, '42', () => ac.abort(), ac.signal);
  await watching;
  assert.equal(ac.signal.aborted, true);
  await eventually(() => sockets.size === 0);
});

test('the informer relists when the watch answers 410', async (t) => {
  let lists = 0;
  let watches = 0;
  const { client } = await apiServer(t, (s, res) => {
    if (s.url.searchParams.get('watch') !== 'true') {
      lists++;
      return json(res, 200, { items: [makeVmi()], metadata: { resourceVersion: String(10 * lists) } });
    }
    watches++;
    res.writeHead(200, { 'Content-Type': 'application/json' });
    // The first watch is too old; the one after the relist stays open.
    if (watches === 1) res.end(`${JSON.stringify({ type: 'ERROR', object: failure(410, 'Expired') })}\n`);
  });
  const informer = new VmiInformer({ api: new KubeVmiApi(client), labelSelector: SELECTOR, resyncPeriodMs: 60_000, log: quietLog(), retryMs: 10, onEvent: () => undefined });
  informer.start();
  t.after(() => informer.close());
  await eventually(() => watches === 2);
  assert.equal(lists, 2);
});

test('events are created and merge-patched; the node is merge-patched on metadata only', async (t) => {
  const { client, seen } = await apiServer(t, (s, res) => {
    if (s.url.pathname.endsWith('/events/gone')) return json(res, 404, failure(404, 'NotFound'));
    if (s.method === 'POST') return json(res, 201, { ...(s.body as object), metadata: { name: 'ev.1', namespace: 'default', resourceVersion: '7' } });
    return json(res, 200, s.body);
  });
  const events = new KubeEventSink(client);
  const signal = AbortSignal.timeout(5_000);
  const event: CoreEvent = {
    apiVersion: 'v1', kind: 'Event', metadata: { name: 'ev.1', namespace: 'default' },
    involvedObject: { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', namespace: 'default', name: 'vm1', uid: 'uid-1' },
    reason: 'Started', message: 'VMI started', type: 'Normal', source: { component: 'virt-handler', host: 'node01' },
    count: 1, firstTimestamp: '2025-01-01T00:00:00Z', lastTimestamp: '2025-01-01T00:00:00Z', reportingComponent: 'virt-handler', reportingInstance: 'node01',
  };
  assert.deepEqual(await events.create(event, signal), event);
  assert.equal(seen[0]?.url.pathname, '/api/v1/namespaces/default/events');
  assert.deepEqual(seen[0].body, event);
  const patch = { count: 2, lastTimestamp: '2025-01-01T00:01:00Z', message: 'again' };
  await events.patchCount('default', 'ev.1', patch, signal);
  assert.deepEqual({ method: seen[1]?.method, path: seen[1]?.url.pathname, type: seen[1]?.contentType, body: seen[1]?.body },
    { method: 'PATCH', path: '/api/v1/namespaces/default/events/ev.1', type: MERGE_PATCH, body: patch });
  await assert.rejects(events.patchCount('default', 'gone', patch, signal), { code: 'KUBE_ERR_NOT_FOUND' });

  await new KubeNodePatcher(client).patchMetadata('node01', { labels: { 'kubevirt.io/schedulable': 'true' } }, signal);
  const node = seen.at(-1);
  assert.deepEqual({ method: node?.method, path: node?.url.pathname, type: node?.contentType, body: node?.body },
    { method: 'PATCH', path: '/api/v1/nodes/node01', type: MERGE_PATCH, body: { metadata: { labels: { 'kubevirt.io/schedulable': 'true' } } } });
});
