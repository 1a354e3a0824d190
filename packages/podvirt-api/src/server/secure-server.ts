// podvirt-api's HTTPS port: what kube-apiserver calls (the admission webhooks now, the
// aggregated subresource API next). Its certificate is swapped in place when renewed
// (setSecureContext): connections already open keep theirs, new ones get the new one.

import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { PodvirtApiError } from '../api-error.js';
import type { PemPair } from '../tls/certificate-authority.js';

export type RequestHandler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;
/** An `Upgrade:` request; the socket is the handler's from then on (the server's close does not end it). */
export type UpgradeHandler = (req: IncomingMessage, socket: Duplex, head: Buffer) => Promise<void>;

export interface SecureServerOptions {
  readonly host: string;
  readonly port: number;
  readonly serving: PemPair;
  readonly handler: RequestHandler;
  readonly upgrade?: UpgradeHandler;
  /** A request whose headers and body take longer is cut (kube-apiserver's webhook calls last at most 30 s). */
  readonly requestTimeoutMs?: number;
  readonly closeTimeoutMs?: number;
}

export class SecureServer {
  readonly #server: Server;
  readonly #closeTimeoutMs: number;
  #closing: Promise<void> | undefined;

  private constructor(server: Server, closeTimeoutMs: number) {
    this.#server = server;
    this.#closeTimeoutMs = closeTimeoutMs;
  }

  static async listen(o: SecureServerOptions): Promise<SecureServer> {
    // A client certificate is asked for, never required: the aggregation layer presents its
    // front-proxy certificate, which the subresource API checks itself against the requestheader
    // CA it reads from the cluster; webhook calls come without one.
    const tls = { cert: o.serving.cert, key: o.serving.key, minVersion: 'TLSv1.2', requestCert: true, rejectUnauthorized: false } as const;
    const server = createServer({ ...tls, requestTimeout: o.requestTimeoutMs ?? 30_000 }, (req, res) => {
      o.handler(req, res).catch((err: unknown) => {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(`${err instanceof Error ? err.message : String(err)}\n`);
      });
    });
    const upgrade = o.upgrade;
    if (upgrade !== undefined) {
      server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
        upgrade(req, socket, head).catch(() => socket.destroy());
      });
    }
    server.keepAliveTimeout = 30_000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', (err) => reject(new PodvirtApiError('PODVIRT_API_ERR_LISTEN', `cannot listen on ${o.host}:${o.port}: ${err.message}`, { cause: err })));
      server.listen(o.port, o.host, () => resolve());
    });
    return new SecureServer(server, o.closeTimeoutMs ?? 5_000);
  }

  get port(): number {
    return (this.#server.address() as AddressInfo).port;
  }

  /** New connections get `serving`. */
  setCertificate(serving: PemPair): void {
    this.#server.setSecureContext({ cert: serving.cert, key: serving.key, minVersion: 'TLSv1.2' });
  }

  /** Stops accepting, lets requests in flight finish, forces the rest after the bound. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= new Promise<void>((resolve) => {
      const force = setTimeout(() => this.#server.closeAllConnections(), this.#closeTimeoutMs);
      this.#server.close(() => {
        clearTimeout(force);
        resolve();
      });
      this.#server.closeIdleConnections();
    });
    return this.#closing;
  }
}
