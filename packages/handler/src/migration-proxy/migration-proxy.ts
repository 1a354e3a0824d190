// The migration proxy between two nodes' launcher pods (KubeVirt's virt-handler migration
// proxy): each libvirt daemon and qemu stays private to its pod; the handlers carry their
// streams between nodes over mutual TLS with the certificates the handlers share.
//
//   source pod                 source handler            target handler            target pod
//   unix socket  ── accept ──▶ TLS client ══ network ══▶ TLS listener ── dial ──▶  unix socket
//
// One stream per pod-side endpoint: the libvirt connection (0), qemu's memory stream (49152),
// the disks' NBD stream (49153). The target opens one TLS listener per stream on an ephemeral
// port of `address` and reports node port → stream; the source listens on a unix socket per
// stream in its pod and opens a TLS connection to that stream's node port for each connection.

import { createServer as createUnixServer, type Server, type Socket } from 'node:net';
import { connect as connectTls, createServer as createTlsServer, type TLSSocket, type TlsOptions } from 'node:tls';
import type { Logger } from 'pino';
import { connectGuestSocket } from '../guest-stream/guest-socket.js';
import { HandlerError } from '../handler-error.js';
import { type MigrationTls } from './migration-tls.js';
import { PipedConnections } from './piped-connections.js';
import { listenUnix, removeSocketFile } from './unix-listener.js';

export { loadMigrationTls, type MigrationTls } from './migration-tls.js';

export interface TargetProxy {
  /** The listening node port → the pod-side stream it carries. */
  readonly ports: ReadonlyMap<number, number>;
  /** Stops listening and ends every piped connection; idempotent. */
  close(): Promise<void>;
}

export interface SourceProxy {
  /** Stops listening, ends every piped connection and removes the unix sockets; idempotent. */
  close(): Promise<void>;
}

export interface TargetProxyOptions {
  /** The address the listeners bind (the one advertised as targetNodeAddress). */
  readonly address: string;
  readonly tls: MigrationTls;
  /** Pod-side stream (0 | 49152 | 49153) → the unix socket in the target pod (a host path). */
  readonly streams: ReadonlyMap<number, string>;
  readonly log: Logger;
}

export interface SourceProxyOptions {
  /** The target node's address (targetNodeAddress). */
  readonly address: string;
  readonly tls: MigrationTls;
  /** The unix socket to make in the source pod (a host path) → the target's node port. */
  readonly streams: ReadonlyMap<string, number>;
  readonly log: Logger;
}

// Both sides present a certificate from the shared CA and verify the peer's. The peer's name is
// not checked: the certificates name nodes, not the addresses migrations use, and any holder of
// a certificate from this CA is a podvirt handler. TLS 1.3 only: both ends are ours.
function tlsOptions(tls: MigrationTls): Pick<TlsOptions, 'ca' | 'cert' | 'key' | 'minVersion'> {
  return { ca: tls.ca, cert: tls.cert, key: tls.key, minVersion: 'TLSv1.3' };
}

export async function listenTarget(o: TargetProxyOptions): Promise<TargetProxy> {
  const piped = new PipedConnections();
  const abort = new AbortController();
  const servers: Server[] = [];
  const ports = new Map<number, number>();
  const close = once(async () => {
    abort.abort();
    piped.destroyAll();
    await Promise.all(servers.map(closeServer));
    o.log.info({ ports: [...ports.keys()] }, 'migration target proxy closed');
  });
  try {
    for (const [stream, unixPath] of o.streams) {
      const server = createTlsServer({ ...tlsOptions(o.tls), requestCert: true, rejectUnauthorized: true }, (tlsSocket) => {
        piped.track(tlsSocket);
        void dialPod(tlsSocket, unixPath, stream);
      });
      // Tracked from the first byte: a peer stalled in its handshake must not hold close() up.
      server.on('connection', (raw: Socket) => piped.track(raw));
      server.on('tlsClientError', (err, socket) => {
        o.log.warn({ err, stream, remote: socket.remoteAddress }, 'migration peer refused: TLS handshake failed');
      });
      servers.push(server);
      ports.set(await listenTcp(server, o.address), stream);
    }
  } catch (err) {
    await close();
    throw err;
  }
  o.log.info({ address: o.address, ports: Object.fromEntries(ports) }, 'migration target proxy listening');
  return { ports, close };

  async function dialPod(tlsSocket: TLSSocket, unixPath: string, stream: number): Promise<void> {
    let unix: Socket;
    try {
      unix = await connectGuestSocket(unixPath, abort.signal);
    } catch (err) {
      if (!abort.signal.aborted) o.log.warn({ err, stream, path: unixPath }, 'migration stream refused: the pod side is not listening');
      tlsSocket.destroy();
      return;
    }
    if (tlsSocket.destroyed) {
      unix.destroy();
      return;
    }
    piped.track(unix);
    o.log.debug({ stream, remote: tlsSocket.remoteAddress }, 'migration stream connected');
    piped.pipe(tlsSocket, unix, o.log.child({ stream }));
  }
}

export async function listenSource(o: SourceProxyOptions): Promise<SourceProxy> {
  const piped = new PipedConnections();
  const servers: Server[] = [];
  const made: string[] = [];
  const close = once(async () => {
    piped.destroyAll();
    await Promise.all(servers.map(closeServer));
    await Promise.all(made.map(removeSocketFile));
    o.log.info({ target: o.address }, 'migration source proxy closed');
  });
  try {
    for (const [unixPath, port] of o.streams) {
      const server = createUnixServer((unix) => {
        piped.track(unix);
        dialTarget(unix, port);
      });
      servers.push(server);
      await listenUnix(server, unixPath);
      made.push(unixPath);
    }
  } catch (err) {
    await close();
    throw err;
  }
  o.log.info({ target: o.address, streams: Object.fromEntries(o.streams) }, 'migration source proxy listening');
  return { close };

  function dialTarget(unix: Socket, port: number): void {
    const tlsSocket = connectTls({ ...tlsOptions(o.tls), host: o.address, port, checkServerIdentity: () => undefined });
    piped.track(tlsSocket);
    const onError = (err: Error): void => {
      o.log.warn({ err, target: o.address, port }, 'migration stream refused: cannot reach the target over TLS');
      unix.destroy();
    };
    tlsSocket.once('error', onError);
    tlsSocket.once('secureConnect', () => {
      tlsSocket.off('error', onError);
      o.log.debug({ target: o.address, port }, 'migration stream connected');
      piped.pipe(unix, tlsSocket, o.log.child({ port }));
    });
  }
}

async function listenTcp(server: Server, host: string): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const onError = (err: Error): void => reject(new HandlerError('HANDLER_ERR_MIGRATION_PROXY', `cannot listen on ${host}: ${err.message}`, { cause: err }));
    server.once('error', onError);
    server.listen({ host, port: 0 }, () => {
      server.off('error', onError);
      const address = server.address();
      resolve(typeof address === 'object' && address !== null ? address.port : 0);
    });
  });
}

function closeServer(server: Server): Promise<void> {
  return new Promise<void>((resolve) => {
    if (!server.listening) {
      resolve();
      return;
    }
    server.close(() => resolve());
  });
}

function once(f: () => Promise<void>): () => Promise<void> {
  let p: Promise<void> | undefined;
  return () => (p ??= f());
}
