// The node API's listeners: a unix socket on the host that only root reaches (directory 0700,
// socket 0600 — the permission is the authentication), and optionally a TLS port that demands
// a client certificate signed by the given CA, with the clientAuth usage and an allowed
// identity (client-identity.ts), checked on every call. close() is graceful within a bound,
// then forced.

import { chmod, mkdir, readFile, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { lenientService, node, shutdownGrpcServer } from '@podvirt/proto';
import { HandlerError } from '../handler-error.js';
import { clientRefusal, type AllowedClients } from './client-identity.js';

export interface NodeApiTls {
  readonly host: string;
  readonly port: number;
  readonly certFile: string;
  readonly keyFile: string;
  readonly clientCaFile: string;
  /** Identities allowed to call over TLS (`CN=…`, `DNS:…`, `URI:…` …); see client-identity.ts. */
  readonly allowedClients: AllowedClients;
}

export interface NodeApiServerOptions {
  readonly socketPath: string;
  readonly service: node.NodeServer;
  readonly tls?: NodeApiTls | undefined;
  readonly closeTimeoutMs?: number;
  /** Told of each refused TLS caller. */
  readonly onRefused?: (reason: string) => void;
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
      if (options.tls !== undefined) tlsPort = await bind(server, `${hostPort(options.tls.host, options.tls.port)}`, await tlsCredentials(options.tls));
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

async function tlsCredentials(tls: NodeApiTls): Promise<grpc.ServerCredentials> {
  const read = async (flag: string, path: string): Promise<Buffer> => {
    try {
      return await readFile(path);
    } catch (err) {
      throw new HandlerError('HANDLER_ERR_LISTEN', `cannot read ${flag} ${path}: ${(err as Error).message}`, { cause: err });
    }
  };
  const [ca, cert, key] = await Promise.all([read('--tls-client-ca', tls.clientCaFile), read('--tls-cert', tls.certFile), read('--tls-key', tls.keyFile)]);
  // true: a client without a certificate signed by `ca` is refused during the handshake.
  return grpc.ServerCredentials.createSsl(ca, [{ private_key: key, cert_chain: cert }], true);
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
