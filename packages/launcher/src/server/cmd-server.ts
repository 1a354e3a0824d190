import { chmod, mkdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import {
  CMD_VERSIONS, cmd, cmdDeadlineMs, highestCommonVersion, lenientService, malformedReason, shutdownGrpcServer, unaryHandler,
  OP_TRACE_ON, type CmdUnaryMethod, type OpTrace, type UnaryMethodBody,
} from '@podvirt/proto';
import type { Logger } from 'pino';
import { LauncherError } from '../errors.js';
import type { DomainManager } from '../domain/domain-manager.js';
import type { GuestAgentOps } from '../domain/guest-agent-ops.js';
import type { VmiRef } from '../domain/vmi-ref.js';
import type { WatchHub } from '../domain/watch-hub.js';
import { migrationPlan } from '../migration/migration-request.js';
import type { MigrationSource } from '../migration/migration-source.js';
import { toGrpcStatus } from './grpc-status.js';
import { decodeVmiRequest, vmiRefOf } from './parse-vmi.js';

export const INIT_SOCKET = 'launcher-init-sock';
export const READY_SOCKET = 'launcher-sock';

export interface CmdServerOptions {
  /** `<kubevirt-share-dir>/sockets`. */
  readonly socketDir: string;
  readonly manager: DomainManager;
  readonly agent: GuestAgentOps;
  readonly hub: WatchHub;
  readonly migration: MigrationSource;
  readonly log: Logger;
  readonly versions: () => Promise<{ launcher: string; libvirt: string; qemu: string }>;
}

const EMPTY: cmd.Empty = {};

/**
 * The Cmd gRPC service on a unix socket only the launcher's user can reach. It listens on
 * `launcher-init-sock` and renames it to `launcher-sock` once the launcher is ready, which is
 * KubeVirt's readiness signal for the handler.
 */
export class CmdServer {
  readonly #server: grpc.Server;
  readonly #o: CmdServerOptions;
  #path: string;
  #closing: Promise<void> | undefined;

  private constructor(server: grpc.Server, o: CmdServerOptions, path: string) {
    this.#server = server;
    this.#o = o;
    this.#path = path;
  }

  static async listen(o: CmdServerOptions): Promise<CmdServer> {
    await mkdir(o.socketDir, { recursive: true, mode: 0o700 });
    await chmod(o.socketDir, 0o700);
    const path = join(o.socketDir, INIT_SOCKET);
    await rm(path, { force: true });
    await rm(join(o.socketDir, READY_SOCKET), { force: true });
    const server = new grpc.Server();
    server.addService(lenientService(cmd.CmdService), implementation(o));
    await new Promise<void>((resolve, reject) =>
      server.bindAsync(`unix:${path}`, grpc.ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve())),
    );
    await chmod(path, 0o600);
    return new CmdServer(server, o, path);
  }

  get socketPath(): string {
    return this.#path;
  }

  async markReady(): Promise<void> {
    const ready = join(this.#o.socketDir, READY_SOCKET);
    await rename(this.#path, ready);
    this.#path = ready;
  }

  /** Graceful for up to `graceMs`, then forceful; removes the socket. Idempotent. */
  close(graceMs = 1_000): Promise<void> {
    this.#closing ??= (async () => {
      this.#o.hub.close();
      await shutdownGrpcServer(this.#server, graceMs);
      await rm(this.#path, { force: true });
    })();
    return this.#closing;
  }
}

function implementation(o: CmdServerOptions): cmd.CmdServer {
  const { manager, agent, hub, migration, log } = o;
  // Each call is cut at the contract's bound for its method (or the client's deadline, if sooner).
  const unary = <Req, Res>(method: CmdUnaryMethod, run: UnaryMethodBody<Req, Res>) => unaryHandler(method, run, {
    maxMs: cmdDeadlineMs(method),
    toStatus: toGrpcStatus,
    expired: (ms) => new LauncherError('LAUNCHER_ERR_TIMEOUT', `deadline of ${ms} ms exceeded`),
    cancelled: () => new LauncherError('LAUNCHER_ERR_TIMEOUT', 'cancelled by the client'),
    onSettled: ({ path, err }) => {
      if (err !== undefined) log.warn({ err, call: path }, 'cmd call failed');
    },
    // Only with PODVIRT_TRACE_OPS=1 (the stage benchmark): each step of the answer's path.
    ...(OP_TRACE_ON ? { onTrace: (call: string, trace: OpTrace) => log.info({ call, steps: trace.steps }, 'call traced') } : {}),
  });
  const vmiCall = (method: CmdUnaryMethod, fn: (vmi: VmiRef, signal: AbortSignal, trace: OpTrace | undefined) => Promise<void>) =>
    unary<cmd.VmiRequest, cmd.Empty>(method, async (req, { signal, trace }) => {
      const vmi = vmiRefOf(req.vmiJson);
      trace?.mark('request parsed');
      await fn(vmi, signal, trace);
      return EMPTY;
    });
  return {
    info: unary('info', async (req: cmd.InfoRequest) => {
      const v = await o.versions();
      return {
        supportedVersions: [...CMD_VERSIONS],
        negotiatedVersion: highestCommonVersion(CMD_VERSIONS, req.clientVersions) ?? 0,
        launcherVersion: v.launcher, libvirtVersion: v.libvirt, qemuVersion: v.qemu,
      };
    }),
    sync: unary('sync', async (req: cmd.VmiRequest, { signal }) => ({ domain: await manager.sync(decodeVmiRequest(req.vmiJson), { signal }) })),
    pause: vmiCall('pause', (vmi, signal, trace) => manager.pause(vmi, { signal, trace })),
    unpause: vmiCall('unpause', (vmi, signal, trace) => manager.unpause(vmi, { signal, trace })),
    freeze: unary('freeze', async (req: cmd.FreezeRequest, { signal }) => {
      manager.checkIdentity(vmiRefOf(req.vmiJson));
      await agent.freeze(req.unfreezeTimeoutSeconds, { signal });
      return EMPTY;
    }),
    unfreeze: vmiCall('unfreeze', (vmi, signal) => {
      manager.checkIdentity(vmi);
      return agent.unfreeze({ signal });
    }),
    softReboot: vmiCall('softReboot', (vmi, signal) => manager.softReboot(vmi, { signal })),
    reset: vmiCall('reset', (vmi, signal) => manager.reset(vmi, { signal })),
    shutdown: vmiCall('shutdown', (vmi, signal) => manager.shutdown(vmi, { signal })),
    kill: vmiCall('kill', (vmi, signal) => manager.kill(vmi, { signal })),
    delete: vmiCall('delete', (vmi, signal) => manager.delete(vmi, { signal })),
    getDomain: unary('getDomain', () => {
      const domain = manager.tracker.snapshot();
      return domain === undefined ? {} : { domain };
    }),
    getDomainStats: unary('getDomainStats', (_req: cmd.Empty, { signal }) => agent.stats({ signal })),
    getGuestInfo: unary('getGuestInfo', (_req: cmd.Empty, { signal }) => agent.guestInfo({ signal })),
    getUsers: unary('getUsers', async (_req: cmd.Empty, { signal }) => ({ users: await agent.users({ signal }) })),
    getFilesystems: unary('getFilesystems', async (_req: cmd.Empty, { signal }) => ({ filesystems: await agent.filesystems({ signal }) })),
    guestPing: unary('guestPing', async (req: cmd.GuestPingRequest, { signal }) => {
      await agent.ping(req.timeoutSeconds, { signal });
      return EMPTY;
    }),
    ping: unary('ping', () => EMPTY),
    prepareMigrationTarget: unary('prepareMigrationTarget', async (req: cmd.VmiRequest, { signal }) =>
      ({ domainXml: await manager.prepareMigrationTarget(decodeVmiRequest(req.vmiJson), { signal }) })),
    migrate: unary('migrate', async (req: cmd.MigrateRequest) => {
      const vmi = decodeVmiRequest(req.vmiJson);
      manager.checkIdentity(vmi);
      await migration.start(migrationPlan(req, vmi));
      return EMPTY;
    }),
    cancelMigration: vmiCall('cancelMigration', (vmi) => {
      manager.checkIdentity(vmi);
      return migration.cancel();
    }),
    watchDomain: (call) => {
      const malformed = malformedReason(call.request);
      if (malformed !== undefined) {
        call.emit('error', { code: grpc.status.INVALID_ARGUMENT, details: malformed });
        return;
      }
      const remove = hub.subscribe({
        write: (ev) => call.write(ev),
        onDrain: (l) => call.on('drain', l),
        end: () => call.end(),
      });
      call.once('cancelled', remove);
      call.once('close', remove);
    },
  };
}
