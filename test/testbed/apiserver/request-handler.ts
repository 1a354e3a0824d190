import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Discovery } from './discovery.js';
import { ApiError } from './errors.js';
import { isObject, meta, str, type JsonObject, type JsonValue } from './json.js';
import { type ObjectDeleter, parseDeleteOptions } from './object-deleter.js';
import { evict, evictionDeleteOptions } from './eviction.js';
import { objectFilter } from './object-filter.js';
import { listObjects, type ListQuery } from './object-lister.js';
import type { AdmissionSteps, ObjectService, PatchType } from './object-service.js';
import type { AdmissionAttributes, Operation, WebhookAdmission } from './admission/webhook-admission.js';
import { openApiV2, type OpenApiV3 } from './openapi.js';
import { proxyPodLog } from './pod-log-proxy.js';
import { readBody } from './request-body.js';
import { callerOf } from './request-record.js';
import type { ResourceType } from './resource-type.js';
import { route, type Route } from './router.js';
import { reviewAccess, SUBJECT_ACCESS_REVIEW_PATH } from './subject-access-review.js';
import { parseIncludeObject, toTable, wantsTable } from './table.js';
import { checkListOptions, serveWatch, type WatchHandle } from './watch.js';

export interface HandlerOptions {
  bookmarkIntervalMs: number;
  maxWatchSeconds: number;
}

type ResourceRoute = Extract<Route, { type: 'resource' }>;

const patchTypes: Record<string, PatchType> = {
  'application/json-patch+json': 'json',
  'application/merge-patch+json': 'merge',
  'application/strategic-merge-patch+json': 'strategic',
};

/** HTTP glue: decodes a request, calls the REST storage and encodes the answer. */
export class RequestHandler {
  readonly watches = new Set<WatchHandle>();

  constructor(
    private readonly service: ObjectService,
    private readonly deleter: ObjectDeleter,
    private readonly discovery: Discovery,
    private readonly openapi: OpenApiV3,
    private readonly options: HandlerOptions,
    private readonly signal: AbortSignal,
    private readonly admission: WebhookAdmission,
  ) {}

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      const url = new URL(req.url ?? '/', 'http://apiserver');
      if (url.pathname === SUBJECT_ACCESS_REVIEW_PATH && req.method === 'POST') {
        send(res, 201, reviewAccess(this.service.store, await readBody(req)));
        return;
      }
      const r = route(this.service.registry, url.pathname);
      if (r.type === 'resource') {
        await this.#resource(req, res, r, url.searchParams);
        return;
      }
      if (req.method !== 'GET') throw ApiError.methodNotAllowed();
      if (r.type === 'openapi-v2') {
        const doc = openApiV2(req.headers.accept ?? '');
        res.writeHead(200, { 'Content-Type': doc.contentType, 'Content-Length': doc.body.length });
        res.end(doc.body);
        return;
      }
      const body = this.#discovery(r);
      if (body === undefined) throw ApiError.resourceNotFound(url.pathname);
      send(res, 200, body);
    } catch (err) {
      const status = err instanceof ApiError ? err : ApiError.internal(err);
      if (res.headersSent) res.destroy();
      else send(res, status.httpCode, status.toStatus());
    }
  }

  #discovery(r: Route): JsonObject | undefined {
    switch (r.type) {
      case 'version': return this.discovery.version();
      case 'core-versions': return this.discovery.coreVersions();
      case 'groups': return this.discovery.groupList();
      case 'group': return this.discovery.group(r.group);
      case 'resources': return this.discovery.resourceList(r.group, r.version);
      case 'openapi-v3-root': return this.openapi.root();
      case 'openapi-v3-group': return this.openapi.groupVersion(r.group, r.version);
      default: return undefined;
    }
  }

  async #resource(req: IncomingMessage, res: ServerResponse, r: ResourceRoute, query: URLSearchParams): Promise<void> {
    const { rt, name, subresource } = r;
    const namespace = r.namespace ?? '';
    const dryRun = query.getAll('dryRun').includes('All');
    const method = req.method ?? 'GET';
    if (method === 'GET' && subresource === 'log' && name !== undefined) {
      const pod = this.service.get(rt, namespace, name);
      const nodeName = str((pod['spec'] as JsonObject | undefined)?.['nodeName']);
      const nodeType = this.service.registry.find('', 'v1', 'nodes');
      const node = nodeName === undefined || nodeType === undefined ? undefined : this.service.store.get(nodeType.storageKey, '', nodeName);
      proxyPodLog(pod, node, query, res, this.signal);
      return;
    }
    if (method === 'GET' && name === undefined) {
      const watching = r.watch || query.get('watch') === 'true' || query.get('watch') === '1';
      checkListOptions(query, watching);
      if (watching) this.#watch(req, res, r, query);
      else this.#list(req, res, rt, r.namespace, query);
      return;
    }
    if (method === 'GET' && name !== undefined) {
      const object = this.service.get(rt, namespace, name);
      sendObject(req, res, rt, 200, object, query, this.service.now());
      return;
    }
    const body = await readBody(req);
    const user = callerOf(req);
    const admit = (operation: Operation, objectName: string, options: JsonObject, at: ResourceType = rt, sub = subresource ?? '') => this.#admission({
      rt: at, subresource: sub, operation, namespace, name: objectName, user, dryRun, options,
    });
    const fieldManager = query.get('fieldManager');
    const writeOptions = (kind: string): JsonObject => ({ kind, apiVersion: 'meta.k8s.io/v1', ...(dryRun ? { dryRun: ['All'] } : {}), ...(fieldManager === null ? {} : { fieldManager }) });
    if (method === 'POST' && name === undefined && rt.resource === 'bindings') {
      const podType = this.service.registry.find('', 'v1', 'pods');
      const podName = str(meta(isObject(body) ? body : {})['name']) ?? '';
      if (podType === undefined) throw ApiError.methodNotAllowed();
      await this.#admitConnectLike(admit('CREATE', podName, writeOptions('CreateOptions'), podType, 'binding'), body);
      send(res, 201, this.service.bind(podType, namespace, podName, body ?? null, { dryRun }));
    } else if (rt.verbs !== undefined && !rt.verbs.includes('create')) {
      throw ApiError.methodNotAllowed();
    } else if (method === 'POST' && name === undefined) {
      const bodyName = str(meta(isObject(body) ? body : {})['name']) ?? '';
      const created = await this.service.createAdmitted(rt, namespace, body ?? null, { dryRun }, admit('CREATE', bodyName, writeOptions('CreateOptions')));
      sendObject(req, res, rt, 201, created, query, this.service.now());
    } else if (method === 'POST' && subresource === 'eviction' && name !== undefined) {
      const pdbType = this.service.registry.find('policy', 'v1', 'poddisruptionbudgets');
      if (pdbType === undefined) throw ApiError.methodNotAllowed();
      const eviction = evictionDeleteOptions(name, body, dryRun);
      await this.#admitConnectLike(this.#admission({
        rt, subresource: 'eviction', operation: 'CREATE', namespace, name, user, dryRun: eviction.dryRun, options: writeOptions('CreateOptions'),
        kind: { group: 'policy', version: 'v1', kind: 'Eviction' },
      }), body);
      const status = evict(this.service, this.deleter, pdbType, rt, namespace, name, eviction.options, eviction.dryRun);
      send(res, typeof status['code'] === 'number' ? status['code'] : 201, status);
    } else if (method === 'POST' && subresource === 'binding' && name !== undefined) {
      await this.#admitConnectLike(admit('CREATE', name, writeOptions('CreateOptions')), body);
      send(res, 201, this.service.bind(rt, namespace, name, body ?? null, { dryRun }));
    } else if (method === 'PUT' && name !== undefined) {
      send(res, 200, await this.service.writeAdmitted(rt, namespace, name, { type: 'update', body: body ?? null }, subresource, { dryRun }, admit('UPDATE', name, writeOptions('UpdateOptions'))));
    } else if (method === 'PATCH' && name !== undefined) {
      const type = patchTypes[(req.headers['content-type'] ?? '').split(';')[0]?.trim() ?? ''];
      if (type === undefined) throw ApiError.unsupportedMediaType(req.headers['content-type'] ?? '');
      send(res, 200, await this.service.writeAdmitted(rt, namespace, name, { type, patch: body ?? null }, subresource, { dryRun }, admit('UPDATE', name, writeOptions('PatchOptions'))));
    } else if (method === 'DELETE' && name !== undefined && subresource === undefined) {
      const options = parseDeleteOptions(body, query);
      await this.#admitDelete(admit('DELETE', name, deleteOptionsObject(body, dryRun)), this.service.get(rt, namespace, name));
      send(res, 200, this.deleter.delete(rt, namespace, name, options, { dryRun }));
    } else if (method === 'DELETE' && name === undefined) {
      await this.#deleteCollection(res, rt, r.namespace, query, body, dryRun, (n) => admit('DELETE', n, deleteOptionsObject(body, dryRun)));
    } else {
      throw ApiError.methodNotAllowed();
    }
  }

  #list(req: IncomingMessage, res: ServerResponse, rt: ResourceType, namespace: string | undefined, query: URLSearchParams): void {
    const list = listObjects(this.service, rt, namespace, listQuery(query));
    if (wantsTable(req.headers.accept)) {
      const items = (list['items'] as JsonObject[] | undefined) ?? [];
      send(res, 200, toTable(rt, items, list['metadata'] as JsonObject, parseIncludeObject(query.get('includeObject')), this.service.now()));
    } else {
      send(res, 200, list);
    }
  }

  #watch(req: IncomingMessage, res: ServerResponse, r: ResourceRoute, query: URLSearchParams): void {
    const table = wantsTable(req.headers.accept);
    const include = parseIncludeObject(query.get('includeObject'));
    const timeout = Number(query.get('timeoutSeconds') ?? this.options.maxWatchSeconds);
    const handle = serveWatch(this.service.store, res, {
      rt: r.rt,
      namespace: r.namespace,
      filter: objectFilter(r.rt, query.get('labelSelector') ?? undefined, query.get('fieldSelector') ?? undefined),
      resourceVersion: query.get('resourceVersion') ?? undefined,
      allowBookmarks: query.get('allowWatchBookmarks') === 'true',
      sendInitialEvents: query.get('sendInitialEvents') === null ? undefined : query.get('sendInitialEvents') === 'true',
      timeoutSeconds: Math.min(timeout > 0 ? timeout : this.options.maxWatchSeconds, this.options.maxWatchSeconds),
      bookmarkIntervalMs: this.options.bookmarkIntervalMs,
      render: (object, first) => {
        const external = this.service.external(r.rt, object);
        if (!table) return external;
        return toTable(r.rt, [external], { resourceVersion: str(meta(external)['resourceVersion']) ?? '' }, include, this.service.now(), first);
      },
    });
    this.watches.add(handle);
    void handle.done.then(() => this.watches.delete(handle));
  }

  /** The admission steps of one request: the webhooks, given what the request is. */
  #admission(base: Omit<AdmissionAttributes, 'object' | 'oldObject'>): AdmissionSteps {
    return {
      mutate: (object, oldObject) => this.admission.mutate({ ...base, name: base.name || nameOf(object), object, oldObject }),
      validate: (object, oldObject) => this.admission.validate({ ...base, name: base.name || nameOf(object), object, oldObject }),
    };
  }

  /** A subresource POST whose body is its own kind (pods/binding): both webhook kinds see the body; a mutation of it is kept by neither here nor in Kubernetes' binding storage. */
  async #admitConnectLike(steps: AdmissionSteps, body: JsonValue | undefined): Promise<void> {
    const object = isObject(body) ? body : {};
    await steps.mutate(object, undefined);
    await steps.validate(object, undefined);
  }

  /** DELETE: the webhooks see the object being deleted as oldObject and no object. */
  async #admitDelete(steps: AdmissionSteps, old: JsonObject): Promise<void> {
    await steps.mutate(undefined, old);
    await steps.validate(undefined, old);
  }

  async #deleteCollection(res: ServerResponse, rt: ResourceType, namespace: string | undefined, query: URLSearchParams, body: JsonValue | undefined, dryRun: boolean, admit: (name: string) => AdmissionSteps): Promise<void> {
    const list = listObjects(this.service, rt, namespace, listQuery(query));
    const options = parseDeleteOptions(body, query);
    const deleted: JsonObject[] = [];
    for (const item of (list['items'] as JsonObject[] | undefined) ?? []) {
      const m = meta(item);
      try {
        await this.#admitDelete(admit(str(m['name']) ?? ''), item);
        deleted.push(this.deleter.delete(rt, str(m['namespace']) ?? '', str(m['name']) ?? '', options, { dryRun }));
      } catch (err) {
        if (!(err instanceof ApiError && err.reason === 'NotFound')) throw err;
      }
    }
    send(res, 200, { ...list, items: deleted });
  }
}

function nameOf(object: JsonObject | undefined): string {
  return object === undefined ? '' : (str(meta(object)['name']) ?? '');
}

function deleteOptionsObject(body: JsonValue | undefined, dryRun: boolean): JsonObject {
  const given = isObject(body) ? body : {};
  return { ...given, kind: 'DeleteOptions', apiVersion: 'meta.k8s.io/v1', ...(dryRun ? { dryRun: ['All'] } : {}) };
}

function listQuery(query: URLSearchParams): ListQuery {
  const q: ListQuery = {};
  for (const key of ['labelSelector', 'fieldSelector', 'continue', 'resourceVersion', 'resourceVersionMatch'] as const) {
    const value = query.get(key);
    if (value !== null) q[key] = value;
  }
  const limit = query.get('limit');
  if (limit !== null) q.limit = Number(limit);
  return q;
}

function sendObject(req: IncomingMessage, res: ServerResponse, rt: ResourceType, code: number, object: JsonObject, query: URLSearchParams, now: Date): void {
  if (wantsTable(req.headers.accept)) {
    send(res, code, toTable(rt, [object], { resourceVersion: str(meta(object)['resourceVersion']) ?? '' }, parseIncludeObject(query.get('includeObject')), now));
  } else {
    send(res, code, object);
  }
}

function send(res: ServerResponse, code: number, body: JsonObject): void {
  const text = JSON.stringify(body);
  res.writeHead(code, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}
