// One VMI's launcher as the handler sees it: a long-lived gRPC channel to its unix socket,
// opened only after Ping answers and Info names a Cmd version both sides speak.

import * as grpc from '@grpc/grpc-js';
import { CMD_VERSIONS, cmd, highestCommonVersion } from '@podvirt/proto';
import { HandlerError } from '../handler-error.js';
import { unaryCall, type CallObserver, type UnaryMethod } from './unary-call.js';

export interface LauncherTimeouts {
  /** Ping, Info and GetDomain: KubeVirt's short client timeout is 5 s. */
  readonly shortMs: number;
  /** Sync, Shutdown, Kill, Delete: KubeVirt's long client timeout is 20 s. */
  readonly longMs: number;
}

export const DEFAULT_LAUNCHER_TIMEOUTS: LauncherTimeouts = { shortMs: 5_000, longMs: 20_000 };

// Freezing waits for the agent to sync and freeze every filesystem; KubeVirt allows a minute.
const FREEZE_TIMEOUT_MS = 60_000;

export interface ConnectOptions {
  readonly timeouts?: LauncherTimeouts;
  readonly signal?: AbortSignal;
  /** Sees every call's method, status and duration. */
  readonly observe?: CallObserver;
}

type VmiCall = 'shutdown' | 'kill' | 'delete' | 'pause' | 'unpause' | 'unfreeze' | 'softReboot' | 'reset';

export class LauncherClient {
  readonly socketPath: string;
  readonly version: number;
  readonly info: cmd.InfoResponse;
  readonly #client: cmd.CmdClient;
  readonly #timeouts: LauncherTimeouts;
  readonly #observe: CallObserver | undefined;
  #closed = false;

  private constructor(socketPath: string, client: cmd.CmdClient, info: cmd.InfoResponse, version: number, options: ConnectOptions) {
    this.socketPath = socketPath;
    this.#client = client;
    this.info = info;
    this.version = version;
    this.#timeouts = options.timeouts ?? DEFAULT_LAUNCHER_TIMEOUTS;
    this.#observe = options.observe;
  }

  /** Dials, pings and negotiates; closes the channel again when any step fails. */
  static async connect(socketPath: string, options: ConnectOptions = {}): Promise<LauncherClient> {
    const timeouts = options.timeouts ?? DEFAULT_LAUNCHER_TIMEOUTS;
    const client = new cmd.CmdClient(`unix:${socketPath}`, grpc.credentials.createInsecure());
    const limits = { timeoutMs: timeouts.shortMs, signal: options.signal, observe: options.observe };
    try {
      await unaryCall('Ping', bind<cmd.Empty, cmd.Empty>(client, client.ping), {}, limits);
      const info = await unaryCall('Info', bind<cmd.InfoRequest, cmd.InfoResponse>(client, client.info), { clientVersions: [...CMD_VERSIONS] }, limits);
      const version = highestCommonVersion(CMD_VERSIONS, info.supportedVersions);
      if (version === undefined) {
        throw new HandlerError(
          'HANDLER_ERR_LAUNCHER_INCOMPATIBLE',
          `launcher speaks Cmd versions [${info.supportedVersions.join(', ')}], this handler [${CMD_VERSIONS.join(', ')}]`,
        );
      }
      return new LauncherClient(socketPath, client, info, version, options);
    } catch (err) {
      client.close();
      throw err;
    }
  }

  ping(signal?: AbortSignal): Promise<void> {
    return unaryCall('Ping', bind<cmd.Empty, cmd.Empty>(this.#client, this.#client.ping), {}, this.#short(signal)).then(() => undefined);
  }

  async getDomain(signal?: AbortSignal): Promise<cmd.Domain | undefined> {
    const res = await unaryCall('GetDomain', bind<cmd.Empty, cmd.GetDomainResponse>(this.#client, this.#client.getDomain), {}, this.#short(signal));
    return res.domain;
  }

  /** Returns the domain as the launcher left it after the sync. */
  async sync(vmiJson: Buffer, signal?: AbortSignal): Promise<cmd.Domain | undefined> {
    const res = await unaryCall('Sync', bind<cmd.VmiRequest, cmd.SyncResponse>(this.#client, this.#client.sync), { vmiJson }, this.#long(signal));
    return res.domain;
  }

  shutdown(vmiJson: Buffer, signal?: AbortSignal): Promise<void> {
    return this.#vmiCall('shutdown', 'Shutdown', vmiJson, signal);
  }

  kill(vmiJson: Buffer, signal?: AbortSignal): Promise<void> {
    return this.#vmiCall('kill', 'Kill', vmiJson, signal);
  }

  delete(vmiJson: Buffer, signal?: AbortSignal): Promise<void> {
    return this.#vmiCall('delete', 'Delete', vmiJson, signal);
  }

  pause(vmiJson: Buffer, signal?: AbortSignal): Promise<void> {
    return this.#vmiCall('pause', 'Pause', vmiJson, signal);
  }

  unpause(vmiJson: Buffer, signal?: AbortSignal): Promise<void> {
    return this.#vmiCall('unpause', 'Unpause', vmiJson, signal);
  }

  async freeze(vmiJson: Buffer, unfreezeTimeoutSeconds: number, signal?: AbortSignal): Promise<void> {
    const method = bind<cmd.FreezeRequest, cmd.Empty>(this.#client, this.#client.freeze);
    await unaryCall('Freeze', method, { vmiJson, unfreezeTimeoutSeconds }, { timeoutMs: FREEZE_TIMEOUT_MS, signal, observe: this.#observe });
  }

  unfreeze(vmiJson: Buffer, signal?: AbortSignal): Promise<void> {
    return this.#vmiCall('unfreeze', 'Unfreeze', vmiJson, signal);
  }

  softReboot(vmiJson: Buffer, signal?: AbortSignal): Promise<void> {
    return this.#vmiCall('softReboot', 'SoftReboot', vmiJson, signal);
  }

  reset(vmiJson: Buffer, signal?: AbortSignal): Promise<void> {
    return this.#vmiCall('reset', 'Reset', vmiJson, signal);
  }

  getGuestInfo(signal?: AbortSignal): Promise<cmd.GuestInfo> {
    return unaryCall('GetGuestInfo', bind<cmd.Empty, cmd.GuestInfo>(this.#client, this.#client.getGuestInfo), {}, this.#short(signal));
  }

  getUsers(signal?: AbortSignal): Promise<cmd.GuestUserList> {
    return unaryCall('GetUsers', bind<cmd.Empty, cmd.GuestUserList>(this.#client, this.#client.getUsers), {}, this.#short(signal));
  }

  getFilesystems(signal?: AbortSignal): Promise<cmd.GuestFilesystemList> {
    return unaryCall('GetFilesystems', bind<cmd.Empty, cmd.GuestFilesystemList>(this.#client, this.#client.getFilesystems), {}, this.#short(signal));
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

  async #vmiCall(method: VmiCall, name: string, vmiJson: Buffer, signal: AbortSignal | undefined): Promise<void> {
    const fn = this.#client[method] as UnaryMethod<cmd.VmiRequest, cmd.Empty>;
    await unaryCall(name, bind(this.#client, fn), { vmiJson }, this.#long(signal));
  }

  #short(signal: AbortSignal | undefined) {
    return { timeoutMs: this.#timeouts.shortMs, signal, observe: this.#observe };
  }

  #long(signal: AbortSignal | undefined) {
    return { timeoutMs: this.#timeouts.longMs, signal, observe: this.#observe };
  }
}

// The generated client's methods are overloaded; binding through the 4-argument form keeps
// `this` and gives unaryCall one signature to work with.
function bind<Req, Res>(client: cmd.CmdClient, method: unknown): UnaryMethod<Req, Res> {
  const fn = method as UnaryMethod<Req, Res>;
  return (req, metadata, options, callback) => fn.call(client, req, metadata, options, callback);
}
