// Runs the real podvirtctl bin as a child process and collects what it printed.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../../bin/podvirtctl.js', import.meta.url));

export interface CtlRun {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface StartedCtl {
  readonly child: ChildProcess;
  readonly done: Promise<CtlRun>;
}

export interface RunAs {
  readonly uid: number;
  readonly gid: number;
}

type Env = Readonly<Record<string, string | undefined>>;

// env entries replace the inherited ones; undefined removes one. `as` runs it as another user.
export function startCtl(args: readonly string[], env: Env = {}, as?: RunAs): StartedCtl {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { ...process.env, PODVIRT_NODE_SOCKET: undefined, ...env },
    ...(as === undefined ? {} : { uid: as.uid, gid: as.gid }),
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const done = new Promise<CtlRun>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  return { child, done };
}

export function runCtl(args: readonly string[], env: Env = {}, as?: RunAs): Promise<CtlRun> {
  return startCtl(args, env, as).done;
}
