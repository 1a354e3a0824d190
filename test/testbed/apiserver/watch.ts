import type { ServerResponse } from 'node:http';
import { ApiError } from './errors.js';
import type { JsonObject } from './json.js';
import type { ObjectFilter } from './object-filter.js';
import { apiVersionOf, type ResourceType } from './resource-type.js';
import type { Store, StoreEvent } from './store.js';

export interface WatchRequest {
  rt: ResourceType;
  namespace: string | undefined;
  filter: ObjectFilter;
  resourceVersion: string | undefined;
  allowBookmarks: boolean;
  sendInitialEvents: boolean;
  timeoutSeconds: number;
  bookmarkIntervalMs: number;
  /** Wire form of an object (conversion, or a Table row for kubectl's printers). */
  render(object: JsonObject, first: boolean): JsonObject;
}

/** A running watch. */
export interface WatchHandle {
  /** Ends the stream as a watch timeout does, or (`abrupt`) resets the connection as a dying apiserver does. */
  drop(abrupt: boolean): void;
  readonly done: Promise<void>;
}

/**
 * Streams watch events as newline-delimited JSON. Objects that stop (or start) matching the
 * selectors are sent as DELETED (or ADDED), as the watch cache does; a resourceVersion older
 * than the history yields an ERROR event with a 410 `Expired` status, then the stream ends.
 */
export function serveWatch(store: Store, res: ServerResponse, req: WatchRequest): WatchHandle {
  res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private' });
  res.flushHeaders();
  let first = true;
  const send = (type: string, object: JsonObject): void => {
    const rendered = type === 'BOOKMARK' || type === 'ERROR' ? object : req.render(object, first);
    if (type !== 'BOOKMARK' && type !== 'ERROR') first = false;
    res.write(`${JSON.stringify({ type, object: rendered })}\n`);
  };
  const bookmark = (annotations?: JsonObject): void => {
    const metadata: JsonObject = { resourceVersion: String(store.revision) };
    if (annotations !== undefined) metadata['annotations'] = annotations;
    send('BOOKMARK', { kind: req.rt.kind, apiVersion: apiVersionOf(req.rt), metadata });
  };
  const relevant = (e: StoreEvent): boolean =>
    e.storageKey === req.rt.storageKey && (req.namespace === undefined || e.namespace === req.namespace);
  const deliver = (e: StoreEvent): void => {
    if (!relevant(e)) return;
    const now = e.type !== 'DELETED' && req.filter(e.object);
    const before = e.previous !== undefined && req.filter(e.previous);
    if (now && before) send('MODIFIED', e.object);
    else if (now) send('ADDED', e.object);
    else if (before) send('DELETED', e.object);
  };

  const rv = req.resourceVersion;
  let backlog: StoreEvent[] = [];
  try {
    if (rv !== undefined && rv !== '' && rv !== '0') {
      const from = Number(rv);
      if (!Number.isInteger(from)) throw ApiError.badRequest(`invalid resource version: ${rv}`);
      backlog = store.since(from);
    }
  } catch (err) {
    const status = err instanceof ApiError ? err : ApiError.internal(err);
    send('ERROR', status.toStatus());
    res.end();
    return { drop: () => undefined, done: Promise.resolve() };
  }
  if (rv === undefined || rv === '' || rv === '0' || req.sendInitialEvents) {
    for (const object of store.list(req.rt.storageKey, req.namespace)) if (req.filter(object)) send('ADDED', object);
    if (req.sendInitialEvents && req.allowBookmarks) bookmark({ 'k8s.io/initial-events-end': 'true' });
  }
  for (const e of backlog) deliver(e);
  const unsubscribe = store.subscribe(deliver);
  const ticker = req.allowBookmarks ? setInterval(() => bookmark(), req.bookmarkIntervalMs) : undefined;
  ticker?.unref();
  const timeout = setTimeout(() => res.end(), req.timeoutSeconds * 1000);
  timeout.unref();
  const done = new Promise<void>((resolve) => {
    res.once('close', () => {
      unsubscribe();
      clearInterval(ticker);
      clearTimeout(timeout);
      resolve();
    });
  });
  return { drop: (abrupt) => (abrupt ? res.destroy() : res.end()), done };
}
