// An in-memory libvirt for one domain. It follows libvirt's state machine and event order
// closely enough for the domain manager, lets a test inject failures and guest behaviour,
// and fails the test that leaks: `assertClean()` throws while a subscription is still
// registered or the connection is still open.
import { LauncherError } from '../src/errors.js';
import type {
  CallOptions, DomainConnection, DomainConnectionEvent, DomainOp, DomainStatus, GuestInfoParams,
} from '../src/domain/domain-connection.js';

export class FakeDomainConnection implements DomainConnection {
  xml: string | undefined;
  name: string | undefined;
  status: DomainStatus | undefined;
  agentConnected = false;
  frozen = false;
  closed = false;
  readonly calls: string[] = [];
  readonly guest: Record<string, string | number> = {
    'os.id': 'podvirt', 'os.name': 'podvirt test guest', 'os.kernel-release': '6.1.0', 'hostname': 'guest', 'timezone.name': 'UTC',
    'fs.count': 1, 'fs.0.name': 'vda', 'fs.0.mountpoint': '/mnt', 'fs.0.fstype': 'ext4', 'fs.0.total-bytes': 16777216, 'fs.0.used-bytes': 1024,
    'fs.0.disk.count': 1, 'fs.0.disk.0.alias': 'vda', 'user.count': 0, 'if.count': 1, 'if.0.name': 'lo', 'if.0.hwaddr': '00:00:00:00:00:00',
    'if.0.addr.count': 1, 'if.0.addr.0.addr': '127.0.0.1',
  };
  /** op → error thrown by the next call of that op (then cleared). */
  readonly failures = new Map<string, Error>();
  /** Hold an op until the returned release function is called (for deadline tests). */
  readonly holds = new Map<string, Promise<void>>();
  /** Whether ACPI presses power the guest off (false models a guest without acpid yet). */
  acpiObeyed = true;
  readonly #listeners = new Set<(e: DomainConnectionEvent) => void>();

  emit(event: DomainConnectionEvent): void {
    for (const l of [...this.#listeners]) l(event);
  }

  /** Guest-side changes a test drives directly. */
  setState(state: string, reason: string, event?: [string, string]): void {
    this.status = { state, reason };
    if (event && this.name) this.emit({ kind: 'lifecycle', domain: this.name, event: event[0], detail: event[1] });
  }

  connectAgent(connected: boolean): void {
    this.agentConnected = connected;
    if (this.name) this.emit({ kind: 'agent', domain: this.name, connected });
  }

  async #enter(what: string, name?: string): Promise<void> {
    if (this.closed) throw new LauncherError('LAUNCHER_ERR_DAEMON', 'connection closed');
    this.calls.push(what);
    await this.holds.get(what);
    const failure = this.failures.get(what);
    if (failure) {
      this.failures.delete(what);
      throw failure;
    }
    if (name !== undefined && name !== this.name) throw new LauncherError('LAUNCHER_ERR_NO_DOMAIN', `Domain not found: ${name}`);
  }

  async getState(name: string, _o?: CallOptions): Promise<DomainStatus | undefined> {
    await this.#enter('getState');
    return name === this.name ? this.status : undefined;
  }

  async getXml(name: string): Promise<string> {
    await this.#enter('getXml', name);
    const machine = (this.xml ?? '').replace(/machine="q35"/, 'machine="pc-q35-7.2"');
    return machine.replace('<target type="virtio" name="org.qemu.guest_agent.0"/>',
      `<target type="virtio" name="org.qemu.guest_agent.0" state="${this.agentConnected ? 'connected' : 'disconnected'}"/>`);
  }

  /** A guest that keeps a detached device (never sends deviceRemoved). */
  guestHoldsDevices = false;

  async attachDevice(name: string, xml: string): Promise<void> {
    await this.#enter('attachDevice', name);
    this.xml = (this.xml ?? '').replace('</devices>', `${xml}\n</devices>`);
  }

  async detachDevice(name: string, xml: string): Promise<void> {
    await this.#enter('detachDevice', name);
    const alias = /<alias name="([^"]+)"/.exec(xml)?.[1] ?? '';
    if (this.guestHoldsDevices) return;
    this.xml = (this.xml ?? '').replace(/<disk\b[\s\S]*?<\/disk>\n?/g, (d) => (d.includes(`<alias name="${alias}"`) ? '' : d));
    setImmediate(() => this.emit({ kind: 'deviceRemoved', domain: name, alias }));
  }

  async define(xml: string): Promise<void> {
    await this.#enter('define');
    this.xml = xml;
    this.name = /<name>([^<]+)<\/name>/.exec(xml)?.[1];
    if (this.status === undefined) this.setState('SHUTOFF', 'UNKNOWN', ['DEFINED', 'ADDED']);
  }

  async control(name: string, op: DomainOp): Promise<void> {
    await this.#enter(op, name);
    const s = this.status?.state;
    const invalid = (): never => { throw new LauncherError('LAUNCHER_ERR_WRONG_STATE', `Requested operation is not valid: ${op} in ${s}`); };
    switch (op) {
      case 'create': case 'createPaused':
        if (s !== 'SHUTOFF') invalid();
        this.setState('RUNNING', 'BOOTED', ['STARTED', 'BOOTED']);
        if (op === 'createPaused') this.setState('PAUSED', 'USER', ['SUSPENDED', 'PAUSED']);
        return;
      // As libvirt: suspending a paused domain does nothing; resuming a running one is refused.
      case 'suspend':
        if (s === 'PAUSED') return;
        if (s !== 'RUNNING') invalid();
        this.setState('PAUSED', 'USER', ['SUSPENDED', 'PAUSED']);
        return;
      case 'resume': if (s !== 'PAUSED') invalid(); this.setState('RUNNING', 'UNPAUSED', ['RESUMED', 'UNPAUSED']); return;
      case 'shutdown':
        if (s !== 'RUNNING' && s !== 'PAUSED') invalid();
        if (this.agentConnected || this.acpiObeyed) {
          this.agentConnected = false;
          this.setState('SHUTOFF', 'SHUTDOWN', ['STOPPED', 'SHUTDOWN']);
        }
        return;
      case 'rebootAgent': case 'rebootAcpi':
        if (s !== 'RUNNING') invalid();
        if (this.name) this.emit({ kind: 'reboot', domain: this.name });
        return;
      case 'reset': if (s !== 'RUNNING' && s !== 'PAUSED') invalid(); return;
      case 'destroy':
        if (s === 'SHUTOFF') invalid();
        this.agentConnected = false;
        this.setState('SHUTOFF', 'DESTROYED', ['STOPPED', 'DESTROYED']);
        return;
      case 'undefine':
        if (this.name) this.emit({ kind: 'lifecycle', domain: this.name, event: 'UNDEFINED', detail: 'REMOVED' });
        this.status = undefined; this.name = undefined; this.xml = undefined;
        return;
      case 'fsFreeze': case 'fsThaw':
        if (!this.agentConnected) throw new LauncherError('LAUNCHER_ERR_AGENT_UNRESPONSIVE', 'QEMU guest agent is not connected');
        this.frozen = op === 'fsFreeze';
        return;
    }
  }

  /** The times the guest's clock was set to (ms since the epoch). */
  readonly clockSets: number[] = [];

  async setTime(name: string, ms: number): Promise<void> {
    await this.#enter('setTime', name);
    if (!this.agentConnected) throw new LauncherError('LAUNCHER_ERR_AGENT_UNRESPONSIVE', 'QEMU guest agent is not connected');
    this.clockSets.push(ms);
  }

  async agentCommand(name: string, json: string): Promise<string> {
    await this.#enter('agentCommand', name);
    if (!this.agentConnected) throw new LauncherError('LAUNCHER_ERR_AGENT_UNRESPONSIVE', 'QEMU guest agent is not connected');
    const cmd = (JSON.parse(json) as { execute: string }).execute;
    if (cmd === 'guest-info') return JSON.stringify({ return: { version: '7.2.22', supported_commands: [{ name: 'guest-ping', enabled: true }] } });
    if (cmd === 'guest-fsfreeze-status') return JSON.stringify({ return: this.frozen ? 'frozen' : 'thawed' });
    return JSON.stringify({ return: {} });
  }

  async guestInfo(name: string): Promise<GuestInfoParams> {
    await this.#enter('guestInfo', name);
    if (!this.agentConnected) throw new LauncherError('LAUNCHER_ERR_AGENT_UNRESPONSIVE', 'QEMU guest agent is not connected');
    return { ...this.guest };
  }

  async stats(name: string): Promise<GuestInfoParams> {
    await this.#enter('stats', name);
    return { 'state.state': 1, 'balloon.current': 131072, 'cpu.time': 123n };
  }

  async subscribe(listener: (e: DomainConnectionEvent) => void): Promise<() => Promise<void>> {
    await this.#enter('subscribe');
    this.#listeners.add(listener);
    return async () => { this.#listeners.delete(listener); };
  }

  /** The daemon died: pending and later calls fail, listeners hear `closed` once. */
  kill(): void {
    this.closed = true;
    this.emit({ kind: 'closed', error: new Error('daemon died') });
    this.#listeners.clear();
  }

  close(): Promise<void> {
    this.closed = true;
    return Promise.resolve();
  }

  assertClean(): void {
    if (this.#listeners.size > 0) throw new Error(`leak: ${this.#listeners.size} event subscription(s) still registered`);
    if (!this.closed) throw new Error('leak: connection not closed');
  }
}
