// The connections a migration proxy carries: each accepted connection piped both ways to its
// peer connection. `pipe` keeps backpressure (a side that stops reading stops the other side's
// reads), so a stalled destination never makes the proxy buffer a guest's memory. Either side
// ending or failing ends both, as a stream of a migration has no use half-open.

import type { Socket } from 'node:net';
import type { Logger } from 'pino';

export class PipedConnections {
  readonly #open = new Set<Socket>();

  /** Keeps `socket` to be destroyed by destroyAll(); forgotten once closed. */
  track(socket: Socket): void {
    this.#open.add(socket);
    socket.once('close', () => this.#open.delete(socket));
  }

  /** Pipes `a` and `b` into each other; both must be tracked. */
  pipe(a: Socket, b: Socket, log: Logger): void {
    const fail = (side: string) => (err: Error): void => {
      log.warn({ err, side }, 'migration stream failed');
      a.destroy();
      b.destroy();
    };
    a.on('error', fail('accepted'));
    b.on('error', fail('peer'));
    // A side closed without error (its peer hung up) takes the other with it once that one has
    // written what it holds: end() flushes, the allowHalfOpen=false default closes it afterwards.
    a.once('close', () => b.end());
    b.once('close', () => a.end());
    a.pipe(b);
    b.pipe(a);
  }

  get size(): number {
    return this.#open.size;
  }

  destroyAll(): void {
    for (const s of this.#open) s.destroy();
    this.#open.clear();
  }
}
