import type { Server } from '@grpc/grpc-js';

/**
 * The one way a podvirt gRPC server stops: running calls may finish, and are cut at
 * `timeoutMs`. The bound's timer is cleared when the server stops in time (and unref'd, so it
 * never keeps a process alive by itself): nothing outlives the shutdown.
 */
export function shutdownGrpcServer(server: Server, timeoutMs: number): Promise<void> {
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
