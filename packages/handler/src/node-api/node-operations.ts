// The node API's operations, independent of gRPC: resolve namespace/name to the VMI on this
// node, check the preconditions KubeVirt's API checks, forward to the VMI's launcher, and record
// the Event KubeVirt records. The VMI status follows through the normal reconcile: the
// launcher's domain stream reports the change and the handler writes it.

import { EventReason, EventType, vmiLogBindings, type VirtualMachineInstance } from '@podvirt/api';
import { abortableSleep } from '@podvirt/kube-runtime';
import { unfreezeTimeoutProblem, type cmd, type node, type OpTrace } from '@podvirt/proto';
import type { Logger } from 'pino';
import { HandlerError } from '../handler-error.js';
import { DefaultedVmis } from '../kube/defaulted-vmis.js';
import type { LauncherObservation, ObserveTarget } from '../launcher/launcher-registry.js';
import { LauncherState } from '../launcher/launcher-state.js';
import type { LauncherClient } from '../launcher/launcher-client.js';
import type { LauncherConnection } from '../launcher/launcher-connection.js';
import { guestSocketPath, type GuestStreamKind } from '../guest-stream/guest-socket.js';
import { objectKey } from '@podvirt/kube-runtime';
import { vmiFacts, type VmiFacts } from './vmi-facts.js';
import { checkNamespace, type VmiResolver } from './vmi-resolver.js';
import { vmiSummary } from './vmi-summary.js';

export interface NodeOperationsOptions {
  readonly resolver: VmiResolver;
  readonly launchers: {
    observe(target: ObserveTarget, signal?: AbortSignal): Promise<LauncherObservation>;
    readonly cache: { get(uid: string): { readonly domain: cmd.Domain | undefined } | undefined };
  };
  readonly recorder: { record(vmi: VirtualMachineInstance, type: string, reason: string, message: string): Promise<void> };
  /** Every VMI the handler holds for this node. */
  readonly list: () => Iterable<VirtualMachineInstance>;
  /** Asks for a reconcile of the key, so the status shows the change at once. */
  readonly enqueue: (key: string) => void;
  /**
   * Holds the key's reconciles (the status write) until the returned release: an operation's
   * answer does not wait behind the status work its own change set off.
   */
  readonly holdForAnswer?: (key: string) => () => void;
  readonly log: Logger;
  /** How long an operation waits to see its effect in the launcher's domain (default 2 s). */
  readonly settleTimeoutMs?: number;
}

/** The domain state an operation is done at, so the next call's precondition sees it. */
type Settled = (domain: cmd.Domain | undefined) => boolean;

type Check = (facts: VmiFacts, what: string) => string | undefined;

const mustRun: Check = (f, what) => (f.running ? undefined : `${what} is not running`);
const mustRunUnpaused: Check = (f, what) => mustRun(f, what) ?? (f.paused ? `${what} is paused` : undefined);
const isPaused: Settled = (d) => d?.state === 'Paused';
const isFrozen: Settled = (d) => d?.fsFreezeStatus === 'frozen';

export class NodeOperations {
  readonly #o: NodeOperationsOptions;
  readonly #defaulted = new DefaultedVmis();

  constructor(options: NodeOperationsOptions) {
    this.#o = options;
  }

  /** `trace` marks each step when the handler traces its calls (the stage benchmark). */
  pause(ref: node.VmiRef, signal: AbortSignal, trace?: OpTrace): Promise<node.OperationResponse> {
    const check: Check = (f, what) => mustRun(f, what) ?? (f.paused ? `${what} is already paused` : undefined);
    return this.#operate(ref, signal, check, (c, json) => c.pause(json, signal), [EventReason.Paused, 'VirtualMachineInstance paused'], isPaused, 'request', trace);
  }

  unpause(ref: node.VmiRef, signal: AbortSignal, trace?: OpTrace): Promise<node.OperationResponse> {
    const check: Check = (f, what) => (f.paused ? undefined : `${what} is not paused`);
    return this.#operate(ref, signal, check, (c, json) => c.unpause(json, signal), [EventReason.Unpaused, 'VirtualMachineInstance unpaused'], (d) => !isPaused(d), 'request', trace);
  }

  async freeze(request: node.FreezeRequest, signal: AbortSignal): Promise<node.OperationResponse> {
    const timeout = request.unfreezeTimeoutSeconds;
    const problem = unfreezeTimeoutProblem(timeout);
    if (problem !== undefined) throw new HandlerError('HANDLER_ERR_INVALID_REQUEST', problem);
    return this.#operate(request.vmi, signal, mustRunUnpaused, (c, json) => c.freeze(json, timeout, signal), undefined, isFrozen, 'vmi');
  }

  unfreeze(ref: node.VmiRef, signal: AbortSignal): Promise<node.OperationResponse> {
    return this.#operate(ref, signal, mustRun, (c, json) => c.unfreeze(json, signal), undefined, (d) => !isFrozen(d));
  }

  softReboot(ref: node.VmiRef, signal: AbortSignal): Promise<node.OperationResponse> {
    const check: Check = (f, what) =>
      mustRunUnpaused(f, what) ?? (!f.agentConnected && !f.acpiEnabled ? `${what} has neither a guest agent connected nor ACPI enabled` : undefined);
    return this.#operate(ref, signal, check, (c, json) => c.softReboot(json, signal), [EventReason.SoftRebooted, 'VirtualMachineInstance soft rebooted']);
  }

  reset(ref: node.VmiRef, signal: AbortSignal): Promise<node.OperationResponse> {
    return this.#operate(ref, signal, mustRun, (c, json) => c.reset(json, signal), [EventReason.Reset, 'VirtualMachineInstance reset']);
  }

  guestOsInfo(ref: node.VmiRef, signal: AbortSignal): Promise<cmd.GuestInfo> {
    return this.#ask(ref, signal, (c) => c.getGuestInfo(signal));
  }

  userList(ref: node.VmiRef, signal: AbortSignal): Promise<cmd.GuestUserList> {
    return this.#ask(ref, signal, (c) => c.getUsers(signal));
  }

  filesystemList(ref: node.VmiRef, signal: AbortSignal): Promise<cmd.GuestFilesystemList> {
    return this.#ask(ref, signal, (c) => c.getFilesystems(signal));
  }

  /** The host path of the VMI's serial console or VNC socket, once the VMI may be attached to. */
  async guestSocket(ref: node.VmiRef | undefined, kind: GuestStreamKind, signal: AbortSignal): Promise<{ uid: string; key: string; path: string }> {
    const vmi = await this.#o.resolver.resolve(ref, 'open.vmi', signal);
    const devices = vmi.spec.domain.devices;
    this.#refuseUnless(vmi, (f, what) => {
      if (kind === 'console' && devices.autoattachSerialConsole === false) {
        return `${what} has no serial console: spec.domain.devices.autoattachSerialConsole is false`;
      }
      if (kind === 'vnc' && devices.autoattachGraphicsDevice === false) {
        return `${what} has no graphics device: spec.domain.devices.autoattachGraphicsDevice is false`;
      }
      return mustRun(f, what);
    });
    const uid = vmi.metadata.uid ?? '';
    const connection = await this.#connection(vmi, signal);
    return { uid, key: objectKey(vmi), path: guestSocketPath(connection.client.socketPath, uid, kind) };
  }

  list(request: node.ListRequest): node.ListResponse {
    if (request.namespace !== '') checkNamespace(request.namespace, 'namespace');
    const vmis = [...this.#o.list()]
      .filter((v) => request.namespace === '' || v.metadata.namespace === request.namespace)
      .map((v) => vmiSummary(v, this.#domainOf(v)))
      .sort((a, b) => a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name));
    return { vmis };
  }

  async #operate(
    ref: node.VmiRef | undefined,
    signal: AbortSignal,
    check: Check,
    act: (client: LauncherClient, vmiJson: Buffer) => Promise<void>,
    event: readonly [EventReason, string] | undefined,
    settled?: Settled,
    field = 'request',
    trace?: OpTrace,
  ): Promise<node.OperationResponse> {
    const vmi = await this.#o.resolver.resolve(ref, field, signal);
    trace?.mark('VMI resolved');
    const uid = vmi.metadata.uid ?? '';
    this.#refuseUnless(vmi, check);
    trace?.mark('precondition checked');
    const connection = await this.#connection(vmi, signal);
    trace?.mark('launcher connection');
    const client = connection.client;
    const key = objectKey(vmi);
    const release = this.#o.holdForAnswer?.(key);
    try {
      try {
        const json = Buffer.from(JSON.stringify(vmi));
        trace?.mark('VMI encoded');
        await act(client, json);
        trace?.mark('launcher call');
      } catch (err) {
        // KubeVirt records freeze and thaw failures on the VMI; other failures only reach the caller.
        if (event === undefined) void this.#o.recorder.record(vmi, EventType.Warning, EventReason.FreezeError, errorText(err));
        throw err;
      }
      if (settled !== undefined) await this.#settle(connection, uid, key, settled, signal);
      trace?.mark('change seen in the cache');
    } finally {
      release?.();
    }
    // Not awaited, as client-go's recorder is asynchronous: the caller should not wait for the
    // API server's Event write (nor for building it, nor for the log line's write: both are
    // made once the answer is sent); the recorder never throws and flushes on close().
    setImmediate(() => {
      if (event !== undefined) void this.#o.recorder.record(vmi, EventType.Normal, ...event);
      this.#o.log.child(vmiLogBindings(vmi.metadata)).info({ operation: event?.[0] ?? 'freeze/unfreeze' }, 'node API operation done');
    });
    return { uid };
  }

  /**
   * Read-your-writes: the launcher reports the change on its domain stream a moment after the
   * call returns; until the handler has seen it, a pause right after an unpause would be
   * refused as "already paused". So the operation returns once the handler's view of the
   * domain shows its effect (bounded). The stream, or this GetDomain, updates the view and
   * queues the reconcile that writes the status.
   */
  async #settle(connection: LauncherConnection, uid: string, key: string, settled: Settled, signal: AbortSignal): Promise<void> {
    // Usually the stream delivered it before the call's answer (both ride one connection).
    if (settled(this.#o.launchers.cache.get(uid)?.domain)) return;
    const domain = await connection.client.getDomain(signal);
    if (settled(domain)) {
      connection.observe(domain);
      this.#o.enqueue(key);
      return;
    }
    // Not published yet: the stream brings it within milliseconds; watch the cache, not the wire.
    const deadline = Date.now() + (this.#o.settleTimeoutMs ?? 2_000);
    while (!settled(this.#o.launchers.cache.get(uid)?.domain)) {
      if (Date.now() >= deadline || signal.aborted) {
        this.#o.log.debug({ uid }, 'operation not visible in the domain yet');
        return;
      }
      await abortableSleep(1, signal);
    }
  }

  async #ask<Res>(ref: node.VmiRef, signal: AbortSignal, act: (client: LauncherClient) => Promise<Res>): Promise<Res> {
    const vmi = await this.#o.resolver.resolve(ref, 'request', signal);
    this.#refuseUnless(vmi, (f, what) => mustRun(f, what) ?? (f.agentConnected ? undefined : `${what} has no guest agent connected`));
    return act((await this.#connection(vmi, signal)).client);
  }

  #refuseUnless(vmi: VirtualMachineInstance, check: Check): void {
    const refusal = check(vmiFacts(vmi, this.#domainOf(vmi), this.#defaulted.get(vmi)), `VMI ${objectKey(vmi)}`);
    if (refusal !== undefined) throw new HandlerError('HANDLER_ERR_VMI_PRECONDITION', refusal);
  }

  #domainOf(vmi: VirtualMachineInstance): cmd.Domain | undefined {
    return this.#o.launchers.cache.get(vmi.metadata.uid ?? '')?.domain;
  }

  async #connection(vmi: VirtualMachineInstance, signal: AbortSignal): Promise<LauncherConnection> {
    const uid = vmi.metadata.uid ?? '';
    const observation = await this.#o.launchers.observe({ uid, key: objectKey(vmi), vmi }, signal);
    const connection = observation.connection;
    if (observation.state !== LauncherState.Ready || connection === undefined) {
      throw new HandlerError('HANDLER_ERR_LAUNCHER_UNAVAILABLE', `the launcher of VMI ${objectKey(vmi)} is not reachable (${observation.state})`);
    }
    return connection;
  }
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
