// A console or VNC websocket joined to the handler's Console / Vnc stream. The gRPC stream is
// opened and attached before the upgrade is answered, so a refusal (not running, another client
// attached, handler down) is an HTTP status, not a websocket that opens and closes at once.
// Backpressure is the node API's: a browser that stops reading makes us stop reading the handler,
// which cuts the stream at its bound (RESOURCE_EXHAUSTED) rather than stall the guest; a handler
// that stops reading makes us stop reading the websocket.

import * as grpc from '@grpc/grpc-js';
import type { node } from '@podvirt/proto';
import { HandlerCallError } from './handler-nodes.js';
import { CLOSE_GOING_AWAY, CLOSE_INTERNAL, CLOSE_NORMAL, type WebSocketConnection } from './websocket.js';

export type GuestStreamKind = 'console' | 'vnc';

/** A stream the handler attached; its output waits (paused) until the relay starts. */
export interface OpenedGuestStream {
  readonly call: grpc.ClientDuplexStream<node.StreamInput, node.StreamOutput>;
}

/** Opens the stream; resolves once the handler says `attached`, rejects with HandlerCallError. */
export function openGuestStream(client: node.NodeClient, nodeName: string, kind: GuestStreamKind, vmi: node.VmiRef, takeover: boolean, attachTimeoutMs: number): Promise<OpenedGuestStream> {
  const call = kind === 'console' ? client.console(new grpc.Metadata()) : client.vnc(new grpc.Metadata());
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      call.cancel();
      reject(new HandlerCallError(grpc.status.DEADLINE_EXCEEDED, nodeName, `the handler on node ${nodeName} did not attach the ${kind} within ${attachTimeoutMs} ms`));
    }, attachTimeoutMs);
    const onData = (msg: node.StreamOutput): void => {
      if (msg.output?.$case === 'attached') {
        clearTimeout(timer);
        call.off('status', onStatus);
        call.off('data', onData);
        call.pause();
        resolve({ call });
      }
    };
    const onStatus = (st: grpc.StatusObject): void => {
      clearTimeout(timer);
      reject(new HandlerCallError(st.code === grpc.status.OK ? grpc.status.UNAVAILABLE : st.code, nodeName, st.details === '' ? `the handler on node ${nodeName} ended the ${kind} before attaching` : st.details));
    };
    call.on('data', onData);
    call.on('status', onStatus);
    call.on('error', () => undefined);
    call.write({ input: { $case: 'open', value: { vmi, takeover } } });
  });
}

/** Relays until either side ends; resolves then. `stop` ends it from podvirt-api's side (shutdown). */
export function relayGuestStream(opened: OpenedGuestStream, ws: WebSocketConnection, nodeName: string, stop: AbortSignal): Promise<void> {
  const { call } = opened;
  return new Promise((resolve) => {
    let done = false;
    const finish = (): void => {
      if (done) return;
      done = true;
      stop.removeEventListener('abort', onStop);
      resolve();
    };
    const onStop = (): void => {
      ws.close(CLOSE_GOING_AWAY, 'podvirt-api is stopping; reconnect');
      call.cancel();
    };
    stop.addEventListener('abort', onStop, { once: true });
    call.on('data', (msg: node.StreamOutput) => {
      if (msg.output?.$case !== 'data') return;
      if (!ws.send(msg.output.value)) call.pause();
    });
    ws.onDrain(() => call.resume());
    ws.onMessage((chunk) => {
      if (!call.write({ input: { $case: 'data', value: chunk } })) ws.pause();
    });
    call.on('drain', () => ws.resume());
    ws.onClose(() => {
      // Detach: the handler ends the stream with OK; the guest is untouched.
      call.end();
      finish();
    });
    call.on('status', (st: grpc.StatusObject) => {
      if (st.code === grpc.status.OK) ws.close(CLOSE_NORMAL, 'stream ended');
      else if (st.code !== grpc.status.CANCELLED) ws.close(CLOSE_INTERNAL, `node ${nodeName}: ${grpc.status[st.code] ?? st.code}: ${st.details}`);
      finish();
    });
    call.resume();
    if (stop.aborted) onStop();
  });
}
