import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, readSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { eventually } from '@podvirt/test-support';
import { podvirtCrdFiles } from './podvirt-crds.js';

export class TestbedError extends Error {
  constructor(
    readonly code: 'TESTBED_ALREADY_UP' | 'TESTBED_START_FAILED' | 'TESTBED_STOP_FAILED',
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'TestbedError';
  }
}

export interface TestbedProcesses {
  stateDir: string;
  kubeconfigPath: string;
  nodeName: string;
}

// Stopped in this order: the kubelet first, so its pods end while the API server can still
// record it; the API server last.
const components = ['apiserver', 'scheduler', 'kubelet'] as const;
const startTimeoutMs = 20_000;
const stopTimeoutMs = 30_000;

/** `testbed up`: the three components as background processes, with pid and log files in `stateDir`. */
export async function testbedUp(stateDir: string, nodeName = hostname()): Promise<TestbedProcesses> {
  for (const c of components) {
    const pid = await readPid(stateDir, c);
    if (pid !== undefined && alive(pid)) throw new TestbedError('TESTBED_ALREADY_UP', `testbed already up in ${stateDir} (${c} pid ${pid})`);
  }
  await mkdir(stateDir, { recursive: true });
  const kubeconfigPath = join(stateDir, 'kubeconfig');
  await rm(kubeconfigPath, { force: true });
  const args: Record<(typeof components)[number], string[]> = {
    apiserver: ['--kubeconfig', kubeconfigPath, ...podvirtCrdFiles().flatMap((crd) => ['--crd', crd])],
    scheduler: ['--kubeconfig', kubeconfigPath],
    kubelet: ['--kubeconfig', kubeconfigPath, '--node-name', nodeName, '--root-dir', join(stateDir, 'kubelet')],
  };
  try {
    for (const c of components) {
      await launch(stateDir, c, args[c]);
      if (c === 'apiserver') await until(() => existsSync(kubeconfigPath), `the API server to write ${kubeconfigPath}`);
    }
    const server = /server: (\S+)/.exec(await readFile(kubeconfigPath, 'utf8'))?.[1] ?? '';
    await until(async () => nodeReady(server, nodeName), `node ${nodeName} to be Ready`);
  } catch (err) {
    await testbedDown(stateDir).catch(() => undefined);
    throw new TestbedError('TESTBED_START_FAILED', `testbed up failed: ${(err as Error).message}`, { cause: err });
  }
  return { stateDir, kubeconfigPath, nodeName };
}

/** `testbed down`: stops the components (SIGTERM, then SIGKILL after a bound) and removes `stateDir`. */
export async function testbedDown(stateDir: string): Promise<void> {
  for (const c of [...components].reverse()) {
    const pid = await readPid(stateDir, c);
    if (pid === undefined || !alive(pid)) continue;
    signal(pid, 'SIGTERM');
    try {
      await until(() => !alive(pid), `${c} (pid ${pid}) to stop`, stopTimeoutMs);
    } catch {
      signal(pid, 'SIGKILL');
      await until(() => !alive(pid), `${c} (pid ${pid}) to die`, 5000);
    }
  }
  await rm(stateDir, { recursive: true, force: true });
}

async function launch(stateDir: string, component: string, args: string[]): Promise<void> {
  const main = fileURLToPath(new URL(`../${component}/main.js`, import.meta.url));
  const logFd = openSync(join(stateDir, `${component}.log`), 'a');
  try {
    const child = spawn(process.execPath, [main, ...args], { detached: true, stdio: ['ignore', logFd, logFd] });
    await new Promise<void>((resolve, reject) => {
      child.once('spawn', resolve);
      child.once('error', reject);
    });
    child.unref();
    await writeFile(join(stateDir, `${component}.pid`), `${child.pid ?? 0}\n`);
  } finally {
    closeSync(logFd);
  }
}

async function readPid(stateDir: string, component: string): Promise<number | undefined> {
  try {
    const pid = Number((await readFile(join(stateDir, `${component}.pid`), 'utf8')).trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** A zombie (exited, not yet reaped) counts as gone. */
function alive(pid: number): boolean {
  try {
    const stat = procStat(pid);
    return stat !== undefined && !/\) Z /.test(stat);
  } catch {
    return false;
  }
}

function procStat(pid: number): string | undefined {
  const path = `/proc/${pid}/stat`;
  if (!existsSync(path)) return undefined;
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.alloc(512);
    const n = readSync(fd, buf);
    return buf.subarray(0, n).toString();
  } finally {
    closeSync(fd);
  }
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // gone meanwhile
  }
}

async function until(check: () => boolean | Promise<boolean>, what: string, deadlineMs = startTimeoutMs): Promise<void> {
  await eventually(check, { what, deadlineMs, stepMs: 100 });
}

async function nodeReady(server: string, nodeName: string): Promise<boolean> {
  try {
    const res = await fetch(`${server}/api/v1/nodes/${nodeName}`);
    if (!res.ok) return false;
    const node = (await res.json()) as { status?: { conditions?: Array<{ type: string; status: string }> } };
    return node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
  } catch {
    return false;
  }
}
