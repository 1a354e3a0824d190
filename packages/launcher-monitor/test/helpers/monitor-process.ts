// Runs the built monitor entry point as a real child process (optionally as PID 1 of its own
// PID namespace) and watches it from outside: its JSON log lines, its children in procfs,
// its exit. Everything it starts is registered for cleanup with the test context.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ProcessTree } from '../../src/process-tree.js';
import { eventually } from '@podvirt/test-support';

const MAIN = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'src', 'main.js');

export interface LogLine {
  readonly level: number;
  readonly msg: string;
  readonly component: string;
  readonly [field: string]: unknown;
}

export interface MonitorProcess {
  readonly child: ChildProcess;
  /** The monitor's pid as this test sees it (inside a PID namespace it is 1 to itself). */
  monitorPid(): Promise<number>;
  readonly lines: LogLine[];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Children of the monitor that are zombies right now. */
  zombies(): Promise<number[]>;
  signal(signal: NodeJS.Signals): Promise<void>;
}

export function makeTempDir(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'podvirt-monitor-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export function writeScript(dir: string, name: string, body: string): string {
  const path = join(dir, name);
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, 0o755);
  return path;
}

/** A fake qemu: `sleep` under a name whose comm is `qemu-system-x86`. */
export function makeFakeQemu(dir: string): string {
  const path = join(dir, 'qemu-system-x86_64');
  symlinkSync('/bin/sleep', path);
  return path;
}

export function readPids(path: string): number[] {
  try {
    return readFileSync(path, 'utf8').split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

export function startMonitor(t: TestContext, args: readonly string[], options: { pidNamespace?: boolean } = {}): MonitorProcess {
  const command = options.pidNamespace === true ? 'unshare' : process.execPath;
  const argv = options.pidNamespace === true ? ['--pid', '--fork', '--kill-child', '--mount-proc', process.execPath, MAIN, ...args] : [MAIN, ...args];
  const child = spawn(command, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
  const tree = new ProcessTree();
  const lines: LogLine[] = [];
  let buffered = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    buffered += chunk;
    const parts = buffered.split('\n');
    buffered = parts.pop() ?? '';
    for (const part of parts) if (part.startsWith('{')) lines.push(JSON.parse(part) as LogLine);
  });
  child.stderr?.resume();
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('exit', (code, signal) => resolve({ code, signal }));
  });
  let done = false;
  void exited.then(() => (done = true));
  t.after(async () => {
    if (done || child.pid === undefined) return;
    // Kill the whole subtree first: orphans of a killed monitor would otherwise outlive the test.
    for (const pid of tree.descendants(child.pid).reverse()) killQuietly(pid);
    killQuietly(child.pid);
    await exited;
  });

  const monitorPid = async (): Promise<number> => {
    const outer = child.pid;
    if (outer === undefined) throw new Error('the monitor did not start');
    if (options.pidNamespace !== true) return outer;
    let inner: number | undefined;
    await eventually(() => {
      inner = tree.children(outer)[0];
      return inner !== undefined && tree.stat(inner)?.comm === 'node';
    }, { what: 'the monitor inside the PID namespace', deadlineMs: 10_000 });
    return inner ?? outer;
  };
  return {
    child,
    lines,
    exited,
    monitorPid,
    zombies: async () => {
      const pid = await monitorPid();
      return tree.children(pid).filter((c) => tree.stat(c)?.state === 'Z');
    },
    signal: async (signal) => {
      process.kill(await monitorPid(), signal);
    },
  };
}

export function killQuietly(pid: number, signal: NodeJS.Signals = 'SIGKILL'): void {
  try {
    process.kill(pid, signal);
  } catch {
    // already gone
  }
}

export function messages(lines: readonly LogLine[], msg: string): LogLine[] {
  return lines.filter((line) => line.msg === msg);
}
