// One VMI's launcher as the handler sees it: a long-lived gRPC channel to its unix socket,
// opened only after Ping answers and Info names a Cmd version both sides speak.

import * as grpc from '@grpc/grpc-js';
import { CMD_VERSIONS, cmd, highestCommonVersion } from '@podvirt/proto';
import { HandlerError } from '../handler-error.js';
import { unaryCall, type UnaryMethod } from './unary-call.js';

export interface LauncherTimeouts {
  /** Ping, Info and GetDomain: KubeVirt's short client timeout is 5 s. */
  readonly shortMs: number;
  /** Sync, Shutdown, Kill, Delete: KubeVirt's long client timeout is 20 s. */
  readonly longMs: number;
}

export const DEFAULT_LAUNCHER_TIMEOUTS: LauncherTimeouts = { shortMs: 5_000, longMs: 20_000 };

export interface ConnectOptions {
  readonly timeouts?: LauncherTimeouts;
  readonly signal?: AbortSignal;
}

type VmiCall = 'shutdown' | 'kill' | 'delete';

export class LauncherClient {
  readonly socketPath: string;
  readonly version: number;
  readonly info: cmd.InfoResponse;
  readonly #client: cmd.CmdClient;
  readonly #timeouts: LauncherTimeouts;
  #closed = false;

  private constructor(socketPath: string, client: cmd.CmdClient, info: cmd.InfoResponse, version: number, timeouts: LauncherTimeouts) {
    this.socketPath = socketPath;
    this.#client = client;
    this.info = info;
    this.version = version;
    this.#timeouts = timeouts;
  }

  /** Dials, pings and negotiates; closes the channel again when any step fails. */
  static async connect(socketPath: string, options: ConnectOptions = {}): Promise<LauncherClient> {
    const timeouts = options.timeouts ?? DEFAULT_LAUNCHER_TIMEOUTS;
    const client = new cmd.CmdClient(`unix:${socketPath}`, grpc.credentials.createInsecure());
    const limits = { timeoutMs: timeouts.shortMs, signal: options.signal };
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
      return new LauncherClient(socketPath, client, info, version, timeouts);
    } catch (err) {
      client.close();
      throw err;
    }
  }

  ping(signal?: AbortSignal): Promise<void> {
    return unaryCall('Ping', bind<cmd.Empty, cmd.Empty>(this.#client, this.#client.ping), {}, { timeoutMs: this.#timeouts.shortMs, signal }).then(() => undefined);
  }

  async getDomain(signal?: AbortSignal): Promise<cmd.Domain | undefined> {
    const res = await unaryCall('GetDomain', bind<cmd.Empty, cmd.GetDomainResponse>(this.#client, this.#client.getDomain), {}, { timeoutMs: this.#timeouts.shortMs, signal });
    return res.domain;
  }

  /** Returns the domain as the launcher left it after the sync. */
  async sync(vmiJson: Buffer, signal?: AbortSignal): Promise<cmd.Domain | undefined> {
    const res = await unaryCall('Sync', bind<cmd.VmiRequest, cmd.SyncResponse>(this.#client, this.#client.sync), { vmiJson }, { timeoutMs: this.#timeouts.longMs, signal });
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
    await unaryCall(name, bind(this.#client, fn), { vmiJson }, { timeoutMs: this.#timeouts.longMs, signal });
  }
}

// The generated client's methods are overloaded; binding through the 4-argument form keeps
// `this` and gives unaryCall one signature to work with.
function bind<Req, Res>(client: cmd.CmdClient, method: unknown): UnaryMethod<Req, Res> {
  const fn = method as UnaryMethod<Req, Res>;
  return (req, metadata, options, callback) => fn.call(client, req, metadata, options, callback);
}
