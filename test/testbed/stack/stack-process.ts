import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

/** One JSON log line of a podvirt process (pino's shape). */
export interface LogLine {
  readonly level: number;
  readonly msg: string;
  readonly [key: string]: unknown;
}

export interface StackProcessOptions {
  /** Shown in errors: `controller`, `handler`. */
  readonly name: string;
  readonly argv: readonly string[];
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Every stdout line as it arrives, raw (a long-running stack writes them to a file). */
  readonly onLine?: (line: string) => void;
  /** Every stderr line as it arrives (upstream binaries log there). */
  readonly onStderrLine?: (line: string) => void;
}

export interface ProcessExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/**
 * A podvirt binary (or an upstream one of the real control plane) run as a real process: its JSON stdout lines are kept (a non-JSON line is
 * kept as `msg`), stderr as text. `stop()` is SIGTERM, then SIGKILL after a bound; idempotent.
 */
export class StackProcess {
  readonly name: string;
  readonly lines: LogLine[] = [];
  readonly exited: Promise<ProcessExit>;
  #stderr = '';
  readonly #child: ChildProcess;
  #stopping: Promise<ProcessExit> | undefined;

  constructor(options: StackProcessOptions) {
    this.name = options.name;
    const [command = '', ...args] = options.argv;
    this.#child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...options.env } });
    this.exited = new Promise((resolve) => {
      this.#child.once('exit', (code, signal) => resolve({ code, signal }));
      this.#child.once('error', () => resolve({ code: null, signal: null }));
    });
    createInterface({ input: this.#child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
      this.lines.push(parseLine(line));
      options.onLine?.(line);
    });
    if (options.onStderrLine !== undefined) createInterface({ input: this.#child.stderr as NodeJS.ReadableStream }).on('line', options.onStderrLine);
    this.#child.stderr?.on('data', (chunk: Buffer) => {
      // Bounded: a crash loop must not grow the test's memory without end.
      this.#stderr = `${this.#stderr}${chunk.toString()}`.slice(-64 * 1024);
    });
  }

  get pid(): number {
    return this.#child.pid ?? 0;
  }

  get stderr(): string {
    return this.#stderr;
  }

  get running(): boolean {
    return this.#child.exitCode === null && this.#child.signalCode === null;
  }

  kill(signal: NodeJS.Signals): void {
    if (this.running) this.#child.kill(signal);
  }

  /** SIGTERM, then SIGKILL after `graceMs`; resolves with how it ended. */
  stop(graceMs = 20_000): Promise<ProcessExit> {
    this.#stopping ??= (async () => {
      this.kill('SIGTERM');
      const timer = setTimeout(() => this.kill('SIGKILL'), graceMs);
      try {
        return await this.exited;
      } finally {
        clearTimeout(timer);
      }
    })();
    return this.#stopping;
  }

  /** The last lines of output, for an assertion message. */
  tail(count = 40): string {
    const out = this.lines.slice(-count).map((l) => JSON.stringify(l));
    return `--- ${this.name} stdout (last ${out.length}) ---\n${out.join('\n')}\n--- ${this.name} stderr ---\n${this.#stderr.slice(-4000)}`;
  }
}

function parseLine(line: string): LogLine {
  try {
    const parsed: unknown = JSON.parse(line);
    if (parsed !== null && typeof parsed === 'object') return parsed as LogLine;
  } catch {
    // Not JSON: kept as a message.
  }
  return { level: 30, msg: line };
}
