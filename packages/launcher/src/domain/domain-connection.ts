import type { OpTrace } from '@podvirt/proto';

/**
 * What the launcher needs from libvirt, for the one domain it runs. States and reasons use
 * libvirt's names (`RUNNING`/`BOOTED`, `SHUTOFF`/`DESTROYED` …); state-map.ts turns them into
 * KubeVirt's vocabulary. Implemented by libvirt-domain-connection.ts over @podvirt/libvirt and
 * by the leak-checking fake in the tests.
 */
export interface DomainStatus {
  readonly state: string;
  readonly reason: string;
}

export type DomainOp =
  | 'create'
  | 'createPaused'
  | 'suspend'
  | 'resume'
  /** libvirt's default: the agent when connected, else ACPI. */
  | 'shutdown'
  | 'rebootAgent'
  | 'rebootAcpi'
  | 'reset'
  | 'destroy'
  | 'undefine'
  | 'fsFreeze'
  | 'fsThaw';

export type DomainConnectionEvent =
  | { readonly kind: 'lifecycle'; readonly domain: string; readonly event: string; readonly detail: string }
  | { readonly kind: 'agent'; readonly domain: string; readonly connected: boolean }
  | { readonly kind: 'reboot'; readonly domain: string }
  | { readonly kind: 'ioError'; readonly domain: string; readonly device: string; readonly action: string; readonly reason: string }
  | { readonly kind: 'watchdog'; readonly domain: string; readonly action: string }
  /** The guest released a device a live detach asked for (its alias, `ua-<name>`). */
  | { readonly kind: 'deviceRemoved'; readonly domain: string; readonly alias: string }
  /** The connection died (daemon gone); no more events arrive on it. */
  | { readonly kind: 'closed'; readonly error?: Error }
  /** A new connection replaced a dead one; events in between were missed, so re-read everything. */
  | { readonly kind: 'reconnected' };

export interface CallOptions {
  readonly signal?: AbortSignal;
  /** The cmd call's step trace, when the launcher traces (the stage benchmark). */
  readonly trace?: OpTrace | undefined;
}

export type GuestInfoParams = Readonly<Record<string, string | number | bigint | boolean>>;

export interface DomainConnection {
  /** undefined when no such domain is defined. */
  getState(name: string, o?: CallOptions): Promise<DomainStatus | undefined>;
  /** Live XML (with runtime details such as the resolved machine and agent channel state). */
  getXml(name: string, o?: CallOptions): Promise<string>;
  define(xml: string, o?: CallOptions): Promise<void>;
  /** Adds a device (its XML) to the running domain. */
  attachDevice(name: string, xml: string, o?: CallOptions): Promise<void>;
  /** Asks for a device's removal from the running domain; done once `deviceRemoved` arrives. */
  detachDevice(name: string, xml: string, o?: CallOptions): Promise<void>;
  control(name: string, op: DomainOp, o?: CallOptions): Promise<void>;
  agentCommand(name: string, json: string, timeoutSeconds: number, o?: CallOptions): Promise<string>;
  /** Sets the guest's clock through its agent (libvirt's virDomainSetTime); `ms` since the epoch. */
  setTime(name: string, ms: number, o?: CallOptions): Promise<void>;
  /** libvirt's guest info typed parameters (`os.id`, `fs.0.mountpoint`, `if.0.name` …). */
  guestInfo(name: string, o?: CallOptions): Promise<GuestInfoParams>;
  stats(name: string, o?: CallOptions): Promise<GuestInfoParams>;
  /** Resolves once registered; the returned function unregisters (and must be called). */
  subscribe(listener: (event: DomainConnectionEvent) => void, o?: CallOptions): Promise<() => Promise<void>>;
  close(): Promise<void>;
}
