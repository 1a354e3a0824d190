// etcd's own JSON gateway (/v3/kv/*, served on its client URL) for fault tests that act on etcd
// behind kube-apiserver's back: read the current revision, write a key (the revision moves on)
// and compact the history up to a revision, as the API server's periodic compaction does.
import { ControlPlaneError } from './control-plane-binaries.js';

const b64 = (s: string): string => Buffer.from(s).toString('base64');

async function call(etcdUrl: string, path: string, body: Record<string, unknown>): Promise<Record<string, unknown>> {
  const res = await fetch(`${etcdUrl}${path}`, { method: 'POST', body: JSON.stringify(body), signal: AbortSignal.timeout(10_000) });
  const text = await res.text();
  if (!res.ok) throw new ControlPlaneError('CONTROL_PLANE_ETCD_FAILED', `etcd ${path}: ${res.status} ${text}`);
  return JSON.parse(text) as Record<string, unknown>;
}

/** The store's current revision (what a write would be numbered after). */
export async function etcdRevision(etcdUrl: string): Promise<number> {
  const out = await call(etcdUrl, '/v3/kv/range', { key: b64('/'), count_only: true });
  return Number((out['header'] as { revision?: string } | undefined)?.revision ?? Number.NaN);
}

/** Writes `value` under `key`; returns the new revision. */
export async function etcdPut(etcdUrl: string, key: string, value: string): Promise<number> {
  const out = await call(etcdUrl, '/v3/kv/put', { key: b64(key), value: b64(value) });
  return Number((out['header'] as { revision?: string } | undefined)?.revision ?? Number.NaN);
}

/** Drops every revision older than `revision` (physical: returns once it is done). */
export async function etcdCompact(etcdUrl: string, revision: number): Promise<void> {
  await call(etcdUrl, '/v3/kv/compaction', { revision: String(revision), physical: true });
}
