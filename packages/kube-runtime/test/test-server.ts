// A real HTTP(S) server on port 0 for the client tests: requests are recorded, responses come
// from the test's handler, and open connections are counted so a test can see a socket go away.

import { once } from 'node:events';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer, type ServerOptions } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';

export interface RecordedRequest {
  readonly method: string;
  readonly url: URL;
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
}

export type Handler = (req: RecordedRequest, res: ServerResponse) => void | Promise<void>;

export class TestServer {
  readonly requests: RecordedRequest[] = [];
  readonly #server: Server;
  readonly #protocol: string;
  readonly #sockets = new Set<Socket>();
  #handler: Handler = (_req, res) => void res.writeHead(404).end();
  /** Distinct client connections accepted so far. */
  connectionsSeen = 0;

  private constructor(server: Server, protocol: string) {
    this.#server = server;
    this.#protocol = protocol;
    server.on('connection', (socket: Socket) => {
      this.connectionsSeen++;
      this.#sockets.add(socket);
      socket.once('close', () => this.#sockets.delete(socket));
    });
    server.on('request', (req: IncomingMessage, res: ServerResponse) => void this.#serve(req, res));
  }

  static async start(tls?: ServerOptions): Promise<TestServer> {
    const server = tls === undefined ? createHttpServer() : createHttpsServer(tls);
    const s = new TestServer(server, tls === undefined ? 'http' : 'https');
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return s;
  }

  get url(): string {
    const { port } = this.#server.address() as AddressInfo;
    return `${this.#protocol}://127.0.0.1:${port}`;
  }

  /** Connections open right now (a kept-alive idle one included). */
  get openConnections(): number {
    return this.#sockets.size;
  }

  handle(handler: Handler): void {
    this.#handler = handler;
  }

  async close(): Promise<void> {
    for (const s of this.#sockets) s.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  async #serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const recorded = { method: req.method ?? '', url: new URL(req.url ?? '/', 'http://x'), headers: req.headers, body: Buffer.concat(chunks).toString() };
    this.requests.push(recorded);
    try {
      await this.#handler(recorded, res);
    } catch (err) {
      res.destroy(err as Error);
    }
  }
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) }).end(text);
}

export function status(code: number, reason: string, message: string, details?: object): object {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code, ...(details === undefined ? {} : { details }) };
}
