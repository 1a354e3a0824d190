// The handler of a VMI's node, reached over its mutual-TLS node API with podvirt-api's own client
// identity (the handler allows it with --tls-allowed-client). Where the handler listens: an
// address given per node (--handler-address NODE=HOST:PORT, the testbed's processes), else the
// IP of the podvirt-handler pod on that node and --handler-port. The handler's certificate must
// name NODE_API_SERVER_NAME and be signed by the CA given (every node shares that name; the pod IP
// dialled is in no certificate). One gRPC channel per address, kept until close(); a new client
// identity (setTls: a renewal) opens new channels, and those of the identity before are closed at
// the next renewal or close(), so a console attached before a renewal is not cut by it.

import { checkServerIdentity, type PeerCertificate } from 'node:tls';
import * as grpc from '@grpc/grpc-js';
import { PODS, ResourceClient, type KubeClient } from '@podvirt/kube-runtime';
import { CALL_DEADLINES, node, promiseClient, type PromiseMethods } from '@podvirt/proto';

export type NodeMethods = PromiseMethods<typeof node.NodeService>;

/** A call to a handler that did not answer OK: its gRPC status, and the node it runs on. */
export class HandlerCallError extends Error {
  override readonly name = 'HandlerCallError';
  readonly code = 'PODVIRT_API_ERR_HANDLER';
  readonly status: grpc.status;
  readonly node: string;

  constructor(status: grpc.status, node: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.status = status;
    this.node = node;
  }
}

export interface HandlerConnection {
  readonly node: string;
  readonly calls: NodeMethods;
  readonly client: node.NodeClient;
}

/** Where a node's handler is; a fake in tests. */
export interface HandlerNodes {
  /** The handler of `nodeName`; HandlerCallError UNAVAILABLE when none is known there. */
  connect(nodeName: string, signal?: AbortSignal): Promise<HandlerConnection>;
  close(): void;
}

export interface HandlerTls {
  readonly ca: Buffer | string;
  readonly key: Buffer | string;
  readonly cert: Buffer | string;
}

interface PodSummary {
  readonly metadata?: { readonly name?: string };
  readonly status?: { readonly podIP?: string; readonly phase?: string };
}

export interface KubeHandlerNodesOptions {
  readonly client: KubeClient;
  /** podvirt-api's client identity; undefined until the first is made (setTls). */
  readonly tls?: HandlerTls | undefined;
  /** The name a handler's certificate must carry. */
  readonly serverName: string;
  /** Where the handler pods are. */
  readonly namespace: string;
  readonly port: number;
  readonly addresses: ReadonlyMap<string, string>;
}

/** The calls of one handler's node API, failures as HandlerCallError naming its node. */
export function handlerConnection(client: node.NodeClient, nodeName: string): HandlerConnection {
  const calls = promiseClient(node.NodeService, client, {
    timeoutMs: (method) => (method === 'freeze' ? CALL_DEADLINES.freezeMs : CALL_DEADLINES.longMs),
    toError: (err) => new HandlerCallError(err.code, nodeName, err.details === '' ? (grpc.status[err.code] ?? 'UNKNOWN') : err.details, { cause: err }),
  });
  return { node: nodeName, calls, client };
}

export const HANDLER_POD_SELECTOR = 'app.kubernetes.io/name=podvirt-handler';

export class KubeHandlerNodes implements HandlerNodes {
  readonly #o: KubeHandlerNodesOptions;
  readonly #pods: ResourceClient<PodSummary>;
  #channels = new Map<string, node.NodeClient>();
  #retired: node.NodeClient[] = [];
  #tls: HandlerTls | undefined;
  #closed = false;

  constructor(o: KubeHandlerNodesOptions) {
    this.#o = o;
    this.#tls = o.tls;
    this.#pods = new ResourceClient<PodSummary>(o.client, PODS);
  }

  /** A new client identity or CA bundle: new calls open new channels with it. */
  setTls(tls: HandlerTls): void {
    this.#tls = tls;
    for (const c of this.#retired) c.close();
    this.#retired = [...this.#channels.values()];
    this.#channels = new Map();
  }

  async connect(nodeName: string, signal?: AbortSignal): Promise<HandlerConnection> {
    const address = this.#o.addresses.get(nodeName) ?? (await this.#podAddress(nodeName, signal));
    let client = this.#channels.get(address);
    if (client === undefined) {
      if (this.#closed) throw new HandlerCallError(grpc.status.UNAVAILABLE, nodeName, 'podvirt-api is stopping');
      const tls = this.#tls;
      if (tls === undefined) throw new HandlerCallError(grpc.status.UNAVAILABLE, nodeName, 'podvirt-api has no node API client certificate yet');
      const serverName = this.#o.serverName;
      const creds = grpc.credentials.createSsl(Buffer.from(tls.ca), Buffer.from(tls.key), Buffer.from(tls.cert), {
        checkServerIdentity: (_host: string, cert: PeerCertificate) => checkServerIdentity(serverName, cert),
      });
      // The TLS server name (SNI and the check above) is the fixed name, not the address dialled.
      client = new node.NodeClient(address, creds, { 'grpc.ssl_target_name_override': serverName, 'grpc.default_authority': serverName });
      this.#channels.set(address, client);
    }
    return handlerConnection(client, nodeName);
  }

  async #podAddress(nodeName: string, signal?: AbortSignal): Promise<string> {
    const pods = await this.#pods.list(this.#o.namespace, { labelSelector: HANDLER_POD_SELECTOR, fieldSelector: `spec.nodeName=${nodeName}` }, signal ?? new AbortController().signal);
    const ip = pods.items.find((p) => p.status?.phase === 'Running' && p.status.podIP)?.status?.podIP;
    if (ip === undefined) throw new HandlerCallError(grpc.status.UNAVAILABLE, nodeName, `no running podvirt-handler pod on node ${nodeName}`);
    return ip.includes(':') ? `[${ip}]:${this.#o.port}` : `${ip}:${this.#o.port}`;
  }

  close(): void {
    this.#closed = true;
    for (const c of [...this.#channels.values(), ...this.#retired]) c.close();
    this.#channels.clear();
    this.#retired = [];
  }
}
