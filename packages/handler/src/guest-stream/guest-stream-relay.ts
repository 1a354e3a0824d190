// Bytes both ways between a node API stream and a guest socket (serial console or VNC).
// Guest → client never waits for the client: the socket is always read, so a client that
// stops reading cannot stall the guest's serial port or the handler. What the client has
// not taken is bounded by `maxPendingBytes`; past it the client is disconnected with
// RESOURCE_EXHAUSTED (it reads that once it reads again). Client → guest follows the
// socket's own pace (the stream pauses while the socket's buffer is full). When the guest's
// side closes (the VM stopped), the stream ends with OK.

import type { Socket } from 'node:net';
import { Metadata, status, type ServerDuplexStream } from '@grpc/grpc-js';
import type { node } from '@podvirt/proto';
import type { GuestSession } from './guest-stream-sessions.js';

export const DEFAULT_MAX_PENDING_BYTES = 1024 * 1024;

export interface RelayOptions {
  readonly call: ServerDuplexStream<node.StreamInput, node.StreamOutput>;
  readonly socket: Socket;
  readonly uid: string;
  /** What the client may leave unread before it is disconnected. */
  readonly maxPendingBytes: number;
}

export interface Relay extends GuestSession {
  /** Resolves once both the stream and the socket are done; never rejects. */
  readonly done: Promise<void>;
}

export function startRelay(o: RelayOptions): Relay {
  const { call, socket } = o;
  let ended = false;
  let resolveDone!: () => void;
  const done = new Promise<void>((resolve) => (resolveDone = resolve));
  let callFinished = false;
  let socketClosed = false;
  const settle = (): void => {
    if (callFinished && socketClosed) resolveDone();
  };

  const end = (code: status, message: string): void => {
    if (ended) return;
    ended = true;
    socket.destroy();
    if (call.cancelled || call.destroyed || call.writableEnded) return;
    if (code === status.OK) call.end();
    else call.emit('error', { code, details: message, metadata: new Metadata() });
  };

  call.write({ output: { $case: 'attached', value: { uid: o.uid } } });

  // Bytes handed to the stream whose write has not completed (HTTP/2 flow control holds
  // them while the client does not read). writableLength counts messages, not bytes.
  let pending = 0;
  socket.on('data', (chunk: Buffer) => {
    if (ended) return;
    if (pending + chunk.length > o.maxPendingBytes) {
      end(status.RESOURCE_EXHAUSTED, `the client read too slowly: more than ${o.maxPendingBytes} bytes were waiting for it, so it was disconnected`);
      return;
    }
    pending += chunk.length;
    call.write({ output: { $case: 'data', value: chunk } }, () => (pending -= chunk.length));
  });
  socket.on('drain', () => call.resume());
  socket.on('error', () => undefined);
  socket.once('close', () => {
    socketClosed = true;
    // OK: nothing failed; the client, which did not detach, tells its user the console closed.
    end(status.OK, '');
    settle();
  });

  call.on('data', (msg: node.StreamInput) => {
    if (ended || msg.input?.$case !== 'data') return;
    if (!socket.write(msg.input.value)) call.pause();
  });
  // The client half-closed: it detached.
  call.on('end', () => end(status.OK, ''));
  call.on('error', () => end(status.CANCELLED, ''));
  const finish = (): void => {
    if (callFinished) return;
    callFinished = true;
    end(status.CANCELLED, '');
    settle();
  };
  call.on('cancelled', finish);
  call.on('close', finish);
  call.on('finish', finish);
  // The stream was paused while the open message was read.
  call.resume();
  return { end, done };
}
