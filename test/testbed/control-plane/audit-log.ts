// kube-apiserver's audit log on the real lane (real-control-plane.ts writes it at Metadata level):
// one JSON object per line and per stage of a request. Read back as one event per request, it
// says who made each call (user, user agent), on what (verb, group/resource, subresource) and how
// it was answered; apiserver_request_total counts the same requests but has no user label.
import { readFile } from 'node:fs/promises';

export interface AuditEvent {
  readonly auditID: string;
  readonly stage: string;
  readonly verb: string;
  readonly requestURI: string;
  readonly user: { readonly username: string };
  readonly userAgent?: string;
  readonly objectRef?: { readonly apiGroup?: string; readonly resource?: string; readonly subresource?: string; readonly namespace?: string; readonly name?: string };
  readonly responseStatus?: { readonly code?: number; readonly reason?: string };
  readonly requestReceivedTimestamp: string;
  readonly annotations?: Readonly<Record<string, string>>;
}

/** The verbs that change something in etcd. */
export const WRITE_VERBS: ReadonlySet<string> = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);

/**
 * Every request in the log once, in the order received. A request has several lines (a watch
 * one when it starts, one when it ends): the last one seen wins, so a finished request carries
 * its final code; a watch cut by a kill -9 keeps the line of its start. A line cut by a kill is
 * skipped.
 */
export async function readAuditLog(path: string): Promise<AuditEvent[]> {
  const text = await readFile(path, 'utf8').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return '';
    throw err;
  });
  const byId = new Map<string, AuditEvent>();
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    let event: AuditEvent;
    try {
      event = JSON.parse(line) as AuditEvent;
    } catch {
      continue;
    }
    byId.set(event.auditID, event);
  }
  return [...byId.values()].sort((a, b) => Date.parse(a.requestReceivedTimestamp) - Date.parse(b.requestReceivedTimestamp));
}

/** `verb group/resource[/subresource]` (the core group is `core`), or `verb <request path>` for a non-resource URL. */
export function callOf(e: AuditEvent): string {
  const ref = e.objectRef;
  if (ref?.resource === undefined) return `${e.verb} ${e.requestURI.split('?')[0] ?? ''}`;
  const group = ref.apiGroup === undefined || ref.apiGroup === '' ? 'core' : ref.apiGroup;
  return `${e.verb} ${group}/${ref.resource}${ref.subresource === undefined ? '' : `/${ref.subresource}`}`;
}

/** The requests received in [from, to] (ms since the epoch), made by `username`. */
export function requestsOf(events: readonly AuditEvent[], username: string, from = 0, to = Number.POSITIVE_INFINITY): AuditEvent[] {
  return events.filter((e) => {
    const at = Date.parse(e.requestReceivedTimestamp);
    return e.user.username === username && at >= from && at <= to;
  });
}

/** How many requests per key, sorted by key. */
export function countBy(events: readonly AuditEvent[], key: (e: AuditEvent) => string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const e of events) counts.set(key(e), (counts.get(key(e)) ?? 0) + 1);
  return new Map([...counts].sort(([a], [b]) => a.localeCompare(b)));
}

/** The ServiceAccount's username as the API server authenticates its token. */
export function serviceAccountUser(namespace: string, name: string): string {
  return `system:serviceaccount:${namespace}:${name}`;
}

/** The writes `username` made in [from, to]: how many, and `verb group/resource ×n, …` for a message. */
export function writesOf(events: readonly AuditEvent[], username: string, from: number, to: number): { readonly count: number; readonly calls: string } {
  const writes = requestsOf(events, username, from, to).filter((e) => WRITE_VERBS.has(e.verb));
  return { count: writes.length, calls: [...countBy(writes, callOf)].map(([k, n]) => `${k} ×${n}`).join(', ') };
}
