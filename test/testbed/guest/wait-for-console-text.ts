import { readFile } from 'node:fs/promises';
import { eventually, EventuallyTimeoutError } from '@podvirt/test-support';

export interface WaitForConsoleTextOptions {
  /** Default 60 s: a TCG boot takes ~2.5 s alone, but several at once share two cores. */
  readonly timeoutMs?: number;
  /** Search from this byte offset, e.g. the `end` of an earlier match (a reboot's marker). */
  readonly from?: number;
  readonly signal?: AbortSignal;
}

export interface ConsoleMatch {
  /** The whole line holding the text, without the line end. */
  readonly line: string;
  /** Byte offset just past the match: pass it as `from` to wait for the next one. */
  readonly end: number;
}

/** The text did not appear on the console in time; the message ends with the log's tail. */
export class ConsoleTextTimeoutError extends Error {
  override readonly name = 'ConsoleTextTimeoutError';
  readonly code = 'PODVIRT_TESTBED_CONSOLE_TIMEOUT';
}

const POLL_MS = 100;
const TAIL_BYTES = 4096;

async function readLog(path: string): Promise<Buffer> {
  try {
    return await readFile(path);
  } catch {
    return Buffer.alloc(0); // qemu creates the log only once it runs
  }
}

/** Polls a serial console log (the domain's `<log file>`) until `text` appears. */
export async function waitForConsoleText(
  logPath: string,
  text: string,
  opts: WaitForConsoleTextOptions = {},
): Promise<ConsoleMatch> {
  const timeoutMs = opts.timeoutMs ?? 60_000;
  const needle = Buffer.from(text);
  let log: Buffer = Buffer.alloc(0);
  try {
    return await eventually(async (): Promise<ConsoleMatch | undefined> => {
      log = await readLog(logPath);
      const at = log.indexOf(needle, opts.from ?? 0);
      if (at < 0) return undefined;
      const start = log.lastIndexOf('\n', at) + 1;
      const nl = log.indexOf('\n', at);
      const line = log.subarray(start, nl < 0 ? log.length : nl).toString().replace(/\r/g, '');
      return { line, end: at + needle.length };
    }, { what: `"${text}" on the console`, deadlineMs: timeoutMs, stepMs: POLL_MS, ...(opts.signal === undefined ? {} : { signal: opts.signal }) });
  } catch (err) {
    if (!(err instanceof EventuallyTimeoutError)) throw err;
    const tail = log.subarray(Math.max(0, log.length - TAIL_BYTES)).toString();
    throw new ConsoleTextTimeoutError(`"${text}" did not appear in ${logPath} within ${timeoutMs} ms; the log ends with:\n${tail}`);
  }
}
