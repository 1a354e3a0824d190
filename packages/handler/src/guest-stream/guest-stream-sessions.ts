// Who is attached to which VMI's console or VNC: one client per VMI and kind. A second client
// is refused (FAILED_PRECONDITION) unless it asks to take over; then the first one's stream
// ends with ABORTED saying so. On handler shutdown every stream ends with UNAVAILABLE.

import { status } from '@grpc/grpc-js';
import { HandlerError } from '../handler-error.js';
import type { GuestStreamKind } from './guest-socket.js';

export interface GuestSession {
  /** Ends the client's stream with this status and releases the guest's socket. */
  end(code: status, message: string): void;
}

export class GuestStreamSessions {
  readonly #active = new Map<string, GuestSession>();
  #closed = false;

  get size(): number {
    return this.#active.size;
  }

  /** Throws HANDLER_ERR_VMI_PRECONDITION when the VMI's stream is taken and `takeover` is false. */
  claim(kind: GuestStreamKind, uid: string, vmiKey: string, session: GuestSession, takeover: boolean): void {
    if (this.#closed) throw new HandlerError('HANDLER_ERR_LAUNCHER_UNAVAILABLE', 'the handler is shutting down');
    const key = `${kind}/${uid}`;
    const current = this.#active.get(key);
    if (current !== undefined) {
      if (!takeover) {
        throw new HandlerError(
          'HANDLER_ERR_VMI_PRECONDITION',
          `another client is attached to the ${kind} of VMI ${vmiKey}; detach it, or take over with --takeover`,
        );
      }
      this.#active.delete(key);
      current.end(status.ABORTED, `another client took over the ${kind} of VMI ${vmiKey}`);
    }
    this.#active.set(key, session);
  }

  /** Forgets `session` if it still holds its slot (a takeover may have replaced it). */
  release(kind: GuestStreamKind, uid: string, session: GuestSession): void {
    const key = `${kind}/${uid}`;
    if (this.#active.get(key) === session) this.#active.delete(key);
  }

  /** Ends every stream; later claims are refused. Idempotent. */
  closeAll(): void {
    this.#closed = true;
    const sessions = [...this.#active.values()];
    this.#active.clear();
    for (const s of sessions) s.end(status.UNAVAILABLE, 'the handler is shutting down; the VM keeps running, attach again once the handler is back');
  }
}
