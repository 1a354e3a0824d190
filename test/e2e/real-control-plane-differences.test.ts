// The same requests against the in-repo API server and the real kube-apiserver (etcd and
// kube-apiserver from tools/build-binaries), both serving podvirt's CRDs, and their answers
// compared: unknown fields, validation, patch types, the status subresource,
// generation, field selectors, a watch from a compacted version, watch bookmarks (periodic, before
// the timeout, the end of the initial events) and the checks of sendInitialEvents, an invalid
// Event, an eviction against a PodDisruptionBudget. Where the
// in-repo server answered differently it was fixed; what stays different is in
// test/testbed/README.md ("Where the in-repo API server differed").
//
// PODVIRT_SKIP_REAL_CONTROL_PLANE=1 skips it, as real-control-plane.test.ts.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { eventually } from '@podvirt/test-support';
import { pino } from 'pino';
import { startApiServer, type ApiServer } from '../testbed/apiserver/index.js';
import { readPodvirtCrds } from '../testbed/cli/podvirt-crds.js';
import { applyCrds } from '../testbed/control-plane/install-podvirt.js';
import { RealControlPlane } from '../testbed/control-plane/real-control-plane.js';
import { ROOT } from './ship-manifests-helpers.js';

const skip = process.env['PODVIRT_SKIP_REAL_CONTROL_PLANE'] === '1' ? 'PODVIRT_SKIP_REAL_CONTROL_PLANE=1' : false;
const VMIS = '/apis/kubevirt.io/v1/namespaces/default/virtualmachineinstances';

interface Answer {
  readonly status: number;
  readonly body: Record<string, unknown>;
  readonly warning: string;
  /** The first line of a watch's stream. */
  readonly firstLine?: Record<string, unknown>;
  /** A watch's events up to its first BOOKMARK or ERROR, or all of them when it ends before one. */
  readonly lines?: ReadonlyArray<Record<string, unknown>>;
}

type Send = (method: string, path: string, body?: unknown, contentType?: string) => Promise<Answer>;

function answer(res: IncomingMessage, watch: boolean): Promise<Answer> {
  return new Promise((resolve) => {
    let text = '';
    const warning = String(res.headers['warning'] ?? '');
    const events = (): Array<Record<string, unknown>> => text.split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as Record<string, unknown>);
    const streamed = watch && res.statusCode === 200;
    res.on('data', (c: Buffer) => {
      text += c.toString();
      // A watch: its events up to the first BOOKMARK or ERROR are all we compare.
      const complete = text.slice(0, text.lastIndexOf('\n') + 1);
      if (streamed && complete.split('\n').some((l) => /^\{"type":"(BOOKMARK|ERROR)"/.test(l))) {
        const lines = events().slice(0, complete.split('\n').findIndex((l) => /^\{"type":"(BOOKMARK|ERROR)"/.test(l)) + 1);
        resolve({ status: res.statusCode ?? 0, body: {}, warning, firstLine: lines[0] ?? {}, lines });
        res.destroy();
      }
    });
    res.on('end', () => {
      if (streamed) {
        const lines = events();
        resolve({ status: res.statusCode ?? 0, body: {}, warning, firstLine: lines[0] ?? {}, lines });
      } else resolve({ status: res.statusCode ?? 0, body: text === '' ? {} : JSON.parse(text) as Record<string, unknown>, warning });
    });
    res.on('error', () => undefined);
  });
}

function vmi(name: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', metadata: { name }, spec: { domain: { devices: {}, resources: { requests: { memory: '64Mi' } } }, ...extra } };
}

const str = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v) ?? '');

describe('the in-repo API server answers as kube-apiserver does', { skip }, () => {
  let dir: string;
  let cp: RealControlPlane;
  let testbed: ApiServer;
  const servers: Array<[string, Send]> = [];
  const differences: string[] = [];
  const answers: string[] = [];

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'podvirt-cp-diff-'));
    cp = await RealControlPlane.start({ dir, repoRoot: ROOT, nodes: [], logger: pino({ level: 'silent' }) });
    await applyCrds(cp, cp.adminKubeconfig, [], dir);
    testbed = await startApiServer({ crds: await readPodvirtCrds() });
    const [ca, cert, key] = [cp.pki.caCert, cp.pki.admin.cert, cp.pki.admin.key].map((f) => readFileSync(f));
    const send = (base: string, tls: boolean): Send => (method, path, body, contentType = 'application/json') => new Promise((resolve, reject) => {
      const opts = { method, headers: { 'Content-Type': contentType, Accept: 'application/json' }, ...(tls ? { ca, cert, key } : {}) };
      const req = (tls ? httpsRequest : httpRequest)(`${base}${path}`, opts, (res) => void answer(res, path.includes('watch=true')).then(resolve));
      req.on('error', reject);
      req.end(body === undefined ? undefined : JSON.stringify(body));
    });
    servers.push(['testbed', send(testbed.url, false)], ['real', send(cp.url, true)]);
  });
  after(async () => {
    console.log(`kube-apiserver's answers:\n  ${answers.join('\n  ')}`);
    if (differences.length > 0) console.log(`differences:\n  ${differences.join('\n  ')}`);
    await testbed?.close();
    await cp?.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** Runs `probe` on both servers and compares what it returns. */
  async function same(what: string, probe: (send: Send) => Promise<unknown>): Promise<void> {
    const [[, tb], [, real]] = servers as [[string, Send], [string, Send]];
    const got = { testbed: await probe(tb), real: await probe(real) };
    answers.push(`${what}: ${JSON.stringify(got.real)}`);
    if (JSON.stringify(got.testbed) !== JSON.stringify(got.real)) differences.push(`${what}: testbed ${JSON.stringify(got.testbed)} | real ${JSON.stringify(got.real)}`);
    assert.deepEqual(got.testbed, got.real, what);
  }

  test('an unknown field in spec: kept, without a warning (the VMI schema preserves unknown fields under spec)', async () => {
    await same('unknown field', async (send) => {
      const a = await send('POST', VMIS, vmi('pruned', { bogus: 1 }));
      return { status: a.status, kept: (a.body['spec'] as Record<string, unknown> | undefined)?.['bogus'] !== undefined, warned: /unknown field "spec\.bogus"/.test(a.warning) };
    });
  });

  test('a VMI without spec.domain is refused with the field named', async () => {
    await same('missing spec.domain', async (send) => {
      const a = await send('POST', VMIS, { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', metadata: { name: 'nodomain' }, spec: {} });
      return { status: a.status, reason: a.body['reason'], message: a.body['message'] };
    });
  });

  test('a strategic merge patch of a custom resource is refused', async () => {
    await same('strategic merge patch', async (send) => {
      await send('POST', VMIS, vmi('smp'));
      const a = await send('PATCH', `${VMIS}/smp`, { metadata: { labels: { a: 'b' } } }, 'application/strategic-merge-patch+json');
      return { status: a.status, reason: a.body['reason'] };
    });
  });

  test('status only through its subresource, spec never through it; generation counts spec changes', async () => {
    await same('status subresource', async (send) => {
      const created = await send('POST', VMIS, vmi('sub'));
      const meta = created.body['metadata'] as { resourceVersion: string; generation?: number };
      const put = await send('PUT', `${VMIS}/sub`, { ...vmi('sub'), metadata: { name: 'sub', resourceVersion: meta.resourceVersion }, status: { phase: 'Running' } });
      const afterPut = put.body as { status?: { phase?: string }; metadata: { resourceVersion: string; generation?: number } };
      const status = await send('PUT', `${VMIS}/sub/status`, { ...vmi('sub', { hostname: 'changed' }), metadata: { name: 'sub', resourceVersion: afterPut.metadata.resourceVersion }, status: { phase: 'Scheduling' } });
      const afterStatus = status.body as { spec?: { hostname?: string }; status?: { phase?: string }; metadata: { generation?: number; resourceVersion: string } };
      const spec = await send('PATCH', `${VMIS}/sub`, { spec: { hostname: 'h' } }, 'application/merge-patch+json');
      return {
        created: [created.status, meta.generation],
        put: [put.status, afterPut.status?.phase ?? null, afterPut.metadata.generation],
        status: [status.status, afterStatus.status?.phase, afterStatus.spec?.hostname ?? null, afterStatus.metadata.generation],
        specPatch: [spec.status, (spec.body['metadata'] as { generation?: number }).generation],
      };
    });
  });

  test('field selectors: metadata.name works, a label the CRD does not declare is refused', async () => {
    await same('field selectors', async (send) => {
      await send('POST', VMIS, vmi('fs'));
      const byName = await send('GET', `${VMIS}?fieldSelector=${encodeURIComponent('metadata.name=fs')}`);
      const bad = await send('GET', `${VMIS}?fieldSelector=${encodeURIComponent('status.nodeName=x')}`);
      return { byName: [byName.status, (byName.body['items'] as unknown[]).length], bad: [bad.status, bad.body['reason'], bad.body['message']] };
    });
  });

  test('a watch from a version older than the history: an ERROR event with 410 Expired', async () => {
    // kube-apiserver's watch cache starts at its own start, so version 1 is history there already;
    // the in-repo server keeps its last 1000 changes resumable, whatever their age, until compacted.
    testbed.compact();
    await same('watch from a compacted version', async (send) => {
      const a = await send('GET', `${VMIS}?watch=true&resourceVersion=1`);
      const object = a.firstLine?.['object'] as { code?: number; reason?: string; message?: string } | undefined;
      return { status: a.status, type: a.firstLine?.['type'], code: object?.code, reason: object?.reason, message: /^too old resource version: 1 \(\d+\)$/.test(str(object?.message)) };
    });
  });

  test('an eviction spends the PodDisruptionBudget the disruption controller keeps, then 429 naming the budget', async () => {
    await same('eviction and budget', async (send) => {
      const pods = '/api/v1/namespaces/default/pods';
      const pdbs = '/apis/policy/v1/namespaces/default/poddisruptionbudgets';
      await send('POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'evict-node' } });
      for (const name of ['ev-a', 'ev-b']) {
        const made = await send('POST', pods, { apiVersion: 'v1', kind: 'Pod', metadata: { name, labels: { app: 'ev' } }, spec: { nodeName: 'evict-node', automountServiceAccountToken: false, containers: [{ name: 'c', image: 'busybox' }] } });
        assert.equal(made.status, 201, str(made.body));
        await send('PATCH', `${pods}/${name}/status`, { status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] } }, 'application/merge-patch+json');
      }
      await send('POST', pdbs, { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'ev' }, spec: { minAvailable: 1, selector: { matchLabels: { app: 'ev' } } } });
      const pdbStatus = async (): Promise<Record<string, unknown>> => ((await send('GET', `${pdbs}/ev`)).body['status'] ?? {}) as Record<string, unknown>;
      const settled = await eventually(async () => {
        const s = await pdbStatus();
        return s['observedGeneration'] === 1 && s['currentHealthy'] === 2 ? s : undefined;
      }, { what: 'budget settled', deadlineMs: 20_000 });
      const eviction = (name: string): Record<string, unknown> => ({ apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name } });
      const first = await send('POST', `${pods}/ev-a/eviction`, eviction('ev-a'));
      const evicted = (await send('GET', `${pods}/ev-a`)).body as { metadata?: { deletionTimestamp?: string }; status?: { conditions?: Array<Record<string, unknown>> } };
      await eventually(async () => ((await pdbStatus())['currentHealthy'] === 1 ? true : undefined), { what: 'budget after the eviction', deadlineMs: 20_000 });
      const second = await send('POST', `${pods}/ev-b/eviction`, eviction('ev-b'));
      const after = await pdbStatus();
      for (const name of ['ev-a', 'ev-b']) await send('DELETE', `${pods}/${name}?gracePeriodSeconds=0`);
      await send('DELETE', `${pdbs}/ev`);
      await send('DELETE', '/api/v1/nodes/evict-node');
      const condition = (settled['conditions'] as Array<Record<string, unknown>> | undefined)?.find((c) => c['type'] === 'DisruptionAllowed');
      return {
        settled: { currentHealthy: settled['currentHealthy'], desiredHealthy: settled['desiredHealthy'], expectedPods: settled['expectedPods'], disruptionsAllowed: settled['disruptionsAllowed'], condition: [condition?.['status'], condition?.['reason']] },
        first: [first.status, first.body['status']],
        evicted: [evicted.metadata?.deletionTimestamp !== undefined, evicted.status?.conditions?.find((c) => c['type'] === 'DisruptionTarget')?.['reason']],
        second: [second.status, second.body['reason'], second.body['message'], (second.body['details'] as Record<string, unknown> | undefined)?.['causes']],
        after: { currentHealthy: after['currentHealthy'], disruptionsAllowed: after['disruptionsAllowed'] },
      };
    });
  });

  /** A watch event as compared: its type, and its object's kind and apiVersion, name and annotations (resourceVersions differ between servers). */
  const shape = (e: Record<string, unknown>): unknown => {
    const o = e['object'] as { kind?: string; apiVersion?: string; metadata?: { name?: string; annotations?: unknown; resourceVersion?: string } };
    return [e['type'], o.kind, o.apiVersion, o.metadata?.name ?? null, o.metadata?.annotations ?? null, typeof o.metadata?.resourceVersion];
  };

  test('sendInitialEvents: the current objects, then a BOOKMARK annotated k8s.io/initial-events-end at a version not older than theirs', async () => {
    await same('sendInitialEvents', async (send) => {
      await send('POST', VMIS, vmi('initial'));
      const a = await send('GET', `${VMIS}?watch=true&timeoutSeconds=10&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&fieldSelector=${encodeURIComponent('metadata.name=initial')}`);
      const lines = a.lines ?? [];
      const rv = (e: Record<string, unknown> | undefined): number => Number((e?.['object'] as { metadata?: { resourceVersion?: string } } | undefined)?.metadata?.resourceVersion);
      return { status: a.status, events: lines.map(shape), bookmarkNotOlder: rv(lines.at(-1)) >= rv(lines[0]) };
    });
  });

  test('sendInitialEvents needs a watch, allowWatchBookmarks and resourceVersionMatch=NotOlderThan; NotOlderThan needs sendInitialEvents', async () => {
    const probes: Array<[string, string]> = [
      ['without allowWatchBookmarks', `${VMIS}?watch=true&timeoutSeconds=3&sendInitialEvents=true&resourceVersionMatch=NotOlderThan`],
      ['without resourceVersionMatch', `${VMIS}?watch=true&timeoutSeconds=3&sendInitialEvents=true&allowWatchBookmarks=true`],
      ['with resourceVersionMatch=Exact', `${VMIS}?watch=true&timeoutSeconds=3&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=Exact&resourceVersion=1`],
      ['on a list', `${VMIS}?sendInitialEvents=true&resourceVersionMatch=NotOlderThan`],
      ['NotOlderThan on a watch without it', `${VMIS}?watch=true&timeoutSeconds=3&resourceVersionMatch=NotOlderThan`],
    ];
    for (const [what, path] of probes) {
      await same(`sendInitialEvents ${what}`, async (send) => {
        const a = await send('GET', path);
        return { status: a.status, reason: a.body['reason'] ?? null, message: a.body['message'] ?? null, firstEvent: a.firstLine === undefined ? null : a.firstLine['type'] };
      });
    }
  });

  test('allowWatchBookmarks from a version: a BOOKMARK before the watch times out once a newer version exists; none on a quiet watch or without it', async () => {
    for (const [bookmarks, change] of [[true, true], [false, true], [true, false]] as const) {
      await same(`bookmark before the timeout (allowWatchBookmarks=${String(bookmarks)}, ${change ? 'a change outside the watch\'s selector' : 'no change'})`, async (send) => {
        const created = await send('POST', VMIS, vmi(`bm-${String(bookmarks)}-${String(change)}`));
        const rv = (created.body['metadata'] as { resourceVersion: string }).resourceVersion;
        const watching = send('GET', `${VMIS}?watch=true&timeoutSeconds=5&labelSelector=probe%3Dnone&resourceVersion=${rv}${bookmarks ? '&allowWatchBookmarks=true' : ''}`);
        if (change) {
          await new Promise((resolve) => setTimeout(resolve, 500));
          await send('POST', VMIS, vmi(`bm-${String(bookmarks)}-${String(change)}-later`));
        }
        const a = await watching;
        return { status: a.status, events: (a.lines ?? []).map(shape) };
      });
    }
  });

  test('an Event that names no object: accepted (core/v1 Events do not require involvedObject)', async () => {
    await same('invalid Event', async (send) => {
      const a = await send('POST', '/api/v1/namespaces/default/events', { apiVersion: 'v1', kind: 'Event', metadata: { name: 'e1' }, reason: 'X', message: 'm' });
      return { status: a.status, reason: a.body['reason'], causes: ((a.body['details'] as { causes?: Array<{ field?: string }> } | undefined)?.causes ?? []).map((c) => c.field).sort() };
    });
  });
});
