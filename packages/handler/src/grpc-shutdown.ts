import type * as grpc from '@grpc/grpc-js';

/**
 * Lets a gRPC server's running calls finish, and cuts them at `timeoutMs`. The bound's timer is
 * cleared when the server stops in time, so nothing outlives the shutdown.
 */
export function shutdownGrpcServer(server: grpc.Server, timeoutMs: number): Promise<void> {
  return new Promise<void>((resolve) => {
    const force = setTimeout(() => {
      server.forceShutdown();
      resolve();
    }, timeoutMs);
    force.unref();
    server.tryShutdown(() => {
      clearTimeout(force);
      resolve();
    });
  });
}
