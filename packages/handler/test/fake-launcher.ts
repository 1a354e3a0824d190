// A fake launcher: a real grpc-js server implementing cmd.CmdServer on a real unix socket,
// laid out like the kubelet pods dir (<podsDir>/<podUid>/volumes/kubernetes.io~empty-dir/
// sockets/launcher-sock). Its domain is a small state machine the test drives; it can stop
// answering (hang) and it counts open WatchDomain streams so a test can catch a leaked one.

import { spawnSync } from 'node:child_process';
import { mkdir, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { CMD_VERSIONS, cmd, ERROR_CODE_TRAILER, shutdownGrpcServer } from '@podvirt/proto';
import { LAUNCHER_SOCKET_SUBPATH } from '../src/launcher/socket-discovery.js';

export interface FakeLauncherOptions {
  readonly podsDir: string;
  readonly podUid: string;
  readonly versions?: readonly number[];
  /** Answer Sync with this gRPC error instead of starting the domain; `launcherCode` goes in the error-code trailer. */
  syncError?: { code: grpc.status; details: string; launcherCode?: string } | undefined;
  /** Shutdown powers the guest off after this long (undefined: the guest ignores ACPI). */
  shutdownAfterMs?: number | undefined;
  /** Answer GetDomain with this gRPC error (a launcher that does not serve it, or breaks). */
  getDomainError?: { code: grpc.status; details: string } | undefined;
  /** The guest's disk is full: a domain resumed from an I/O-error pause pauses again at once. */
  diskFull?: boolean | 'instant' | undefined;
}

type Unary = (call: { request: unknown }, callback: grpc.sendUnaryData<unknown>) => void;

export class FakeLauncher {
  readonly path: string;
  readonly calls: string[] = [];
  /** How many times Sync resumed a domain paused by something other than the user. */
  resumes = 0;
  /** Every Migrate request, in order. */
  readonly migrateRequests: cmd.MigrateRequest[] = [];
  readonly #o: FakeLauncherOptions;
  readonly #server = new grpc.Server();
  readonly #streams = new Set<grpc.ServerWritableStream<cmd.WatchDomainRequest, cmd.WatchDomainEvent>>();
  readonly #held: Array<() => void> = [];
  readonly #timers = new Set<NodeJS.Timeout>();
  #domain: cmd.Domain | undefined;
  #hung = false;
  readonly #heldSyncs: Array<() => void> = [];
  #holdSyncs = false;

  private constructor(o: FakeLauncherOptions) {
    this.#o = o;
    this.path = join(o.podsDir, o.podUid, LAUNCHER_SOCKET_SUBPATH);
  }

  static async start(o: FakeLauncherOptions): Promise<FakeLauncher> {
    const fake = new FakeLauncher(o);
    await mkdir(dirname(fake.path), { recursive: true });
    fake.#server.addService(cmd.CmdService, fake.#implementation());
    await new Promise<void>((resolve, reject) =>
      fake.#server.bindAsync(`unix:${fake.path}`, grpc.ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve())),
    );
    return fake;
  }

  get options(): FakeLauncherOptions {
    return this.#o;
  }

  get domain(): cmd.Domain | undefined {
    return this.#domain;
  }

  get openStreams(): number {
    return this.#streams.size;
  }

  /** Changes the domain and pushes it to every watcher, as the launcher's libvirt events do. */
  setDomain(patch: Partial<cmd.Domain> | undefined): void {
    this.#domain = patch === undefined ? undefined : cmd.Domain.fromPartial({ ...this.#base(), ...this.#domain, ...patch, observedAtMs: Date.now() });
    this.#publish(this.#domain === undefined ? { event: { $case: 'noDomain', value: {} } } : { event: { $case: 'domain', value: this.#domain } });
  }

  notice(type: string, reason: string, message: string): void {
    this.#publish({ event: { $case: 'notice', value: { type, reason, message } } });
  }

  /** Stops answering anything (a SIGSTOPped launcher); resume() lets held calls through. */
  hang(): void {
    this.#hung = true;
  }

  resume(): void {
    this.#hung = false;
    for (const release of this.#held.splice(0)) release();
  }

  /** Holds every Sync unanswered (a domain whose start takes long) until releaseSyncs(). */
  holdSyncs(): void {
    this.#holdSyncs = true;
  }

  /** How many Syncs are held unanswered now. */
  get heldSyncs(): number {
    return this.#heldSyncs.length;
  }

  releaseSyncs(): void {
    this.#holdSyncs = false;
    for (const release of this.#heldSyncs.splice(0)) release();
  }

  /** Ends every open WatchDomain stream with an error, as a launcher restart would. */
  breakStreams(): void {
    // grpc-js turns an 'error' on a server stream into the call's final status.
    for (const s of this.#streams) s.emit('error', { code: grpc.status.UNAVAILABLE, details: 'stream broken by test' });
    this.#streams.clear();
  }

  async close(): Promise<void> {
    await this.#stop();
    await rm(this.path, { force: true });
  }

  async #stop(): Promise<void> {
    for (const t of this.#timers) clearTimeout(t);
    this.#hung = false;
    this.#held.splice(0);
    this.#holdSyncs = false;
    this.#heldSyncs.splice(0);
    for (const s of this.#streams) s.end();
    this.#streams.clear();
    await shutdownGrpcServer(this.#server, 500);
  }

  /**
   * Dies as a SIGKILLed launcher does: the server is gone but its socket file stays, so a
   * connect is refused (nobody listens) instead of failing with ENOENT.
   */
  async exit(): Promise<void> {
    await this.#stop();
    const listenAndDie = `require('node:net').createServer().listen(${JSON.stringify(this.path)}, () => process.kill(process.pid, 'SIGKILL'))`;
    const child = spawnSync(process.execPath, ['-e', listenAndDie], { timeout: 10_000 });
    if (child.signal !== 'SIGKILL') throw new Error(`could not leave a stale socket at ${this.path}: ${child.stderr.toString()}`);
  }

  #base(): Partial<cmd.Domain> {
    return { name: 'default_vm1', namespace: 'default', vmiName: 'vm1', vmiUid: 'uid-1' };
  }

  #publish(event: cmd.WatchDomainEvent): void {
    if (this.#hung) return;
    for (const s of this.#streams) s.write(event);
  }

  #after(ms: number, fn: () => void): void {
    const t = setTimeout(() => {
      this.#timers.delete(t);
      fn();
    }, ms);
    this.#timers.add(t);
  }

  /** Wraps a handler so that a hung launcher holds the call without answering. */
  #unary(name: string, fn: (request: unknown) => unknown): Unary {
    return (call, callback) => {
      const run = (): void => {
        this.calls.push(name);
        try {
          callback(null, fn(call.request));
        } catch (err) {
          callback(err as grpc.ServiceError);
        }
      };
      if (this.#hung) this.#held.push(run);
      else if (name === 'Sync' && this.#holdSyncs) this.#heldSyncs.push(run);
      else run();
    };
  }

  #implementation(): cmd.CmdServer {
    const empty = (): cmd.Empty => ({});
    const unimplemented: Unary = (_call, callback) => callback({ code: grpc.status.UNIMPLEMENTED, details: 'not in the fake' });
    return {
      info: this.#unary('Info', () => ({
        supportedVersions: [...(this.#o.versions ?? CMD_VERSIONS)],
        negotiatedVersion: 0,
        launcherVersion: 'fake',
        libvirtVersion: '',
        qemuVersion: '',
      })),
      ping: this.#unary('Ping', empty),
      getDomain: this.#unary('GetDomain', () => {
        const failure = this.#o.getDomainError;
        if (failure !== undefined) throw Object.assign(new Error(failure.details), failure);
        return this.#domain === undefined ? {} : { domain: this.#domain };
      }),
      sync: this.#unary('Sync', () => {
        if (this.#o.syncError !== undefined) {
          const { code, details, launcherCode } = this.#o.syncError;
          const metadata = new grpc.Metadata();
          if (launcherCode !== undefined) metadata.set(ERROR_CODE_TRAILER, launcherCode);
          throw { code, details, metadata };
        }
        // Defines and boots a missing domain; one that stopped stays stopped, so a Sync racing
        // a crash in a test cannot resurrect it.
        if (this.#domain === undefined) this.setDomain({ state: 'Running', reason: 'Booted', deleted: false });
        // As the launcher does: resume a domain paused by anything but the user.
        if (this.#domain?.state === 'Paused' && this.#domain.pausedByUser !== true) {
          this.resumes += 1;
          // 'instant': qemu pauses again before the launcher's view shows it running: no event.
          if (this.#o.diskFull === 'instant') return { domain: this.#domain };
          this.setDomain({ state: 'Running', reason: 'Unpaused' });
          if (this.#o.diskFull === true) this.#after(5, () => this.setDomain({ state: 'Paused', reason: 'IOError' }));
        }
        return { domain: this.#domain };
      }),
      shutdown: this.#unary('Shutdown', (req) => {
        const vmi = JSON.parse((req as cmd.VmiRequest).vmiJson.toString()) as { spec?: { terminationGracePeriodSeconds?: number } };
        if (this.#domain?.gracefulShutdown?.started !== true) {
          const grace = vmi.spec?.terminationGracePeriodSeconds ?? 30;
          const now = Date.now();
          this.setDomain({ gracefulShutdown: { started: true, startedAtMs: now, gracePeriodSeconds: grace, deadlineMs: now + grace * 1000 } });
        }
        const after = this.#o.shutdownAfterMs;
        if (after !== undefined) this.#after(after, () => this.setDomain({ state: 'Shutoff', reason: 'Shutdown' }));
        return {};
      }),
      kill: this.#unary('Kill', () => {
        if (this.#domain !== undefined) this.setDomain({ state: 'Shutoff', reason: 'Destroyed' });
        return {};
      }),
      delete: this.#unary('Delete', () => {
        if (this.#domain !== undefined) this.setDomain({ deleted: true, state: 'NoState', reason: 'NonExistent' });
        return {};
      }),
      watchDomain: (call) => {
        this.#streams.add(call);
        const drop = (): void => void this.#streams.delete(call);
        call.on('cancelled', drop);
        call.on('close', drop);
        call.on('error', drop);
        if (!this.#hung) call.write(this.#domain === undefined ? { event: { $case: 'noDomain', value: {} } } : { event: { $case: 'domain', value: this.#domain } });
      },
      ...this.#operations(),
      getDomainStats: unimplemented, guestPing: unimplemented,
      ...this.#migration(),
    } as cmd.CmdServer;
  }

  /**
   * Live migration as the launcher answers it: Prepare makes no domain; Migrate starts the
   * progress report (the test drives its end with setDomain); Cancel marks the abort.
   */
  #migration(): Record<'prepareMigrationTarget' | 'migrate' | 'cancelMigration', Unary> {
    return {
      prepareMigrationTarget: this.#unary('PrepareMigrationTarget', () => {
        if (this.#domain !== undefined && !this.#domain.deleted) throw { code: grpc.status.FAILED_PRECONDITION, details: 'a migration target starts empty' };
        return { domainXml: '<domain type="qemu"/>' };
      }),
      migrate: this.#unary('Migrate', (req) => {
        const d = this.#domain;
        if (d === undefined || d.deleted || d.state !== 'Running') throw { code: grpc.status.FAILED_PRECONDITION, details: 'the domain does not run' };
        if (d.migration?.phase === 'Running') throw { code: grpc.status.FAILED_PRECONDITION, details: 'a migration runs' };
        this.migrateRequests.push(req as cmd.MigrateRequest);
        this.setDomain({ migration: cmd.MigrationProgress.fromPartial({ phase: 'Running', startedAtMs: Date.now(), mode: 'PreCopy' }) });
        return {};
      }),
      cancelMigration: this.#unary('CancelMigration', () => {
        const m = this.#domain?.migration;
        if (m?.phase === 'Running') this.setDomain({ migration: { ...m, abortRequested: true, abortStatus: 'Aborting' } });
        return {};
      }),
    };
  }

  /** The node API's operations, with the launcher's state checks (FAILED_PRECONDITION). */
  #operations(): Record<'pause' | 'unpause' | 'freeze' | 'unfreeze' | 'softReboot' | 'reset' | 'getGuestInfo' | 'getUsers' | 'getFilesystems', Unary> {
    const refuse = (details: string): never => {
      throw { code: grpc.status.FAILED_PRECONDITION, details };
    };
    const running = (): cmd.Domain => {
      const d = this.#domain;
      if (d === undefined || d.deleted) return refuse('no domain');
      return d;
    };
    const agent = (): void => {
      if (running().agentConnected !== true) refuse('no guest agent connected');
    };
    const guest = cmd.GuestInfo.fromPartial({
      guestAgentVersion: 'fake', hostname: 'fake-guest',
      users: [{ userName: 'root', domain: '', loginTime: 1 }],
      filesystems: [{ diskName: 'vda', mountPoint: '/', fileSystemType: 'ext4', usedBytes: 1, totalBytes: 2, disks: ['vda'] }],
    });
    return {
      pause: this.#unary('Pause', () => {
        if (running().state !== 'Running') refuse('not running');
        this.setDomain({ state: 'Paused', reason: 'User', pausedByUser: true });
        return {};
      }),
      unpause: this.#unary('Unpause', () => {
        if (running().state !== 'Paused') refuse('not paused');
        this.setDomain({ state: 'Running', reason: 'Unpaused', pausedByUser: false });
        return {};
      }),
      freeze: this.#unary('Freeze', (req) => {
        agent();
        this.setDomain({ fsFreezeStatus: 'frozen' });
        const seconds = (req as cmd.FreezeRequest).unfreezeTimeoutSeconds;
        if (seconds > 0) this.#after(seconds * 1000, () => this.setDomain({ fsFreezeStatus: '' }));
        return {};
      }),
      unfreeze: this.#unary('Unfreeze', () => {
        agent();
        this.setDomain({ fsFreezeStatus: '' });
        return {};
      }),
      softReboot: this.#unary('SoftReboot', () => (running(), {})),
      reset: this.#unary('Reset', () => (running(), {})),
      getGuestInfo: this.#unary('GetGuestInfo', () => (agent(), guest)),
      getUsers: this.#unary('GetUsers', () => (agent(), { users: guest.users })),
      getFilesystems: this.#unary('GetFilesystems', () => (agent(), { filesystems: guest.filesystems })),
    };
  }
}
