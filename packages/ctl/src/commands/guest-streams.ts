// console and vnc: long-lived streams rather than one call, with their own exit codes so that
// scripts can tell why they ended (see render/failure.ts for the shared ones):
//   0 detached (console) or stopped by a signal (vnc proxy)
//   4 NOT_FOUND: no such VMI            5 FAILED_PRECONDITION: not running, on another node,
//   6 the stream ended from the far side  (the VM stopped, the handler restarted, another
//     client took over, the client read too slowly)       or another client is attached

import { NodeApiError } from '../node-api-error.js';
import type { Invocation } from '../parse-args.js';
import type { GuestStreamClient, GuestStreamKind, OpenStreamOptions } from '../stream/guest-stream-client.js';
import { EXIT_INTERRUPTED } from '../render/failure.js';
import { relayConsole, type ConsoleTerminal } from '../stream/run-console.js';
import { runVncProxy } from '../stream/run-vnc-proxy.js';

export const EXIT_NOT_FOUND = 4;
export const EXIT_PRECONDITION = 5;
export const EXIT_STREAM_ENDED = 6;

type StreamInvocation = Extract<Invocation, { kind: 'console' | 'vnc' }>;

export interface StreamIo extends ConsoleTerminal {
  readonly signal: AbortSignal;
}

/** Attach failures go back to the caller as NodeApiError; what happens after is handled here. */
/** Where console and vnc open their streams: the node API, or the API server's subresources. */
export interface GuestStreams {
  openStream(kind: GuestStreamKind, options: OpenStreamOptions): GuestStreamClient;
}

export async function runGuestStream(api: GuestStreams, invocation: StreamInvocation, io: StreamIo): Promise<number> {
  const open = { vmi: invocation.target, takeover: invocation.takeover, attachTimeoutMs: invocation.call.timeoutMs };
  if (invocation.kind === 'vnc') {
    await runVncProxy({ vmi: invocation.target, port: invocation.port, open: () => api.openStream('vnc', open), stdout: io.stdout, stderr: io.stderr, signal: io.signal });
    return 0;
  }
  const stream = api.openStream('console', open);
  const onAbort = (): void => stream.cancel();
  io.signal.addEventListener('abort', onAbort, { once: true });
  try {
    await stream.attached;
  } finally {
    io.signal.removeEventListener('abort', onAbort);
  }
  const outcome = await relayConsole(stream, invocation.target, io, io.signal);
  const vmi = `${invocation.target.namespace}/${invocation.target.name}`;
  switch (outcome.kind) {
    case 'detached':
      io.stderr.write(`\nDetached from the console of VMI ${vmi}.\n`);
      return 0;
    case 'interrupted':
      io.stderr.write(`\nInterrupted; detached from the console of VMI ${vmi}.\n`);
      return EXIT_INTERRUPTED;
    case 'output-broken':
      io.stderr.write(`\nerror: cannot write the console's output (${outcome.error.message}); detached\n`);
      return EXIT_STREAM_ENDED;
    case 'ended':
      io.stderr.write(`\nerror: disconnected from the console of VMI ${vmi}: ${endReason(outcome.error)}\n`);
      return EXIT_STREAM_ENDED;
  }
}

function endReason(error: NodeApiError | undefined): string {
  // The handler ends with OK when the guest's side of the socket closed.
  if (error === undefined) return 'the VMI\'s serial console closed: the VM stopped or its launcher went away';
  if (error.status === 'UNAVAILABLE') {
    return `lost the handler (${error.message}); the VM is not affected: attach again once the handler is back`;
  }
  return error.message;
}

/** Exit code of a failure to attach; undefined leaves it to the shared table. */
export function attachExitCode(err: unknown): number | undefined {
  if (!(err instanceof NodeApiError)) return undefined;
  if (err.status === 'NOT_FOUND') return EXIT_NOT_FOUND;
  if (err.status === 'FAILED_PRECONDITION') return EXIT_PRECONDITION;
  return undefined;
}
