import { writeSync } from 'node:fs';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

type Fields = Record<string, unknown>;

export interface Logger {
  debug(fields: Fields, msg: string): void;
  info(fields: Fields, msg: string): void;
  warn(fields: Fields, msg: string): void;
  error(fields: Fields, msg: string): void;
  child(bindings: Fields): Logger;
}

export interface JsonLoggerOptions {
  /** Fields on every line, e.g. `{ component: 'virt-launcher-monitor' }`. */
  readonly bindings: Fields;
  readonly level?: LogLevel;
  /** Where finished lines go; defaults to a synchronous write to stdout (fd 1). */
  readonly write?: (line: string) => void;
  readonly now?: () => number;
}

// pino's numeric levels, so that the monitor's lines read like the launcher's pino lines.
const LEVELS: Record<LogLevel, number> = { debug: 20, info: 30, warn: 40, error: 50 };

/**
 * A pino-compatible JSON line logger. The monitor idles next to every VM, and loading pino
 * (its module graph, even with a synchronous destination, which starts no worker thread)
 * adds about 10 MB of RSS to a 40 MB process; this
 * keeps the same line shape (`level`, `time`, bindings, fields, `msg`, `err` serialized)
 * and, like pino's sync destination, writes synchronously so a SIGKILL loses nothing.
 */
export class JsonLogger implements Logger {
  readonly #bindings: Fields;
  readonly #level: LogLevel;
  readonly #write: (line: string) => void;
  readonly #now: () => number;

  constructor(options: JsonLoggerOptions) {
    this.#bindings = options.bindings;
    this.#level = options.level ?? 'info';
    this.#write = options.write ?? writeStdout;
    this.#now = options.now ?? Date.now;
  }

  debug(fields: Fields, msg: string): void {
    this.#log(LEVELS.debug, fields, msg);
  }

  info(fields: Fields, msg: string): void {
    this.#log(LEVELS.info, fields, msg);
  }

  warn(fields: Fields, msg: string): void {
    this.#log(LEVELS.warn, fields, msg);
  }

  error(fields: Fields, msg: string): void {
    this.#log(LEVELS.error, fields, msg);
  }

  child(bindings: Fields): Logger {
    return new JsonLogger({
      bindings: { ...this.#bindings, ...bindings },
      level: this.#level,
      write: this.#write,
      now: this.#now,
    });
  }

  #log(level: number, fields: Fields, msg: string): void {
    if (level < LEVELS[this.#level]) return;
    const line = { level, time: this.#now(), ...this.#bindings, ...fields, msg };
    this.#write(`${JSON.stringify(line, replaceErrors)}\n`);
  }
}

export function isLogLevel(value: string): value is LogLevel {
  return Object.hasOwn(LEVELS, value);
}

function replaceErrors(_key: string, value: unknown): unknown {
  if (!(value instanceof Error)) return value;
  const out: Fields = { type: value.constructor.name, message: value.message, stack: value.stack };
  for (const key of ['code', 'errno', 'syscall', 'cause'] as const) {
    const field = (value as unknown as Fields)[key];
    if (field !== undefined) out[key] = field;
  }
  return out;
}

// stdout may be a pipe that a sibling made non-blocking (O_NONBLOCK is shared by every
// process holding the open file description): retry EAGAIN and finish partial writes.
function writeStdout(line: string): void {
  let buffer = Buffer.from(line);
  let attempts = 0;
  while (buffer.length > 0) {
    try {
      buffer = buffer.subarray(writeSync(1, buffer));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EAGAIN' || ++attempts > 1000) return;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1);
    }
  }
}
