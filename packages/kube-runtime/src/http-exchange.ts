// One HTTP request and its response under a caller's AbortSignal and a timer. Whatever ends it
// early (abort, timeout, the client closing) destroys the socket, so an abandoned exchange never
// returns a half-read connection to the keep-alive pool, and the reason is kept as `failure`.

import type { Agent, ClientRequest, IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { KubeClientError } from './kube-client-error.js';

export interface HttpExchangeOptions {
  readonly url: URL;
  readonly method: string;
  readonly headers: OutgoingHttpHeaders;
  readonly body: Buffer | undefined;
  readonly agent: Agent;
  readonly signal: AbortSignal | undefined;
  /** Bound until the timer is re-armed or cleared. */
  readonly timeoutMs: number;
  /** For messages: "GET /api/v1/nodes". */
  readonly what: string;
}

// A kept-alive socket the server closed in the meantime fails the next request with a reset
// before any response; such a request never reached the server and may be sent again.
const STALE_SOCKET_CODES = new Set(['ECONNRESET', 'EPIPE']);

export class HttpExchange {
  readonly response: Promise<IncomingMessage>;
  readonly #o: HttpExchangeOptions;
  readonly #req: ClientRequest;
  #res: IncomingMessage | undefined;
  #timer: NodeJS.Timeout | undefined;
  #failure: KubeClientError | undefined;
  #retryable = false;
  #finished = false;
  readonly #onAbort = (): void => this.destroy(new KubeClientError('KUBE_ERR_ABORTED', `${this.#o.what}: aborted`, { cause: this.#o.signal?.reason }));

  constructor(options: HttpExchangeOptions) {
    this.#o = options;
    const { url, method, headers, agent } = options;
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    this.#req = send(url, { method, headers, agent });
    this.response = new Promise<IncomingMessage>((resolve, reject) => {
      this.#req.once('response', (res) => {
        this.#res = res;
        resolve(res);
      });
      // Kept for the exchange's life: a socket error after the response must not go unhandled.
      this.#req.on('error', (err: NodeJS.ErrnoException) => {
        if (this.#failure === undefined && this.#res === undefined && this.#req.reusedSocket && STALE_SOCKET_CODES.has(err.code ?? '')) {
          this.#retryable = true;
        }
        reject(this.#failure ?? new KubeClientError('KUBE_ERR_CONNECTION', `${options.what}: ${err.message}`, { cause: err }));
      });
    });
    if (options.signal?.aborted === true) {
      this.#onAbort();
      return;
    }
    options.signal?.addEventListener('abort', this.#onAbort, { once: true });
    this.rearm(options.timeoutMs, 'no response');
    this.#req.end(options.body);
  }

  /** Why this exchange was cut short by us, if it was. */
  get failure(): KubeClientError | undefined {
    return this.#failure;
  }

  /** True when the request failed on a stale kept-alive socket and can be sent again. */
  get retryable(): boolean {
    return this.#retryable;
  }

  /** Restarts the timer; undefined clears it. `what` names the bound in the timeout error. */
  rearm(timeoutMs: number | undefined, what: string): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (timeoutMs === undefined || this.#finished) return;
    this.#timer = setTimeout(() => this.destroy(new KubeClientError('KUBE_ERR_TIMEOUT', `${this.#o.what}: ${what} within ${timeoutMs} ms`)), timeoutMs);
    this.#timer.unref();
  }

  /** Cuts the exchange short; the first reason wins. */
  destroy(reason: KubeClientError): void {
    this.#failure ??= reason;
    this.#res?.destroy(reason);
    this.#req.destroy(reason);
    this.finish();
  }

  /** Drops the timer and the abort listener; the socket goes back to the pool if the response was read whole. */
  finish(): void {
    if (this.#finished) return;
    this.#finished = true;
    clearTimeout(this.#timer);
    this.#o.signal?.removeEventListener('abort', this.#onAbort);
  }

  /** The whole body as text, under the same timer and signal. */
  async text(res: IncomingMessage): Promise<string> {
    const chunks: Buffer[] = [];
    try {
      for await (const chunk of res) chunks.push(chunk as Buffer);
    } catch (err) {
      throw this.#failure ?? new KubeClientError('KUBE_ERR_CONNECTION', `${this.#o.what}: response cut off: ${(err as Error).message}`, { cause: err });
    }
    return Buffer.concat(chunks).toString('utf8');
  }
}
