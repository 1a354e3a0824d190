// Launchers without VMs for the handler benchmarks: one grpc-js Cmd server per VMI on a real
// unix socket at the kubelet pods-dir path the handler discovers, answering the calls a
// running VM gets (Info, Ping, GetDomain, Sync, WatchDomain, Pause/Unpause, Shutdown …) from
// a domain held in memory. It counts open domain streams: that is how "re-adopted" is seen.
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { CMD_VERSIONS, cmd } from '@podvirt/proto';

export const LAUNCHER_SOCKET_SUBPATH = join('volumes', 'kubernetes.io~empty-dir', 'sockets', 'launcher-sock');

type Stream = grpc.ServerWritableStream<cmd.WatchDomainRequest, cmd.WatchDomainEvent>;

export class BenchLauncher {
  readonly path: string;
  readonly #server = new grpc.Server();
  readonly #streams = new Set<Stream>();
  #domain: cmd.Domain | undefined;

  private constructor(podsDir: string, podUid: string) {
    this.path = join(podsDir, podUid, LAUNCHER_SOCKET_SUBPATH);
  }

  static async start(podsDir: string, podUid: string): Promise<BenchLauncher> {
    const l = new BenchLauncher(podsDir, podUid);
    await mkdir(dirname(l.path), { recursive: true });
    l.#server.addService(cmd.CmdService, l.#implementation());
    await new Promise<void>((resolve, reject) =>
      l.#server.bindAsync(`unix:${l.path}`, grpc.ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve())),
    );
    return l;
  }

  get openStreams(): number {
    return this.#streams.size;
  }

  close(): void {
    for (const s of this.#streams) s.end();
    this.#streams.clear();
    this.#server.forceShutdown();
  }

  #set(patch: Partial<cmd.Domain>): void {
    this.#domain = cmd.Domain.fromPartial({ ...this.#domain, ...patch, observedAtMs: Date.now() });
    for (const s of this.#streams) s.write({ event: { $case: 'domain', value: this.#domain } });
  }

  #implementation(): cmd.CmdServer {
    const ok = <Res>(fn: () => Res) => (_call: unknown, callback: grpc.sendUnaryData<Res>): void => callback(null, fn());
    const none = (_call: unknown, callback: grpc.sendUnaryData<never>): void => callback({ code: grpc.status.UNIMPLEMENTED, details: 'bench launcher' });
    return {
      info: ok(() => ({ supportedVersions: [...CMD_VERSIONS], negotiatedVersion: 1, launcherVersion: 'bench', libvirtVersion: '', qemuVersion: '' })),
      ping: ok(() => ({})),
      getDomain: ok(() => (this.#domain === undefined ? {} : { domain: this.#domain })),
      sync: ok(() => {
        if (this.#domain === undefined) this.#set({ state: 'Running', reason: 'Booted' });
        return { domain: this.#domain };
      }),
      pause: ok(() => (this.#set({ state: 'Paused', reason: 'User', pausedByUser: true }), {})),
      unpause: ok(() => (this.#set({ state: 'Running', reason: 'Unpaused', pausedByUser: false }), {})),
      shutdown: ok(() => (this.#set({ state: 'Shutoff', reason: 'Shutdown' }), {})),
      kill: ok(() => (this.#set({ state: 'Shutoff', reason: 'Destroyed' }), {})),
      delete: ok(() => (this.#set({ deleted: true }), {})),
      watchDomain: (call: Stream) => {
        this.#streams.add(call);
        const drop = (): void => void this.#streams.delete(call);
        call.on('cancelled', drop);
        call.on('close', drop);
        call.on('error', drop);
        call.write(this.#domain === undefined ? { event: { $case: 'noDomain', value: {} } } : { event: { $case: 'domain', value: this.#domain } });
      },
      freeze: none, unfreeze: none, softReboot: none, reset: none, getDomainStats: none,
      getGuestInfo: none, getUsers: none, getFilesystems: none, guestPing: none,
      prepareMigrationTarget: none, migrate: none, cancelMigration: none,
    };
  }
}
