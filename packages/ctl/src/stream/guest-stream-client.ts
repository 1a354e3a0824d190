// One Console or Vnc stream of the node API as a byte pipe: `attached` settles once the handler
// holds the guest's socket (or refused), `ended` once the stream is over, with the status that
// ended it mapped to a typed error in one place (NodeApiError; CANCELLED when we ended it).

import * as grpc from '@grpc/grpc-js';
import type { node } from '@podvirt/proto';
import { NodeApiError, statusName } from '../node-api-error.js';

export type GuestStreamKind = 'console' | 'vnc';

export type StreamEnd =
  /** The handler ended the stream with OK: we detached. */
  | { readonly kind: 'closed' }
  | { readonly kind: 'failed'; readonly error: NodeApiError };

export interface GuestStreamClient {
  /** Resolves with the VMI's UID; rejects with a NodeApiError (or the attach timeout's). */
  readonly attached: Promise<string>;
  readonly ended: Promise<StreamEnd>;
  onData(listener: (chunk: Buffer) => void): void;
  /** false: the stream's buffer is full; wait for onDrain. */
  write(chunk: Buffer): boolean;
  onDrain(listener: () => void): void;
  /** Detach: half-close, the handler ends the stream with OK. */
  end(): void;
  /** Abort at once (the attach timeout, an interrupt). */
  cancel(): void;
}

export interface OpenStreamOptions {
  readonly vmi: node.VmiRef;
  readonly takeover: boolean;
  /** How long the handler has to answer `attached`. */
  readonly attachTimeoutMs: number;
}

export function openGuestStream(client: node.NodeClient, kind: GuestStreamKind, o: OpenStreamOptions): GuestStreamClient {
  const call = kind === 'console' ? client.console(new grpc.Metadata()) : client.vnc(new grpc.Metadata());
  const listeners: Array<(chunk: Buffer) => void> = [];
  let resolveAttached!: (uid: string) => void;
  let rejectAttached!: (err: Error) => void;
  const attached = new Promise<string>((resolve, reject) => {
    resolveAttached = resolve;
    rejectAttached = reject;
  });
  // Unhandled if the caller only awaits `ended`.
  attached.catch(() => undefined);
  const timer = setTimeout(() => {
    rejectAttached(new NodeApiError('DEADLINE_EXCEEDED', `not attached within ${o.attachTimeoutMs} ms`));
    call.cancel();
  }, o.attachTimeoutMs);
  const ended = new Promise<StreamEnd>((resolve) => {
    call.on('status', (st: grpc.StatusObject) => {
      clearTimeout(timer);
      if (st.code === grpc.status.OK) {
        rejectAttached(new NodeApiError('UNKNOWN', 'the handler ended the stream before attaching'));
        resolve({ kind: 'closed' });
        return;
      }
      const error = new NodeApiError(statusName(st.code), st.details === '' ? statusName(st.code) : st.details);
      rejectAttached(error);
      resolve({ kind: 'failed', error });
    });
  });
  call.on('error', () => undefined);
  call.on('data', (msg: node.StreamOutput) => {
    const out = msg.output;
    if (out?.$case === 'attached') {
      clearTimeout(timer);
      resolveAttached(out.value.uid);
    } else if (out?.$case === 'data') {
      for (const l of listeners) l(out.value);
    }
  });
  call.write({ input: { $case: 'open', value: { vmi: o.vmi, takeover: o.takeover } } });
  return {
    attached,
    ended,
    onData: (l) => listeners.push(l),
    write: (chunk) => call.write({ input: { $case: 'data', value: chunk } }),
    onDrain: (l) => call.on('drain', l),
    end: () => call.end(),
    cancel: () => {
      clearTimeout(timer);
      call.cancel();
    },
  };
}
