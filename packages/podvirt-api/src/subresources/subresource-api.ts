// KubeVirt's subresource API for VMIs, behind kube-apiserver's aggregation layer. Each request
// climbs the same ladder before anything is done: who (the front proxy's headers, 401), may they
// (a SubjectAccessReview as them, 403), which VMI (404), can it (Running, on a node: 409), which
// handler (503 naming the node); then the handler's node API acts and its status is mapped in one
// table (statusOfHandlerError). Console and VNC climb it before the websocket handshake.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import * as grpc from '@grpc/grpc-js';
import { changeVmState, changeVolume, migrationFor, VmStateError, VolumeChangeError, type VirtualMachineInstance, type VirtualMachineInstanceMigration, type VmStateApi, type VolumeApi } from '@podvirt/api';
import type { Logger } from 'pino';
import { forbiddenMessage, type AccessReviewer } from './access-review.js';
import { apiGroupDocument, apiResourceListDocument } from './discovery.js';
import { guestAgentInfo, guestFilesystemList, guestUserList } from './guest-answers.js';
import { openGuestStream, relayGuestStream, type GuestStreamKind } from './guest-stream-bridge.js';
import { HandlerCallError, type HandlerConnection, type HandlerNodes } from './handler-nodes.js';
import { kubeStatus, writeJson, writeStatus, writeStatusOnSocket, type KubeStatus } from './kube-status.js';
import { readOperationOptions, readVmOptions, readVolumeRequest, type VmOptions } from './operation-body.js';
import { authenticate, type CallingUser, type RequestHeaderConfig } from './request-header-auth.js';
import { isSubresourcePath, rbacVerb, routeSubresource, VMI_SUBRESOURCES, type VmiOperation, type VmiQuery, type VmiSubresource, type VmiVolumeChange, type VmSubresource } from './subresource-routes.js';
import { handshakeProblem, WebSocketConnection } from './websocket.js';

export interface VmiReader {
  get(namespace: string, name: string, signal?: AbortSignal): Promise<VirtualMachineInstance | undefined>;
}

export interface MigrationWriter {
  create(namespace: string, migration: VirtualMachineInstanceMigration, signal?: AbortSignal): Promise<unknown>;
}

export interface SubresourceApiOptions {
  readonly log: Logger;
  readonly identities: { current(signal?: AbortSignal): Promise<RequestHeaderConfig | string> };
  readonly review: AccessReviewer;
  readonly vmis: VmiReader;
  /** The VM subresources' reads and writes (start, stop, restart: `@podvirt/api`'s changeVmState). */
  readonly vms: VmStateApi;
  /** `virtualmachineinstances/{addvolume,removevolume}`'s reads and writes (`@podvirt/api`'s changeVolume). */
  readonly volumes: VolumeApi;
  /** `virtualmachines/migrate` creates a VirtualMachineInstanceMigration here. */
  readonly migrations: MigrationWriter;
  /** undefined: podvirt-api has no client identity for the node API (every call is 503 saying so). */
  readonly handlers: HandlerNodes | undefined;
  readonly now?: () => Date;
  /** How long the handler has to attach a console or VNC stream. */
  readonly attachTimeoutMs?: number;
}

interface Admitted {
  readonly user: CallingUser;
  readonly vmi: VirtualMachineInstance;
  readonly handler: HandlerConnection;
}

type Ladder = { readonly ok: true; readonly admitted: Admitted } | { readonly ok: false; readonly status: KubeStatus };

export class SubresourceApi {
  readonly #o: SubresourceApiOptions;
  readonly #stop = new AbortController();
  readonly #streams = new Set<Promise<void>>();

  constructor(o: SubresourceApiOptions) {
    this.#o = o;
  }

  handles(path: string): boolean {
    return isSubresourcePath(path);
  }

  async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const route = routeSubresource(req.method ?? 'GET', pathOf(req));
    if (route.kind === 'not-ours') return writeStatus(res, kubeStatus(404, `nothing at ${pathOf(req)}`));
    if (route.kind === 'discovery-group') return writeJson(res, 200, apiGroupDocument());
    if (route.kind === 'discovery-version') return writeJson(res, 200, apiResourceListDocument());
    if (route.kind === 'refused') return writeStatus(res, kubeStatus(route.status, route.message));
    if (route.kind === 'vm') {
      const sub = route.subresource;
      if (sub === 'addvolume' || sub === 'removevolume') return this.#serveVolume(req, res, 'virtualmachines', route.namespace, route.name, sub);
      return this.#serveVm(req, res, route.namespace, route.name, sub);
    }
    const kind = VMI_SUBRESOURCES[route.subresource].kind;
    if (kind === 'volume') return this.#serveVolume(req, res, 'virtualmachineinstances', route.namespace, route.name, route.subresource as VmiVolumeChange);
    if (kind === 'stream') return writeStatus(res, kubeStatus(400, `${route.subresource}: a websocket (Upgrade: websocket, protocol plain.kubevirt.io)`));
    const ladder = await this.#climb(req, route.namespace, route.name, route.subresource);
    if (!ladder.ok) return this.#refuse(res, route.subresource, ladder.status);
    const { vmi, handler, user } = ladder.admitted;
    const ref = { namespace: route.namespace, name: route.name };
    try {
      if (kind === 'query') {
        writeJson(res, 200, await this.#query(handler, route.subresource as VmiQuery, ref));
      } else {
        const decoded = await readOperationOptions(req, route.subresource as VmiOperation);
        if (!decoded.ok) return this.#refuse(res, route.subresource, decoded.status);
        if (!decoded.options.dryRun) await this.#operate(handler, route.subresource as VmiOperation, ref, decoded.options.unfreezeTimeoutSeconds);
        res.writeHead(200);
        res.end();
      }
      this.#o.log.info({ user: user.name, subresource: route.subresource, namespace: ref.namespace, name: ref.name, uid: vmi.metadata?.uid, node: handler.node }, 'subresource served');
    } catch (err) {
      if (!(err instanceof HandlerCallError)) throw err;
      this.#refuse(res, route.subresource, statusOfHandlerError(err));
    }
  }

  /** The `upgrade` of an HTTPS request: console and vnc. */
  async upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const route = routeSubresource(req.method ?? 'GET', pathOf(req));
    if (route.kind !== 'vmi' || VMI_SUBRESOURCES[route.subresource].kind !== 'stream') {
      return writeStatusOnSocket(socket, route.kind === 'refused' ? kubeStatus(route.status, route.message) : kubeStatus(400, `no websocket at ${pathOf(req)}`));
    }
    const problem = handshakeProblem(req);
    if (problem !== undefined) return writeStatusOnSocket(socket, problem);
    const ladder = await this.#climb(req, route.namespace, route.name, route.subresource);
    if (!ladder.ok) return writeStatusOnSocket(socket, ladder.status);
    const { handler, user } = ladder.admitted;
    const kind = route.subresource as GuestStreamKind;
    const takeover = new URL(req.url ?? '/', 'https://x').searchParams.get('takeover') === 'true';
    let opened;
    try {
      opened = await openGuestStream(handler.client, handler.node, kind, { namespace: route.namespace, name: route.name }, takeover, this.#o.attachTimeoutMs ?? 10_000);
    } catch (err) {
      if (!(err instanceof HandlerCallError)) throw err;
      return writeStatusOnSocket(socket, statusOfHandlerError(err));
    }
    if (this.#stop.signal.aborted || socket.destroyed) {
      opened.call.cancel();
      return writeStatusOnSocket(socket, kubeStatus(503, 'podvirt-api is stopping'));
    }
    const log = this.#o.log.child({ user: user.name, subresource: kind, namespace: route.namespace, name: route.name, node: handler.node });
    const ws = WebSocketConnection.accept(req, socket, head);
    log.info('stream attached');
    const relay = relayGuestStream(opened, ws, handler.node, this.#stop.signal).then(() => {
      this.#streams.delete(relay);
      log.info('stream ended');
    });
    this.#streams.add(relay);
  }

  /** Ends every open stream (the clients get a close frame saying why), bounded by the streams' own ends. */
  async close(): Promise<void> {
    this.#stop.abort();
    await Promise.all([...this.#streams]);
  }

  /** Who, and may they (steps 1 and 2 of the ladder). */
  async #authorize(req: IncomingMessage, resource: 'virtualmachineinstances' | 'virtualmachines', verb: 'update' | 'get', namespace: string, name: string, subresource: string): Promise<{ readonly ok: true; readonly user: CallingUser } | { readonly ok: false; readonly status: KubeStatus }> {
    const config = await this.#o.identities.current(this.#stop.signal);
    if (typeof config === 'string') return { ok: false, status: kubeStatus(401, `Unauthorized: ${config}`) };
    const peer = (req.socket as TLSSocket).getPeerX509Certificate?.();
    const auth = authenticate(peer, req.headersDistinct, config, this.#o.now?.() ?? new Date());
    if (!auth.ok) return auth;
    const question = { user: auth.user, verb, namespace, resource, subresource, name };
    const answer = await this.#o.review(question, this.#stop.signal);
    if (!answer.allowed) return { ok: false, status: kubeStatus(403, forbiddenMessage(question, answer.reason)) };
    return { ok: true, user: auth.user };
  }

  /** `virtualmachines/{start,stop,restart,migrate}`: writes to the Kubernetes API, no handler; 202 as KubeVirt. */
  async #serveVm(req: IncomingMessage, res: ServerResponse, namespace: string, name: string, sub: Exclude<VmSubresource, VmiVolumeChange>): Promise<void> {
    const auth = await this.#authorize(req, 'virtualmachines', 'update', namespace, name, sub);
    if (!auth.ok) return this.#refuse(res, sub, auth.status);
    const decoded = await readVmOptions(req, sub);
    if (!decoded.ok) return this.#refuse(res, sub, decoded.status);
    const status = sub === 'migrate' ? await this.#migrate(namespace, name, decoded.options) : await this.#changeState(namespace, name, sub, decoded.options);
    if (status !== undefined) return this.#refuse(res, sub, status);
    this.#o.log.info({ user: auth.user.name, subresource: sub, namespace, name, dryRun: decoded.options.dryRun }, 'subresource served');
    res.writeHead(202);
    res.end();
  }

  /**
   * `virtualmachineinstances/{addvolume,removevolume}`: the hotplug edit of the VMI's spec through
   * the Kubernetes API (changeVolume, as podvirtctl), no handler; 202 as KubeVirt.
   * `virtualmachines/{addvolume,removevolume}`: the same edit of the running VMI and of the VM's
   * template (changeVolume's persist, as `podvirtctl addvolume --persist`), so the volume stays
   * across a restart.
   */
  async #serveVolume(req: IncomingMessage, res: ServerResponse, resource: 'virtualmachineinstances' | 'virtualmachines', namespace: string, name: string, sub: VmiVolumeChange): Promise<void> {
    const auth = await this.#authorize(req, resource, 'update', namespace, name, sub);
    if (!auth.ok) return this.#refuse(res, sub, auth.status);
    const decoded = await readVolumeRequest(req, sub);
    if (!decoded.ok) return this.#refuse(res, sub, decoded.status);
    const persist = resource === 'virtualmachines';
    try {
      await changeVolume(this.#o.volumes, decoded.request, { namespace, name }, { dryRun: decoded.dryRun, persist }, this.#stop.signal);
    } catch (err) {
      if (!(err instanceof VolumeChangeError)) throw err;
      // The VM's route names the VM first, as KubeVirt's does.
      const vmGone = persist && err.code === 'API_ERR_VMI_NOT_FOUND' && (await this.#o.volumes.readVm(namespace, name, this.#stop.signal)) === undefined;
      return this.#refuse(res, sub, vmGone ? kubeStatus(404, `virtualmachines.kubevirt.io "${name}" not found`) : volumeRefusal(err, persist, name));
    }
    this.#o.log.info({ user: auth.user.name, subresource: `${resource}/${sub}`, namespace, name, volume: decoded.request.options.name, dryRun: decoded.dryRun }, 'subresource served');
    res.writeHead(202);
    res.end();
  }

  async #changeState(namespace: string, name: string, command: 'start' | 'stop' | 'restart', options: VmOptions): Promise<KubeStatus | undefined> {
    try {
      await changeVmState(this.#o.vms, command, { namespace, name }, options, this.#stop.signal);
      return undefined;
    } catch (err) {
      if (!(err instanceof VmStateError)) throw err;
      if (err.code === 'API_ERR_VM_NOT_FOUND') return kubeStatus(404, `virtualmachines.kubevirt.io "${name}" not found`);
      if (err.code === 'API_ERR_VM_GRACE_PERIOD') return kubeStatus(400, err.message);
      return kubeStatus(409, `Operation cannot be fulfilled on virtualmachines.kubevirt.io "${name}": ${err.message}`);
    }
  }

  async #migrate(namespace: string, name: string, options: VmOptions): Promise<KubeStatus | undefined> {
    const signal = this.#stop.signal;
    if ((await this.#o.vms.readVm(namespace, name, signal)) === undefined) return kubeStatus(404, `virtualmachines.kubevirt.io "${name}" not found`);
    const vmi = await this.#o.vmis.get(namespace, name, signal);
    if (vmi === undefined) return kubeStatus(404, `virtualmachineinstances.kubevirt.io "${name}" not found`);
    const phase = vmi.status?.phase ?? 'Pending';
    if (phase !== 'Running') return kubeStatus(409, `Operation cannot be fulfilled on virtualmachines.kubevirt.io "${name}": VM is not running: phase ${phase}`);
    if (!options.dryRun) await this.#o.migrations.create(namespace, migrationFor(namespace, name), signal);
    return undefined;
  }

  async #climb(req: IncomingMessage, namespace: string, name: string, subresource: VmiSubresource): Promise<Ladder> {
    const auth = await this.#authorize(req, 'virtualmachineinstances', rbacVerb(subresource), namespace, name, subresource);
    if (!auth.ok) return auth;
    const vmi = await this.#o.vmis.get(namespace, name, this.#stop.signal);
    if (vmi === undefined) return { ok: false, status: kubeStatus(404, `virtualmachineinstances.kubevirt.io "${name}" not found`) };
    const phase = vmi.status?.phase ?? 'Pending';
    if (phase !== 'Running') return { ok: false, status: kubeStatus(409, `VirtualMachineInstance ${namespace}/${name} is not running: phase ${phase}`) };
    const nodeName = vmi.status?.nodeName;
    if (nodeName === undefined || nodeName === '') return { ok: false, status: kubeStatus(409, `VirtualMachineInstance ${namespace}/${name} is on no node yet`) };
    if (this.#o.handlers === undefined) return { ok: false, status: kubeStatus(503, `podvirt-api has no client certificate for the node API of node ${nodeName} (--node-api-ca-secret, or --handler-client-cert)`) };
    try {
      return { ok: true, admitted: { user: auth.user, vmi, handler: await this.#o.handlers.connect(nodeName, this.#stop.signal) } };
    } catch (err) {
      if (err instanceof HandlerCallError) return { ok: false, status: statusOfHandlerError(err) };
      throw err;
    }
  }

  async #query(h: HandlerConnection, q: VmiQuery, ref: { namespace: string; name: string }): Promise<object> {
    const signal = this.#stop.signal;
    if (q === 'guestosinfo') return guestAgentInfo(await h.calls.guestOsInfo(ref, { signal }));
    if (q === 'userlist') return guestUserList(await h.calls.userList(ref, { signal }));
    return guestFilesystemList(await h.calls.filesystemList(ref, { signal }));
  }

  async #operate(h: HandlerConnection, op: VmiOperation, ref: { namespace: string; name: string }, unfreezeTimeoutSeconds: number): Promise<void> {
    const o = { signal: this.#stop.signal };
    switch (op) {
      case 'pause': await h.calls.pause(ref, o); return;
      case 'unpause': await h.calls.unpause(ref, o); return;
      case 'freeze': await h.calls.freeze({ vmi: ref, unfreezeTimeoutSeconds }, o); return;
      case 'unfreeze': await h.calls.unfreeze(ref, o); return;
      case 'softreboot': await h.calls.softReboot(ref, o); return;
      case 'reset': await h.calls.reset(ref, o); return;
    }
  }

  #refuse(res: ServerResponse, subresource: string, status: KubeStatus): void {
    this.#o.log.info({ subresource, code: status.code, reason: status.message }, 'subresource refused');
    writeStatus(res, status);
  }
}

/** A hotplug refusal as the API server would word it: a bad request 400 naming the field, a missing object 404, a state that forbids it 409. */
function volumeRefusal(err: VolumeChangeError, persist: boolean, name: string): KubeStatus {
  switch (err.code) {
    case 'API_ERR_VOLUME_REFUSED': return kubeStatus(400, err.message);
    case 'API_ERR_VM_NOT_FOUND': return kubeStatus(404, `virtualmachines.kubevirt.io "${name}" not found`);
    case 'API_ERR_VMI_NOT_FOUND':
      return persist
        ? kubeStatus(409, `Operation cannot be fulfilled on virtualmachines.kubevirt.io "${name}": the VM has no running VMI to hot-plug into; edit its template while it is stopped`)
        : kubeStatus(404, `virtualmachineinstances.kubevirt.io "${name}" not found`);
    default: return kubeStatus(409, err.message);
  }
}

function pathOf(req: IncomingMessage): string {
  return new URL(req.url ?? '/', 'https://x').pathname;
}

/** The one table from the handler's gRPC status to the HTTP status the caller sees. */
export function statusOfHandlerError(err: HandlerCallError): KubeStatus {
  const where = `node ${err.node}`;
  switch (err.status) {
    case grpc.status.UNAVAILABLE: return kubeStatus(503, `the handler of ${where} is unreachable: ${err.message}`);
    case grpc.status.DEADLINE_EXCEEDED: return kubeStatus(504, `the handler of ${where} did not answer in time: ${err.message}`);
    case grpc.status.NOT_FOUND: return kubeStatus(404, err.message);
    case grpc.status.FAILED_PRECONDITION:
    case grpc.status.ABORTED:
    case grpc.status.ALREADY_EXISTS: return kubeStatus(409, err.message);
    case grpc.status.INVALID_ARGUMENT:
    case grpc.status.OUT_OF_RANGE: return kubeStatus(400, err.message);
    case grpc.status.RESOURCE_EXHAUSTED: return kubeStatus(503, `the handler of ${where} is overloaded: ${err.message}`);
    case grpc.status.PERMISSION_DENIED:
    case grpc.status.UNAUTHENTICATED: return kubeStatus(500, `the handler of ${where} refuses podvirt-api's client certificate: ${err.message}`);
    default: return kubeStatus(500, `the handler of ${where}: ${grpc.status[err.status] ?? err.status}: ${err.message}`);
  }
}
