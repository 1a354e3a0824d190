// One VMI's launcher as the handler sees it: a long-lived gRPC channel to its unix socket,
// kept only once Info names a Cmd version both sides speak.

import * as grpc from '@grpc/grpc-js';
import {
  CALL_DEADLINES, CMD_VERSIONS, cmd, cmdDeadlineMs, highestCommonVersion, promiseClient,
  type CallDeadlines, type CallObserver, type PromiseMethods,
} from '@podvirt/proto';
import { HandlerError } from '../handler-error.js';
import { fromServiceError } from './grpc-error.js';

export interface ConnectOptions {
  /** Each call's deadline is the Cmd contract's (`cmdDeadlineMs`); tests shorten some classes. */
  readonly timeouts?: Partial<CallDeadlines>;
  readonly signal?: AbortSignal;
  /** Sees every call's method, status and duration. */
  readonly observe?: CallObserver;
}

type CmdCalls = PromiseMethods<typeof cmd.CmdService>;

export interface Connected {
  readonly client: LauncherClient;
  /** The launcher's domain when it answered; undefined before its first Sync. */
  readonly domain: cmd.Domain | undefined;
}

export class LauncherClient {
  readonly socketPath: string;
  readonly version: number;
  readonly info: cmd.InfoResponse;
  readonly #client: cmd.CmdClient;
  readonly #calls: CmdCalls;
  #closed = false;

  private constructor(socketPath: string, client: cmd.CmdClient, calls: CmdCalls, info: cmd.InfoResponse, version: number) {
    this.socketPath = socketPath;
    this.#client = client;
    this.#calls = calls;
    this.info = info;
    this.version = version;
  }

  /**
   * Dials and negotiates, and reads the domain in the same round trip (Info and GetDomain only
   * read: an answer to Info is the launcher's sign of life, and a VMI's first Sync waits for
   * both). Closes the channel again when either fails or no version is shared.
   */
  static async connect(socketPath: string, options: ConnectOptions = {}): Promise<Connected> {
    const deadlines: CallDeadlines = { ...CALL_DEADLINES, ...options.timeouts };
    const client = new cmd.CmdClient(`unix:${socketPath}`, grpc.credentials.createInsecure());
    const calls = promiseClient(cmd.CmdService, client, {
      timeoutMs: (method) => cmdDeadlineMs(method, deadlines),
      toError: fromServiceError,
      ...(options.observe ? { observe: options.observe } : {}),
    });
    const first = { signal: options.signal };
    try {
      const [answered, read] = await Promise.allSettled([calls.info({ clientVersions: [...CMD_VERSIONS] }, first), calls.getDomain({}, first)]);
      if (answered.status === 'rejected') throw answered.reason;
      const info = answered.value;
      const version = highestCommonVersion(CMD_VERSIONS, info.supportedVersions);
      if (version === undefined) {
        throw new HandlerError(
          'HANDLER_ERR_LAUNCHER_INCOMPATIBLE',
          `launcher speaks Cmd versions [${info.supportedVersions.join(', ')}], this handler [${CMD_VERSIONS.join(', ')}]`,
        );
      }
      // Judged after the version: a launcher that speaks no common version is named as such, not
      // by whatever its GetDomain answered.
      if (read.status === 'rejected') throw read.reason;
      return { client: new LauncherClient(socketPath, client, calls, info, version), domain: read.value.domain };
    } catch (err) {
      client.close();
      throw err;
    }
  }

  ping(signal?: AbortSignal): Promise<void> {
    return this.#calls.ping({}, { signal }).then(() => undefined);
  }

  async getDomain(signal?: AbortSignal): Promise<cmd.Domain | undefined> {
    const res = await this.#calls.getDomain({}, { signal });
    return res.domain;
  }

  /** Returns the domain as the launcher left it after the sync. */
  async sync(vmiJson: Buffer, signal?: AbortSignal): Promise<cmd.Domain | undefined> {
    const res = await this.#calls.sync({ vmiJson }, { signal });
    return res.domain;
  }

  shutdown(vmiJson: Buffer, signal?: AbortSignal): Promise<void> {
    return this.#calls.shutdown({ vmiJson }, { signal }).then(() => undefined);
  }

  kill(vmiJson: Buffer, signal?: AbortSignal): Promise<void> {
    return this.#calls.kill({ vmiJson }, { signal }).then(() => undefined);
  }

  delete(vmiJson: Buffer, signal?: AbortSignal): Promise<void> {
    return this.#calls.delete({ vmiJson }, { signal }).then(() => undefined);
  }

  pause(vmiJson: Buffer, signal?: AbortSignal): Promise<void> {
    return this.#calls.pause({ vmiJson }, { signal }).then(() => undefined);
  }

  unpause(vmiJson: Buffer, signal?: AbortSignal): Promise<void> {
    return this.#calls.unpause({ vmiJson }, { signal }).then(() => undefined);
  }

  async freeze(vmiJson: Buffer, unfreezeTimeoutSeconds: number, signal?: AbortSignal): Promise<void> {
    await this.#calls.freeze({ vmiJson, unfreezeTimeoutSeconds }, { signal });
  }

  unfreeze(vmiJson: Buffer, signal?: AbortSignal): Promise<void> {
    return this.#calls.unfreeze({ vmiJson }, { signal }).then(() => undefined);
  }

  softReboot(vmiJson: Buffer, signal?: AbortSignal): Promise<void> {
    return this.#calls.softReboot({ vmiJson }, { signal }).then(() => undefined);
  }

  reset(vmiJson: Buffer, signal?: AbortSignal): Promise<void> {
    return this.#calls.reset({ vmiJson }, { signal }).then(() => undefined);
  }

  /** Migration target: files made, no domain; answers the XML the target would run. */
  async prepareMigrationTarget(vmiJson: Buffer, signal?: AbortSignal): Promise<string> {
    const res = await this.#calls.prepareMigrationTarget({ vmiJson }, { signal });
    return res.domainXml;
  }

  /** Migration source: returns once the migration runs; its progress comes on WatchDomain. */
  migrate(request: cmd.MigrateRequest, signal?: AbortSignal): Promise<void> {
    return this.#calls.migrate(request, { signal }).then(() => undefined);
  }

  cancelMigration(vmiJson: Buffer, signal?: AbortSignal): Promise<void> {
    return this.#calls.cancelMigration({ vmiJson }, { signal }).then(() => undefined);
  }

  getGuestInfo(signal?: AbortSignal): Promise<cmd.GuestInfo> {
    return this.#calls.getGuestInfo({}, { signal });
  }

  getUsers(signal?: AbortSignal): Promise<cmd.GuestUserList> {
    return this.#calls.getUsers({}, { signal });
  }

  getFilesystems(signal?: AbortSignal): Promise<cmd.GuestFilesystemList> {
    return this.#calls.getFilesystems({}, { signal });
  }

  /** The server stream of domain snapshots and notices; the caller cancels it. */
  watchDomain(): grpc.ClientReadableStream<cmd.WatchDomainEvent> {
    return this.#client.watchDomain({});
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Closes the channel; calls still running fail with CANCELLED. Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#client.close();
  }
}
