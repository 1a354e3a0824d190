import { ApiError } from './errors.js';
import { meta, str, type JsonObject } from './json.js';
import { objectFilter } from './object-filter.js';
import type { ObjectService } from './object-service.js';
import { apiVersionOf, type ResourceType } from './resource-type.js';

export interface ListQuery {
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
  resourceVersion?: string;
  resourceVersionMatch?: string;
}

interface ContinueToken {
  rv: number;
  after: string;
}

/**
 * LIST: selectors, chunking with `limit`/`continue` (later chunks come from the same
 * revision, rebuilt from history, and expire with it), and `resourceVersionMatch=Exact`.
 */
export function listObjects(service: ObjectService, rt: ResourceType, namespace: string | undefined, query: ListQuery): JsonObject {
  const store = service.store;
  const filter = objectFilter(rt, query.labelSelector, query.fieldSelector);
  const token = query.continue !== undefined && query.continue !== '' ? decodeToken(query.continue) : undefined;
  let revision = store.revision;
  let items: JsonObject[];
  if (token !== undefined) {
    try {
      items = store.listAt(rt.storageKey, namespace, token.rv);
    } catch (err) {
      throw ApiError.expired(`The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter. (${(err as Error).message})`);
    }
    revision = token.rv;
  } else if (query.resourceVersionMatch === 'Exact' && query.resourceVersion !== undefined) {
    revision = Number(query.resourceVersion);
    if (!Number.isInteger(revision)) throw ApiError.badRequest(`invalid resource version: ${query.resourceVersion}`);
    if (revision > store.revision) throw new ApiError(504, 'Timeout', `Too large resource version: ${revision}, current: ${store.revision}`);
    items = store.listAt(rt.storageKey, namespace, revision);
  } else {
    items = store.list(rt.storageKey, namespace);
  }
  items = items.filter(filter);
  if (token !== undefined) items = items.filter((o) => keyOf(o) > token.after);
  const listMeta: JsonObject = { resourceVersion: String(revision) };
  if (query.limit !== undefined && query.limit > 0 && items.length > query.limit) {
    const remaining = items.length - query.limit;
    items = items.slice(0, query.limit);
    const last = items[items.length - 1];
    if (last !== undefined) {
      listMeta['continue'] = Buffer.from(JSON.stringify({ rv: revision, after: keyOf(last) })).toString('base64url');
      listMeta['remainingItemCount'] = remaining;
    }
  }
  return {
    kind: rt.listKind,
    apiVersion: apiVersionOf(rt),
    metadata: listMeta,
    items: items.map((o) => service.external(rt, o)),
  };
}

function keyOf(o: JsonObject): string {
  const m = meta(o);
  return `${str(m['namespace']) ?? ''}/${str(m['name']) ?? ''}`;
}

function decodeToken(text: string): ContinueToken {
  try {
    const parsed = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as Partial<ContinueToken>;
    if (typeof parsed.rv === 'number' && typeof parsed.after === 'string') return { rv: parsed.rv, after: parsed.after };
  } catch {
    // fall through to the error below
  }
  throw ApiError.badRequest('continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)');
}
