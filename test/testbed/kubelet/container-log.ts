import { createWriteStream, type WriteStream } from 'node:fs';
import { open } from 'node:fs/promises';
import type { Readable, Writable } from 'node:stream';

/**
 * Container output in the CRI log format the real kubelet keeps
 * (`<RFC 3339 nano time> <stream> F <line>`), one file per container.
 */
export class ContainerLogWriter {
  readonly #file: WriteStream;

  constructor(path: string) {
    // Owner-only, as container output may carry the guest's console (a real kubelet keeps it root-only too).
    this.#file = createWriteStream(path, { flags: 'a', mode: 0o600 });
  }

  attach(source: Readable, stream: 'stdout' | 'stderr'): Promise<void> {
    let partial = '';
    source.setEncoding('utf8');
    source.on('data', (chunk: string) => {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) this.#line(stream, line);
    });
    return new Promise((resolve) => {
      source.once('close', () => {
        if (partial !== '') this.#line(stream, partial);
        resolve();
      });
    });
  }

  #line(stream: string, text: string): void {
    this.#file.write(`${new Date().toISOString().replace('Z', '000000Z')} ${stream} F ${text}\n`);
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.#file.end(() => resolve()));
  }
}

export interface LogReadOptions {
  timestamps: boolean;
  tailLines?: number | undefined;
  limitBytes?: number | undefined;
  sinceSeconds?: number | undefined;
  /** Keep reading as the file grows, until `finished()` says the container is done. */
  follow?: { finished: () => boolean; signal: AbortSignal; pollMs?: number };
}

/** Writes a container's log to `out` as `kubectl logs` expects it. */
export async function readContainerLog(path: string, out: Writable, options: LogReadOptions): Promise<void> {
  let offset = 0;
  let partial = '';
  const joiner = new CriLineJoiner();
  let written = 0;
  const since = options.sinceSeconds === undefined ? undefined : Date.now() - options.sinceSeconds * 1000;
  const emit = (lines: LogLine[]): boolean => {
    for (const { ts, text } of lines) {
      if (since !== undefined && Date.parse(ts) < since) continue;
      const line = `${options.timestamps ? `${ts} ` : ''}${text}\n`;
      if (options.limitBytes !== undefined && written + line.length > options.limitBytes) {
        out.write(line.slice(0, options.limitBytes - written));
        return false;
      }
      written += line.length;
      out.write(line);
    }
    return true;
  };
  // Reading through one open handle: the kubelet may remove the pod's directory while a
  // follower still drains the last lines.
  const file = await open(path, 'r');
  try {
    await readAll(options, emit, () => readNew());
  } finally {
    await file.close();
  }
  async function readNew(): Promise<LogLine[]> {
    const size = (await file.stat()).size;
    if (size <= offset) return [];
    const buf = Buffer.alloc(size - offset);
    const { bytesRead } = await file.read(buf, 0, buf.length, offset);
    offset += bytesRead;
    const entries = (partial + buf.subarray(0, bytesRead).toString('utf8')).split('\n');
    partial = entries.pop() ?? '';
    return joiner.add(entries);
  }
}

interface LogLine {
  /** The time of the line's first entry. */
  readonly ts: string;
  readonly text: string;
}

/**
 * Turns CRI log entries into the container's lines: a runtime writes a long line as `P`
 * (partial) entries ending with an `F` entry, and the kubelet shows their concatenation as one
 * line. Entries of stdout and stderr may interleave, so each stream keeps its own pending part.
 */
export class CriLineJoiner {
  readonly #pending = new Map<string, LogLine>();

  add(entries: readonly string[]): LogLine[] {
    const lines: LogLine[] = [];
    for (const raw of entries) {
      const match = /^(\S+) (stdout|stderr) ([FP]) (.*)$/.exec(raw);
      if (match === null) continue;
      const [, ts = '', stream = '', tag, text = ''] = match;
      const pending = this.#pending.get(stream);
      const line = { ts: pending?.ts ?? ts, text: (pending?.text ?? '') + text };
      if (tag === 'P') {
        this.#pending.set(stream, line);
      } else {
        this.#pending.delete(stream);
        lines.push(line);
      }
    }
    return lines;
  }
}

async function readAll(options: LogReadOptions, emit: (lines: LogLine[]) => boolean, readNew: () => Promise<LogLine[]>): Promise<void> {
  let first = await readNew();
  if (options.tailLines !== undefined) first = options.tailLines <= 0 ? [] : first.slice(-options.tailLines);
  if (!emit(first) || options.follow === undefined) return;
  const { finished, signal, pollMs = 100 } = options.follow;
  while (!signal.aborted) {
    const done = finished();
    if (!emit(await readNew())) return;
    if (done) return;
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}
