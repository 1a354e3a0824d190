import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { WebhookAdmission, type ServiceResolver } from './admission/webhook-admission.js';
import { Aggregator, type AggregationOptions } from './aggregator.js';
import { builtinResourceTypes } from './builtin-resources.js';
import { resourceTypesFromCrd } from './crd.js';
import { Discovery } from './discovery.js';
import { DisruptionController } from './disruption-controller.js';
import { GarbageCollector } from './garbage-collector.js';
import type { JsonObject } from './json.js';
import { NamespaceController } from './namespace-controller.js';
import { ObjectDeleter } from './object-deleter.js';
import { ObjectService } from './object-service.js';
import { OpenApiV3 } from './openapi.js';
import { Registry } from './registry.js';
import { describeRequest, type RequestListener } from './request-record.js';
import { RequestHandler } from './request-handler.js';
import { Store } from './store.js';

export interface ApiServerOptions {
  host?: string;
  /** 0 (the default) picks a free port. */
  port?: number;
  /** Changes kept for watch resume; a short history makes clients exercise their relist path. */
  historySize?: number;
  bookmarkIntervalMs?: number;
  /** Upper bound of a watch's life; clients reconnect from their last resourceVersion. */
  maxWatchSeconds?: number;
  /** CustomResourceDefinitions (apiextensions.k8s.io/v1 objects) to serve. */
  crds?: JsonObject[];
  namespaces?: string[];
  /**
   * Where an admission webhook's `clientConfig.service` is reached; without it such a webhook
   * cannot be called (this server routes to no Service) and fails by its failurePolicy.
   */
  resolveService?: ServiceResolver;
  now?: () => Date;
  logger?: Logger;
}

export interface ApiServer {
  readonly url: string;
  /**
   * Ends every open watch (cleanly, as a watch timeout does, or with `abrupt` by resetting the
   * connection as a dying apiserver does); returns how many there were.
   */
  dropWatches(options?: { abrupt?: boolean }): number;
  /** Forgets the change history: watches resuming from before now get `410 Expired`. */
  compact(): void;
  /**
   * Calls `listener` with every resource request as it arrives (an audit log, used to check
   * RBAC rules against what components really call); returns the function that unsubscribes.
   */
  onRequest(listener: RequestListener): () => void;
  /**
   * Turns on the aggregation layer (off until then, as kube-apiserver without
   * --requestheader-client-ca-file): APIServices with a Service are proxied (`aggregator.ts`).
   */
  enableAggregation(options: AggregationOptions): void;
  readonly revision: number;
  close(): Promise<void>;
}

const defaultNamespaces = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];

/** Starts the testbed's Kubernetes API server on plain HTTP (no authentication). */
export async function startApiServer(options: ApiServerOptions = {}): Promise<ApiServer> {
  const registry = new Registry();
  registry.add(...builtinResourceTypes());
  for (const crd of options.crds ?? []) registry.add(...resourceTypesFromCrd(crd));
  const store = new Store({ historySize: options.historySize ?? 1000 });
  const service = new ObjectService(store, registry, options.now ?? (() => new Date()));
  const deleter = new ObjectDeleter(service);
  const nsType = registry.find('', 'v1', 'namespaces');
  for (const name of options.namespaces ?? defaultNamespaces) {
    if (nsType !== undefined) service.create(nsType, '', { metadata: { name } });
  }
  const gc = new GarbageCollector(service, deleter);
  const namespaces = new NamespaceController(service, deleter);
  const pdbType = registry.find('policy', 'v1', 'poddisruptionbudgets');
  const disruption = pdbType === undefined ? undefined : new DisruptionController(service, pdbType);
  gc.start();
  namespaces.start();
  disruption?.start();
  const lifetime = new AbortController();
  let address = '';
  const aggregator = new Aggregator(service);
  const handler = new RequestHandler(
    service,
    deleter,
    new Discovery(registry, () => address, () => aggregator.groupVersions()),
    new OpenApiV3(registry),
    { bookmarkIntervalMs: options.bookmarkIntervalMs ?? 10_000, maxWatchSeconds: options.maxWatchSeconds ?? 1800 },
    lifetime.signal,
    new WebhookAdmission(store, options.resolveService),
  );
  const log = options.logger;
  const listeners = new Set<RequestListener>();
  const server: Server = createServer((req, res) => {
    log?.debug({ method: req.method, url: req.url }, 'request');
    if (listeners.size > 0) {
      const record = describeRequest(registry, req);
      if (record !== undefined) for (const l of listeners) l(record);
    }
    if (aggregator.serves(req)) void aggregator.proxy(req, res);
    else void handler.handle(req, res);
  });
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => aggregator.upgrade(req, socket, head));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { address: host, port } = server.address() as AddressInfo;
  address = `${host}:${port}`;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${address}`,
    get revision() {
      return store.revision;
    },
    dropWatches(dropOptions) {
      const count = handler.watches.size;
      for (const w of [...handler.watches]) w.drop(dropOptions?.abrupt === true);
      return count;
    },
    compact: () => store.compact(),
    enableAggregation: (aggregation) => aggregator.enable(aggregation),
    onRequest(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    close() {
      closing ??= (async () => {
        lifetime.abort();
        gc.close();
        namespaces.close();
        disruption?.close();
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        for (const w of [...handler.watches]) w.drop(true);
        aggregator.close();
        server.closeAllConnections();
        await closed;
      })();
      return closing;
    },
  };
}
