// The node API's listeners: a unix socket on the host that only root reaches (directory 0700,
// socket 0600 — the permission is the authentication), and optionally a TLS port that demands
// a client certificate signed by the given CA, with the clientAuth usage and an allowed
// identity (client-identity.ts), checked on every call. The TLS files are re-read while it runs
// (reloading-tls.ts), so a renewed certificate or CA needs no restart. close() is graceful within
// a bound, then forced.

import { chmod, mkdir, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { lenientService, node, shutdownGrpcServer } from '@podvirt/proto';
import { HandlerError } from '../handler-error.js';
import { clientRefusal, type AllowedClients } from './client-identity.js';
import { DEFAULT_TLS_RELOAD_MS, ReloadingTlsFiles } from './reloading-tls.js';

export interface NodeApiTls {
  readonly host: string;
  readonly port: number;
  readonly certFile: string;
  readonly keyFile: string;
  readonly clientCaFile: string;
  /** Identities allowed to call over TLS (`CN=…`, `DNS:…`, `URI:…` …); see client-identity.ts. */
  readonly allowedClients: AllowedClients;
  /** How often the files are re-read (DEFAULT_TLS_RELOAD_MS). */
  readonly reloadMs?: number;
}

export interface NodeApiServerOptions {
  readonly socketPath: string;
  readonly service: node.NodeServer;
  readonly tls?: NodeApiTls | undefined;
  readonly closeTimeoutMs?: number;
  /** Told of each refused TLS caller. */
  readonly onRefused?: (reason: string) => void;
  /** Told of each change of the TLS files: taken, or kept out (why). */
  readonly onTlsReload?: (event: { readonly reloaded: boolean; readonly reason?: string }) => void;
}

export class NodeApiServer {
  readonly socketPath: string;
  /** The TLS port actually bound (0 when there is none). */
  readonly tlsPort: number;
  readonly #server: grpc.Server;
  readonly #closeTimeoutMs: number;
  #closing: Promise<void> | undefined;

  private constructor(server: grpc.Server, socketPath: string, tlsPort: number, closeTimeoutMs: number) {
    this.#server = server;
    this.socketPath = socketPath;
    this.tlsPort = tlsPort;
    this.#closeTimeoutMs = closeTimeoutMs;
  }

  static async listen(options: NodeApiServerOptions): Promise<NodeApiServer> {
    const { socketPath } = options;
    const dir = dirname(socketPath);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    await chmod(dir, 0o700);
    // A socket left by a killed handler would make the bind fail with EADDRINUSE.
    await rm(socketPath, { force: true });
    const allowed = options.tls?.allowedClients;
    const server = new grpc.Server(allowed === undefined ? {} : { interceptors: [authorize(allowed, options.onRefused)] });
    // A body that does not decode is INVALID_ARGUMENT naming the method, not grpc-js's INTERNAL
    // (the service's unary methods are @podvirt/proto's unaryHandler, which answers so).
    server.addService(lenientService(node.NodeService), options.service);
    let tlsPort = 0;
    try {
      await bind(server, `unix:${socketPath}`, grpc.ServerCredentials.createInsecure());
      await chmod(socketPath, 0o600);
      if (options.tls !== undefined) tlsPort = await bind(server, `${hostPort(options.tls.host, options.tls.port)}`, await tlsCredentials(options.tls, options.onTlsReload));
    } catch (err) {
      await shutdownGrpcServer(server, 0);
      await rm(socketPath, { force: true });
      throw err;
    }
    return new NodeApiServer(server, socketPath, tlsPort, options.closeTimeoutMs ?? 2_000);
  }

  /** Lets running calls finish within the bound, then cuts them; removes the socket. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      await shutdownGrpcServer(this.#server, this.#closeTimeoutMs);
      await rm(this.socketPath, { force: true });
    })();
    return this.#closing;
  }
}

/**
 * Refuses a TLS call whose certificate is not an allowed client's, before the method runs.
 * Calls over the unix socket carry no certificate and are left alone: its 0600 mode is theirs.
 */
function authorize(allowed: AllowedClients, onRefused?: (reason: string) => void): grpc.ServerInterceptor {
  return (_method, call) =>
    new grpc.ServerInterceptingCall(call, {
      start: (next) => {
        const auth = call.getAuthContext();
        const refusal = auth.transportSecurityType === 'ssl' ? clientRefusal(auth.sslPeerCertificate, allowed) : undefined;
        if (refusal === undefined) {
          next();
          return;
        }
        onRefused?.(refusal);
        call.sendStatus({ code: grpc.status.PERMISSION_DENIED, details: refusal });
      },
    });
}

async function tlsCredentials(tls: NodeApiTls, onReload?: (event: { readonly reloaded: boolean; readonly reason?: string }) => void): Promise<grpc.ServerCredentials> {
  const files = new ReloadingTlsFiles(tls, tls.reloadMs ?? DEFAULT_TLS_RELOAD_MS, (event) => onReload?.(event));
  await files.load();
  // true: a client without a certificate signed by the CA in force is refused during the handshake.
  // One provider gives both the CA and the identity (grpc-js reads them from the same object).
  return grpc.experimental.createCertificateProviderServerCredentials(files, files, true);
}

function hostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

function bind(server: grpc.Server, address: string, credentials: grpc.ServerCredentials): Promise<number> {
  return new Promise<number>((resolve, reject) =>
    server.bindAsync(address, credentials, (err, port) =>
      err === null ? resolve(port) : reject(new HandlerError('HANDLER_ERR_LISTEN', `node API cannot listen on ${address}: ${err.message}`, { cause: err })),
    ),
  );
}
