import {
  AbortError, ConnectionClosedError, CreateFlags, DeviceModifyFlags, LibvirtClient, LibvirtError, RebootFlags, ShutdownFlags, TimeoutError,
  isAgentUnresponsive, isNotFound, isOperationInvalid, isOperationTimeout,
} from '@podvirt/libvirt';
import type { DomainEvent, DomainEventIdName, DomainRef } from '@podvirt/libvirt';
import { LauncherError } from '../errors.js';
import type {
  CallOptions, DomainConnection, DomainConnectionEvent, DomainOp, DomainStatus, GuestInfoParams,
} from './domain-connection.js';

/** libvirt's errors in the launcher's codes, so the status table has one vocabulary. */
export function translateLibvirtError(err: unknown): unknown {
  if (err instanceof LauncherError) return err;
  if (isNotFound(err)) return new LauncherError('LAUNCHER_ERR_NO_DOMAIN', (err as Error).message, { cause: err });
  if (isOperationInvalid(err)) return new LauncherError('LAUNCHER_ERR_WRONG_STATE', (err as Error).message, { cause: err });
  if (isAgentUnresponsive(err)) return new LauncherError('LAUNCHER_ERR_AGENT_UNRESPONSIVE', (err as Error).message, { cause: err });
  if (isOperationTimeout(err) || err instanceof TimeoutError || err instanceof AbortError) {
    return new LauncherError('LAUNCHER_ERR_TIMEOUT', (err as Error).message, { cause: err });
  }
  if (err instanceof ConnectionClosedError) return new LauncherError('LAUNCHER_ERR_DAEMON', err.message, { cause: err });
  if (err instanceof LibvirtError) return new LauncherError('LAUNCHER_ERR_LIBVIRT', err.message, { cause: err });
  return err;
}

const EVENT_IDS: readonly DomainEventIdName[] = ['LIFECYCLE', 'AGENT_LIFECYCLE', 'REBOOT', 'IO_ERROR_REASON', 'WATCHDOG', 'DEVICE_REMOVED'];

function toEvent(e: DomainEvent): DomainConnectionEvent | undefined {
  const domain = e.domain.name;
  switch (e.kind) {
    case 'LIFECYCLE': return { kind: 'lifecycle', domain, event: e.event, detail: e.detail };
    case 'AGENT_LIFECYCLE': return { kind: 'agent', domain, connected: e.state === 'CONNECTED' };
    case 'REBOOT': return { kind: 'reboot', domain };
    case 'IO_ERROR': case 'IO_ERROR_REASON': return { kind: 'ioError', domain, device: e.devAlias || e.srcPath, action: e.action, reason: e.reason ?? '' };
    case 'WATCHDOG': return { kind: 'watchdog', domain, action: e.action };
    case 'DEVICE_REMOVED': return { kind: 'deviceRemoved', domain, alias: e.devAlias };
    default: return undefined;
  }
}

/** The launcher's DomainConnection over @podvirt/libvirt: one client, one daemon socket. */
export class LibvirtDomainConnection implements DomainConnection {
  readonly #client: LibvirtClient;
  readonly #refs = new Map<string, DomainRef>();

  constructor(client: LibvirtClient) {
    this.#client = client;
  }

  static async connect(socketPath: string, signal?: AbortSignal): Promise<LibvirtDomainConnection> {
    const client = await LibvirtClient.connect({ socketPath, uri: 'qemu:///system', timeoutMs: 15_000, ...(signal ? { signal } : {}) });
    return new LibvirtDomainConnection(client);
  }

  get client(): LibvirtClient {
    return this.#client;
  }

  async #try<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw translateLibvirtError(err);
    }
  }

  /**
   * Runs `fn` on the domain's handle. The handle (name and UUID) is looked up once and kept:
   * a lookup is a daemon round trip, and pause+unpause is two calls of one round trip each
   * otherwise. libvirt finds a domain by the handle's UUID, so a handle that went stale (the
   * domain undefined, or defined again under a new UUID) fails with "no domain" before the call
   * does anything; then it is looked up again and the call made once more.
   */
  async #onDomain<T>(name: string, o: CallOptions, fn: (dom: DomainRef) => Promise<T>): Promise<T> {
    const cached = this.#refs.get(name);
    if (cached !== undefined) {
      try {
        return await fn(cached);
      } catch (err) {
        if (!isNotFound(err)) throw err;
        this.#refs.delete(name);
      }
    }
    const dom = await this.#client.domainLookupByName(name, o);
    this.#refs.set(name, dom);
    return fn(dom);
  }

  getState(name: string, o: CallOptions = {}): Promise<DomainStatus | undefined> {
    return this.#try(async () => {
      try {
        const s = await this.#onDomain(name, o, (dom) => this.#client.domainGetState(dom, o));
        return { state: s.state, reason: s.reason };
      } catch (err) {
        if (isNotFound(err)) return undefined;
        throw err;
      }
    });
  }

  getXml(name: string, o: CallOptions = {}): Promise<string> {
    return this.#try(() => this.#onDomain(name, o, (dom) => this.#client.domainGetXmlDesc(dom, o)));
  }

  define(xml: string, o: CallOptions = {}): Promise<void> {
    return this.#try(async () => {
      const dom = await this.#client.domainDefineXml(xml, o);
      this.#refs.set(dom.name, dom);
    });
  }

  attachDevice(name: string, xml: string, o: CallOptions = {}): Promise<void> {
    return this.#try(() => this.#onDomain(name, o, (dom) => this.#client.domainAttachDevice(dom, xml, { ...o, flags: DeviceModifyFlags.LIVE })));
  }

  detachDevice(name: string, xml: string, o: CallOptions = {}): Promise<void> {
    return this.#try(() => this.#onDomain(name, o, (dom) => this.#client.domainDetachDevice(dom, xml, { ...o, flags: DeviceModifyFlags.LIVE })));
  }

  control(name: string, op: DomainOp, o: CallOptions = {}): Promise<void> {
    return this.#try(() => this.#onDomain(name, o, (dom) => this.#control(dom, op, o)));
  }

  async #control(dom: DomainRef, op: DomainOp, o: CallOptions): Promise<void> {
    const c = this.#client;
    switch (op) {
      case 'create': await c.domainCreate(dom, o); return;
      case 'createPaused': await c.domainCreate(dom, { ...o, flags: CreateFlags.START_PAUSED }); return;
      case 'suspend': return c.domainSuspend(dom, o);
      case 'resume': return c.domainResume(dom, o);
      case 'shutdown': return c.domainShutdown(dom, { ...o, flags: ShutdownFlags.DEFAULT });
      case 'rebootAgent': return c.domainReboot(dom, { ...o, flags: RebootFlags.GUEST_AGENT });
      case 'rebootAcpi': return c.domainReboot(dom, { ...o, flags: RebootFlags.ACPI_POWER_BTN });
      case 'reset': return c.domainReset(dom, o);
      case 'destroy': return c.domainDestroy(dom, o);
      case 'undefine':
        await c.domainUndefine(dom, o);
        this.#refs.delete(dom.name);
        return;
      case 'fsFreeze': await c.domainFsFreeze(dom, o); return;
      case 'fsThaw': await c.domainFsThaw(dom, o); return;
    }
  }

  setTime(name: string, ms: number, o: CallOptions = {}): Promise<void> {
    const time = { seconds: BigInt(Math.floor(ms / 1000)), nseconds: (ms % 1000) * 1_000_000 };
    return this.#try(() => this.#onDomain(name, o, (dom) => this.#client.domainSetTime(dom, time, o)));
  }

  agentCommand(name: string, json: string, timeoutSeconds: number, o: CallOptions = {}): Promise<string> {
    return this.#try(async () => (await this.#onDomain(name, o, (dom) => this.#client.domainAgentCommand(dom, json, { ...o, timeoutSeconds }))) ?? '');
  }

  guestInfo(name: string, o: CallOptions = {}): Promise<GuestInfoParams> {
    return this.#try(() => this.#onDomain(name, o, (dom) => this.#client.domainGetGuestInfo(dom, o) as Promise<GuestInfoParams>));
  }

  stats(name: string, o: CallOptions = {}): Promise<GuestInfoParams> {
    return this.#try(async () => {
      const records = await this.#onDomain(name, o, (dom) => this.#client.getAllDomainStats({ ...o, domains: [dom] }));
      return (records[0]?.params ?? {}) as GuestInfoParams;
    });
  }

  subscribe(listener: (e: DomainConnectionEvent) => void, o: CallOptions = {}): Promise<() => Promise<void>> {
    return this.#try(async () => {
      const c = this.#client;
      const onEvent = (e: DomainEvent): void => {
        const mapped = toEvent(e);
        if (mapped) listener(mapped);
      };
      const onClose = (error: Error | undefined): void => listener({ kind: 'closed', ...(error ? { error } : {}) });
      c.on('event', onEvent);
      c.once('close', onClose);
      const ids: number[] = [];
      const unsubscribe = async (): Promise<void> => {
        c.off('event', onEvent);
        c.off('close', onClose);
        if (!c.closed) await Promise.all(ids.map((id) => c.deregisterDomainEvent(id).catch(() => undefined)));
      };
      // All at once (one round trip's wait instead of five on the launcher's way to ready); the
      // ones that did register are unregistered when any fails.
      const registered = await Promise.allSettled(EVENT_IDS.map((id) => c.registerDomainEvent(id, o)));
      for (const r of registered) if (r.status === 'fulfilled') ids.push(r.value);
      const failed = registered.find((r) => r.status === 'rejected');
      if (failed !== undefined) {
        await unsubscribe();
        throw failed.reason;
      }
      return unsubscribe;
    });
  }

  close(): Promise<void> {
    return this.#client.close();
  }
}
