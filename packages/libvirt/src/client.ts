// Typed, promise-based libvirt calls over one Connection. Every method takes CallOptions
// (AbortSignal, timeout); domain methods take a DomainRef as the daemon returned it.
import { EventEmitter } from 'node:events';
import { Connection } from './connection.js';
import type { CallOptions, ConnectionOptions } from './connection.js';
import { nameDomainState } from './domain-state.js';
import type { DomainStateInfo } from './domain-state.js';
import { enumName } from './enum-name.js';
import { ProtocolError } from './errors.js';
import type { KeepaliveOptions } from './keepalive.js';
import { decodeDomainEvent } from './events.js';
import type { DomainEvent } from './events.js';
import { AgentResponseTimeout, DomainEventId, DomainState, MemoryStatTag } from './gen/constants.js';
import type { DomainEventIdName, DomainStateName, MemoryStatTagName } from './gen/constants.js';
import type { CallSpec } from './wire/call-spec.js';
import * as calls from './wire/calls.js';
import type { FsInfo } from './wire/calls.js';
import { uuidFromString } from './wire/domain-ref.js';
import type { DomainRef } from './wire/domain-ref.js';
import { REMOTE_PROGRAM } from './wire/header.js';
import type { Message } from './wire/header.js';
import { AuthType, DrvFeature } from './wire/procedures.js';
import { typedParamsToRecord } from './wire/typed-param.js';
import type { TypedParamValue } from './wire/typed-param.js';

export interface ConnectOptions extends ConnectionOptions {
  readonly socketPath: string;
  /** The URI for CONNECT_OPEN; the socket already picks the daemon. */
  readonly uri?: string;
  /** Our own PINGs; false turns them off (we still answer the daemon's). Default 5 s × 5. */
  readonly keepalive?: KeepaliveOptions | false;
}

export interface ClientEvents {
  /** A decoded domain event, in the order the daemon sent it. */
  event: [event: DomainEvent];
  /** An event message this package does not decode (its raw header and body). */
  'unknown-event': [message: Message];
  close: [error: Error | undefined];
}

export type FlagsOptions = CallOptions & { readonly flags?: number };
export type TypedParams = Readonly<Record<string, TypedParamValue>>;

export interface DomainInfo {
  readonly state: DomainStateName | 'UNKNOWN';
  readonly maxMemKiB: bigint;
  readonly memoryKiB: bigint;
  readonly nrVirtCpu: number;
  readonly cpuTimeNs: bigint;
}

const DEFAULT_URI = 'qemu:///system';
const DEFAULT_KEEPALIVE: KeepaliveOptions = { intervalMs: 5000, count: 5 };

export class LibvirtClient extends EventEmitter<ClientEvents> {
  readonly #conn: Connection;

  private constructor(conn: Connection) {
    super();
    this.#conn = conn;
    const onMessage = (m: Message): void => this.#onMessage(m);
    conn.on('message', onMessage);
    conn.once('close', (err) => {
      conn.off('message', onMessage);
      this.emit('close', err);
    });
  }

  /** Connects, checks that no authentication is needed, enables keepalive and opens `uri`. */
  static async connect(options: ConnectOptions): Promise<LibvirtClient> {
    const conn = await Connection.open(options.socketPath, options);
    const client = new LibvirtClient(conn);
    const callOptions = { ...(options.signal ? { signal: options.signal } : {}),
      ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }) };
    try {
      const auth = await conn.call(calls.AuthList, undefined, callOptions);
      if (auth.length > 0 && !auth.includes(AuthType.NONE)) {
        throw new ProtocolError(`the daemon requires authentication (types ${auth.join(', ')}), which is not supported`);
      }
      // Asking also tells the daemon that we answer its PINGs, which it then starts sending.
      const keepaliveSupported = await conn.call(calls.SupportsFeature, { feature: DrvFeature.PROGRAM_KEEPALIVE }, callOptions);
      const keepalive = options.keepalive ?? DEFAULT_KEEPALIVE;
      if (keepalive && keepaliveSupported) conn.startKeepalive(keepalive);
      await conn.call(calls.ConnectOpen, { uri: options.uri ?? DEFAULT_URI, flags: 0 }, callOptions);
    } catch (err) {
      await conn.destroy(err as Error);
      throw err;
    }
    return client;
  }

  get closed(): boolean {
    return this.#conn.closed;
  }

  /** Graceful and idempotent: CONNECT_CLOSE, then end the socket once pending calls finish. */
  close(): Promise<void> {
    return this.#conn.close(calls.ConnectClose);
  }

  /** Forceful and idempotent: pending calls reject with ConnectionClosedError (cause: `error`). */
  destroy(error?: Error): Promise<void> {
    return this.#conn.destroy(error);
  }

  /** Calls any procedure described by a CallSpec (for procedures without a wrapper here). */
  call<A, R>(spec: CallSpec<A, R>, args: A, options?: CallOptions): Promise<R> {
    return this.#conn.call(spec, args, options);
  }

  // ---- connection ----
  getHostname(o?: CallOptions): Promise<string> { return this.call(calls.GetHostname, undefined, o); }
  /** Hypervisor version, major * 1,000,000 + minor * 1,000 + release. */
  async getVersion(o?: CallOptions): Promise<number> { return Number(await this.call(calls.GetVersion, undefined, o)); }
  /** libvirt version, major * 1,000,000 + minor * 1,000 + release. */
  async getLibVersion(o?: CallOptions): Promise<number> { return Number(await this.call(calls.GetLibVersion, undefined, o)); }
  getCapabilities(o?: CallOptions): Promise<string> { return this.call(calls.GetCapabilities, undefined, o); }
  /** virConnectGetDomainCapabilities: what this emulator offers a domain of `virtType` on `machine`. */
  getDomainCapabilities(a: Partial<calls.DomainCapabilitiesArgs>, o?: CallOptions): Promise<string> {
    return this.call(calls.GetDomainCapabilities, {
      emulator: a.emulator ?? null, arch: a.arch ?? null, machine: a.machine ?? null, virtType: a.virtType ?? null, flags: a.flags ?? 0,
    }, o);
  }
  listAllDomains(o: FlagsOptions = {}): Promise<DomainRef[]> {
    return this.call(calls.ListAllDomains, { flags: o.flags ?? 0 }, o);
  }

  /** CONNECT_GET_ALL_DOMAIN_STATS; with `domains` it is virDomainListGetStats. */
  async getAllDomainStats(
    o: FlagsOptions & { readonly stats?: number; readonly domains?: readonly DomainRef[] } = {},
  ): Promise<Array<{ domain: DomainRef; params: TypedParams }>> {
    const records = await this.call(calls.GetAllDomainStats, { doms: o.domains ?? [], stats: o.stats ?? 0, flags: o.flags ?? 0 }, o);
    return records.map((rec) => ({ domain: rec.dom, params: typedParamsToRecord(rec.params) }));
  }

  // ---- lookup and definition ----
  domainLookupByName(name: string, o?: CallOptions): Promise<DomainRef> { return this.call(calls.LookupByName, { name }, o); }
  domainLookupByUuid(uuid: Buffer | string, o?: CallOptions): Promise<DomainRef> {
    return this.call(calls.LookupByUuid, { uuid: typeof uuid === 'string' ? uuidFromString(uuid) : uuid }, o);
  }
  domainLookupById(id: number, o?: CallOptions): Promise<DomainRef> { return this.call(calls.LookupById, { id }, o); }
  domainDefineXml(xml: string, o: FlagsOptions = {}): Promise<DomainRef> {
    return this.call(calls.DefineXmlFlags, { xml, flags: o.flags ?? 0 }, o);
  }
  domainUndefine(dom: DomainRef, o: FlagsOptions = {}): Promise<void> { return this.#domFlags(calls.UndefineFlags, dom, o); }
  /** Adds a device (its XML); DomainDeviceModifyFlags.LIVE for the running domain. */
  domainAttachDevice(dom: DomainRef, xml: string, o: FlagsOptions = {}): Promise<void> {
    return this.call(calls.AttachDeviceFlags, { dom, xml, flags: o.flags ?? 0 }, o);
  }
  /** Asks for a device's removal; with LIVE the guest must release it (event DEVICE_REMOVED). */
  domainDetachDevice(dom: DomainRef, xml: string, o: FlagsOptions = {}): Promise<void> {
    return this.call(calls.DetachDeviceFlags, { dom, xml, flags: o.flags ?? 0 }, o);
  }

  // ---- lifecycle ----
  /** Starts a defined domain (CreateFlags.START_PAUSED …); returns the ref with its new id. */
  domainCreate(dom: DomainRef, o: FlagsOptions = {}): Promise<DomainRef> { return this.#domFlags(calls.CreateWithFlags, dom, o); }
  domainSuspend(dom: DomainRef, o?: CallOptions): Promise<void> { return this.call(calls.Suspend, { dom }, o); }
  domainResume(dom: DomainRef, o?: CallOptions): Promise<void> { return this.call(calls.Resume, { dom }, o); }
  /** ShutdownFlags.ACPI_POWER_BTN / GUEST_AGENT choose the method; 0 lets libvirt pick. */
  domainShutdown(dom: DomainRef, o: FlagsOptions = {}): Promise<void> { return this.#domFlags(calls.ShutdownFlags, dom, o); }
  domainReboot(dom: DomainRef, o: FlagsOptions = {}): Promise<void> { return this.#domFlags(calls.Reboot, dom, o); }
  domainReset(dom: DomainRef, o: FlagsOptions = {}): Promise<void> { return this.#domFlags(calls.Reset, dom, o); }
  /** DestroyFlags.GRACEFUL sends SIGTERM only, never SIGKILL. */
  domainDestroy(dom: DomainRef, o: FlagsOptions = {}): Promise<void> { return this.#domFlags(calls.DestroyFlags, dom, o); }

  // ---- inspection ----
  async domainGetState(dom: DomainRef, o: FlagsOptions = {}): Promise<DomainStateInfo> {
    const raw = await this.#domFlags(calls.GetState, dom, o);
    return nameDomainState(raw.state, raw.reason);
  }
  domainGetXmlDesc(dom: DomainRef, o: FlagsOptions = {}): Promise<string> { return this.#domFlags(calls.GetXmlDesc, dom, o); }
  async domainGetInfo(dom: DomainRef, o?: CallOptions): Promise<DomainInfo> {
    const raw = await this.call(calls.GetInfo, { dom }, o);
    return {
      state: enumName(DomainState, raw.state), maxMemKiB: raw.maxMem, memoryKiB: raw.memory,
      nrVirtCpu: raw.nrVirtCpu, cpuTimeNs: raw.cpuTime,
    };
  }
  /** Memory statistics by tag name (values in KiB, LAST_UPDATE in seconds). */
  async domainMemoryStats(
    dom: DomainRef, o: FlagsOptions & { readonly maxStats?: number } = {},
  ): Promise<Partial<Record<MemoryStatTagName | 'UNKNOWN', bigint>>> {
    const stats = await this.call(calls.MemoryStats, { dom, maxStats: o.maxStats ?? MemoryStatTag.NR, flags: o.flags ?? 0 }, o);
    return Object.fromEntries(stats.map((s) => [enumName(MemoryStatTag, s.tag), s.val]));
  }

  // ---- guest agent ----
  /** Freezes the guest's filesystems (all when `mountpoints` is empty); returns how many froze. */
  domainFsFreeze(dom: DomainRef, o: FlagsOptions & { readonly mountpoints?: readonly string[] } = {}): Promise<number> {
    return this.call(calls.FsFreeze, { dom, mountpoints: o.mountpoints ?? [], flags: o.flags ?? 0 }, o);
  }
  domainFsThaw(dom: DomainRef, o: FlagsOptions & { readonly mountpoints?: readonly string[] } = {}): Promise<number> {
    return this.call(calls.FsThaw, { dom, mountpoints: o.mountpoints ?? [], flags: o.flags ?? 0 }, o);
  }
  domainGetFsInfo(dom: DomainRef, o: FlagsOptions = {}): Promise<FsInfo[]> { return this.#domFlags(calls.GetFsInfo, dom, o); }
  /** `types` is a GuestInfoTypes mask; 0 asks for everything the agent offers. */
  async domainGetGuestInfo(dom: DomainRef, o: FlagsOptions & { readonly types?: number } = {}): Promise<TypedParams> {
    return typedParamsToRecord(await this.call(calls.GetGuestInfo, { dom, types: o.types ?? 0, flags: o.flags ?? 0 }, o));
  }
  domainSetTime(dom: DomainRef, time: { seconds: bigint; nseconds: number }, o: FlagsOptions = {}): Promise<void> {
    return this.call(calls.SetTime, { dom, ...time, flags: o.flags ?? 0 }, o);
  }
  domainGetTime(dom: DomainRef, o: FlagsOptions = {}): Promise<{ seconds: bigint; nseconds: number }> {
    return this.#domFlags(calls.GetTime, dom, o);
  }
  /** Sends raw JSON to the guest agent (qemu program); `timeoutSeconds` follows AgentResponseTimeout. */
  domainAgentCommand(
    dom: DomainRef, cmd: string, o: FlagsOptions & { readonly timeoutSeconds?: number } = {},
  ): Promise<string | null> {
    const timeout = o.timeoutSeconds ?? AgentResponseTimeout.DEFAULT;
    return this.call(calls.AgentCommand, { dom, cmd, timeout, flags: o.flags ?? 0 }, o);
  }

  // ---- events ----
  /** Registers for one event id, for one domain or (default) all; events arrive on 'event'. */
  registerDomainEvent(eventId: DomainEventIdName, o: CallOptions & { readonly domain?: DomainRef } = {}): Promise<number> {
    return this.call(calls.EventRegisterAny, { eventId: DomainEventId[eventId], dom: o.domain ?? null }, o);
  }
  deregisterDomainEvent(callbackId: number, o?: CallOptions): Promise<void> {
    return this.call(calls.EventDeregisterAny, { callbackId }, o);
  }

  #domFlags<R>(spec: CallSpec<calls.DomFlags, R>, dom: DomainRef, o: FlagsOptions): Promise<R> {
    return this.call(spec, { dom, flags: o.flags ?? 0 }, o);
  }

  #onMessage(message: Message): void {
    if (message.header.prog !== REMOTE_PROGRAM) {
      this.emit('unknown-event', message);
      return;
    }
    let event: DomainEvent | undefined;
    try {
      event = decodeDomainEvent(message.header.proc, message.body);
    } catch (err) {
      // A body that does not match its layout means we and the daemon disagree on the protocol.
      void this.destroy(new ProtocolError(`malformed event ${message.header.proc}`, { cause: err }));
      return;
    }
    if (event) this.emit('event', event);
    else this.emit('unknown-event', message);
  }
}
