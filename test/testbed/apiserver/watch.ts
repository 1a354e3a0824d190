import type { ServerResponse } from 'node:http';
import { ApiError, type StatusCause } from './errors.js';
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
  /** `sendInitialEvents`: undefined when the query does not set it. */
  sendInitialEvents: boolean | undefined;
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

const forbidden = (field: string, message: string): StatusCause => ({ reason: 'FieldValueForbidden', field, message: `Forbidden: ${message}` });

/**
 * kube-apiserver's checks of a list's or watch's resourceVersionMatch and sendInitialEvents
 * (ListOptions validation, with the WatchList feature on as in 1.34): on a list,
 * resourceVersionMatch needs a resourceVersion and no continue, is Exact or NotOlderThan (not
 * Exact for "0"), and sendInitialEvents is refused; on a watch, sendInitialEvents needs
 * resourceVersionMatch=NotOlderThan, and resourceVersionMatch needs sendInitialEvents and is only
 * NotOlderThan. Throws 422 Invalid of ListOptions naming each field, as kube-apiserver answers.
 */
export function checkListOptions(query: URLSearchParams, watching: boolean): void {
  const causes: StatusCause[] = [];
  const match = query.get('resourceVersionMatch') ?? '';
  const rv = query.get('resourceVersion') ?? '';
  const cont = query.get('continue') ?? '';
  const sendInitialEvents = query.get('sendInitialEvents') !== null;
  const unsupported = (supported: readonly string[]): StatusCause => ({
    reason: 'FieldValueNotSupported',
    field: 'resourceVersionMatch',
    message: `Unsupported value: "${match}": supported values: ${supported.map((v) => `"${v}"`).join(', ')}`,
  });
  if (!watching) {
    if (match !== '') {
      if (rv === '') causes.push(forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden unless resourceVersion is provided'));
      if (cont !== '') causes.push(forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'));
      if (match !== 'Exact' && match !== 'NotOlderThan') causes.push(unsupported(['Exact', 'NotOlderThan', '']));
      if (match === 'Exact' && rv === '0') causes.push(forbidden('resourceVersionMatch', 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'));
    }
    if (sendInitialEvents) causes.push(forbidden('sendInitialEvents', 'sendInitialEvents is forbidden for list'));
  } else {
    if (sendInitialEvents && match !== 'NotOlderThan') causes.push(forbidden('resourceVersionMatch', 'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan'));
    if (match !== '') {
      if (!sendInitialEvents) causes.push(forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided'));
      if (match !== 'NotOlderThan') causes.push(unsupported(['NotOlderThan']));
      if (cont !== '') causes.push(forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'));
    }
  }
  if (causes.length > 0) throw ApiError.invalid({ group: 'meta.k8s.io', resource: 'ListOptions', kind: 'ListOptions', name: '' }, causes);
}

/** kube-apiserver sends a watch with bookmarks one this long before its timeout ends it. */
const BOOKMARK_BEFORE_TIMEOUT_MS = 2_000;

/**
 * Streams watch events as newline-delimited JSON. Objects that stop (or start) matching the
 * selectors are sent as DELETED (or ADDED), as the watch cache does; a resourceVersion older
 * than the history yields an ERROR event with a 410 `Expired` status, then the stream ends.
 * With `sendInitialEvents=true` (resourceVersionMatch=NotOlderThan, checked before) the current
 * objects come first whatever the resourceVersion, then, with bookmarks allowed, a BOOKMARK
 * annotated `k8s.io/initial-events-end`. With bookmarks allowed, a BOOKMARK comes every
 * `bookmarkIntervalMs` and 2 s before the timeout, as kube-apiserver's watch cache sends them,
 * once the store has a version newer than the one the watch started from.
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
  // kube-apiserver sends a bookmark only at a version newer than the one the watch started
  // from (the end of the initial events aside): a watch on which nothing newer is known gets none.
  const startRevision = req.resourceVersion !== undefined && /^[1-9]\d*$/.test(req.resourceVersion) && req.sendInitialEvents !== true ? Number(req.resourceVersion) : store.revision;
  const progress = (): void => {
    if (store.revision > startRevision) bookmark();
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
    // sendInitialEvents asks for a state not older than rv: the current one, with no history.
    if (rv !== undefined && rv !== '' && rv !== '0' && req.sendInitialEvents !== true) {
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
  // Without a resourceVersion a watch starts with the current objects, unless sendInitialEvents=false.
  if (req.sendInitialEvents === true || ((rv === undefined || rv === '' || rv === '0') && req.sendInitialEvents !== false)) {
    for (const object of store.list(req.rt.storageKey, req.namespace)) if (req.filter(object)) send('ADDED', object);
    if (req.sendInitialEvents === true && req.allowBookmarks) bookmark({ 'k8s.io/initial-events-end': 'true' });
  }
  for (const e of backlog) deliver(e);
  const unsubscribe = store.subscribe(deliver);
  const ticker = req.allowBookmarks ? setInterval(progress, req.bookmarkIntervalMs) : undefined;
  ticker?.unref();
  const timeoutMs = req.timeoutSeconds * 1000;
  const lastBookmark = req.allowBookmarks && timeoutMs > BOOKMARK_BEFORE_TIMEOUT_MS ? setTimeout(progress, timeoutMs - BOOKMARK_BEFORE_TIMEOUT_MS) : undefined;
  lastBookmark?.unref();
  const timeout = setTimeout(() => res.end(), timeoutMs);
  timeout.unref();
  const done = new Promise<void>((resolve) => {
    res.once('close', () => {
      unsubscribe();
      clearInterval(ticker);
      clearTimeout(lastBookmark);
      clearTimeout(timeout);
      resolve();
    });
  });
  return { drop: (abrupt) => (abrupt ? res.destroy() : res.end()), done };
}
