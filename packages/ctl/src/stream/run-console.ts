// `podvirtctl console`: the local terminal in raw mode, keys to the guest's serial port and its
// output back, until Ctrl+] (detach), the stream ends (the VM stopped, the handler restarts,
// another client took over), stdin ends, stdout breaks, or the signal fires (SIGINT, SIGTERM,
// SIGHUP). Raw mode is undone on every one of those paths before anything is printed.
// A serial line has no window size, so a terminal resize has nothing to change here: the
// guest's shell keeps the size it assumes (set it inside the guest with `stty rows R cols C`).

import type { node } from '@podvirt/proto';
import type { NodeApiError } from '../node-api-error.js';
import { splitAtEscape } from './escape-key.js';
import type { GuestStreamClient } from './guest-stream-client.js';
import type { TerminalInput, TerminalOutput } from './terminal.js';

export type ConsoleOutcome =
  | { readonly kind: 'detached' }
  | { readonly kind: 'ended'; readonly error: NodeApiError | undefined }
  | { readonly kind: 'interrupted' }
  | { readonly kind: 'output-broken'; readonly error: Error };

export interface ConsoleTerminal {
  readonly stdin: TerminalInput;
  readonly stdout: TerminalOutput;
  readonly stderr: { write(chunk: string): unknown };
}

// How long a detach waits for the handler's goodbye before it cancels instead.
const DETACH_GRACE_MS = 2_000;

/** The stream is attached; relays until one of the ends above and restores the terminal. */
export async function relayConsole(stream: GuestStreamClient, vmi: node.VmiRef, term: ConsoleTerminal, signal: AbortSignal): Promise<ConsoleOutcome> {
  const { stdin, stdout } = term;
  const raw = stdin.isTTY === true && typeof stdin.setRawMode === 'function';
  let finish!: (o: ConsoleOutcome) => void;
  const outcome = new Promise<ConsoleOutcome>((resolve) => (finish = resolve));
  const onKeys = (chunk: Buffer): void => {
    const { forward, detach } = splitAtEscape(chunk);
    if (forward.length > 0) stream.write(forward);
    if (detach) finish({ kind: 'detached' });
  };
  const onStdinEnd = (): void => finish({ kind: 'detached' });
  const onOutputError = (error: Error): void => finish({ kind: 'output-broken', error });
  const onAbort = (): void => finish({ kind: 'interrupted' });
  stream.onData((chunk) => stdout.write(chunk));
  void stream.ended.then((end) => finish({ kind: 'ended', error: end.kind === 'failed' ? end.error : undefined }));
  if (raw) stdin.setRawMode?.(true);
  try {
    term.stderr.write(`Connected to the console of VMI ${vmi.namespace}/${vmi.name}. Press Ctrl+] to detach.${raw ? '\r\n' : '\n'}`);
    stdin.on('data', onKeys);
    stdin.on('end', onStdinEnd);
    stdout.on('error', onOutputError);
    signal.addEventListener('abort', onAbort, { once: true });
    if (signal.aborted) onAbort();
    stdin.resume();
    const result = await outcome;
    if (result.kind === 'detached') await detach(stream);
    else if (result.kind !== 'ended') stream.cancel();
    return result;
  } finally {
    if (raw) stdin.setRawMode?.(false);
    stdin.removeListener('data', onKeys);
    stdin.removeListener('end', onStdinEnd);
    stdout.removeListener('error', onOutputError);
    signal.removeEventListener('abort', onAbort);
    stdin.pause();
  }
}

async function detach(stream: GuestStreamClient): Promise<void> {
  stream.end();
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), DETACH_GRACE_MS)));
  const first = await Promise.race([stream.ended, late]);
  clearTimeout(timer);
  if (first === 'late') stream.cancel();
}
