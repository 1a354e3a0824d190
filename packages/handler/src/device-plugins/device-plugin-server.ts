// One plugin's gRPC server on its unix socket in the device-plugins directory. A stale socket
// (a previous handler's) is replaced; close() ends the ListAndWatch streams with an empty list,
// lets calls finish within a bound and removes the socket.

import { rm } from 'node:fs/promises';
import * as grpc from '@grpc/grpc-js';
import { deviceplugin, shutdownGrpcServer } from '@podvirt/proto';
import { HandlerError } from '../handler-error.js';
import type { DevicePluginService } from './device-plugin-service.js';

// A ListAndWatch ends at once after its empty list; the bound only covers a stuck Allocate.
const CLOSE_TIMEOUT_MS = 1_000;

export class DevicePluginServer {
  readonly socketPath: string;
  readonly #server: grpc.Server;
  readonly #service: DevicePluginService;
  #closing: Promise<void> | undefined;

  private constructor(server: grpc.Server, socketPath: string, service: DevicePluginService) {
    this.#server = server;
    this.socketPath = socketPath;
    this.#service = service;
  }

  static async listen(socketPath: string, service: DevicePluginService): Promise<DevicePluginServer> {
    await rm(socketPath, { force: true });
    const server = new grpc.Server();
    server.addService(deviceplugin.DevicePluginService, service.implementation());
    try {
      await new Promise<void>((resolve, reject) =>
        server.bindAsync(`unix:${socketPath}`, grpc.ServerCredentials.createInsecure(), (err) => (err === null ? resolve() : reject(err))),
      );
    } catch (err) {
      await shutdownGrpcServer(server, 0);
      throw new HandlerError('HANDLER_ERR_DEVICE_PLUGIN', `device plugin ${service.device.name} cannot listen on ${socketPath}: ${(err as Error).message}`, { cause: err });
    }
    return new DevicePluginServer(server, socketPath, service);
  }

  /** Idempotent. `keepSocket`: the socket is already gone or belongs to a newer server. */
  close(options: { keepSocket?: boolean } = {}): Promise<void> {
    this.#closing ??= (async () => {
      this.#service.endStreams();
      await shutdownGrpcServer(this.#server, CLOSE_TIMEOUT_MS);
      if (options.keepSocket !== true) await rm(this.socketPath, { force: true });
    })();
    return this.#closing;
  }
}
