// The launcher pod's processes as the handler (hostPID) sees them in /proc: which one belongs to
// a VMI, whose user it runs as, and whether it sits in a network namespace of its own.

import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { pathInRoot } from './path-in-root.js';

// Where the launcher makes its socket inside its pod (KubeVirt's layout).
const IN_POD_LAUNCHER_SOCKET = '/var/run/kubevirt/sockets/launcher-sock';

/**
 * The pid of a process of the VMI's launcher pod: the monitor and the launcher carry
 * `--uid <vmi uid>` on their command line (KubeVirt's virt-launcher flag). Lowest pid first,
 * so the same one is found each time. Undefined when none runs (yet).
 */
export async function findLauncherPid(procRoot: string, vmiUid: string, launcherSocket?: string): Promise<number | undefined> {
  const pids = (await readdir(procRoot)).filter((n) => /^\d+$/.test(n)).map(Number).sort((a, b) => a - b);
  for (const pid of pids) {
    if (!(await isLauncherOf(procRoot, pid, vmiUid))) continue;
    if (launcherSocket === undefined || (await servesSocket(procRoot, pid, launcherSocket))) return pid;
  }
  return undefined;
}

/**
 * Whether the process's pod holds `launcherSocket` (its path on the host): two pods of one VMI
 * run on a node during a migration to a node that shares the host's /proc (the testbed's two
 * nodes), and only the socket tells their launchers apart.
 */
export async function servesSocket(procRoot: string, pid: number, launcherSocket: string): Promise<boolean> {
  const inPod = await pathInRoot(join(procRoot, String(pid), 'root'), IN_POD_LAUNCHER_SOCKET).catch(() => undefined);
  if (inPod === undefined) return false;
  const [theirs, ours] = await Promise.all([stat(inPod).catch(() => undefined), stat(launcherSocket).catch(() => undefined)]);
  return theirs !== undefined && ours !== undefined && theirs.ino === ours.ino && theirs.dev === ours.dev;
}

/** Whether `pid` still is a launcher process of the VMI (a remembered pid may have been reused). */
export async function isLauncherOf(procRoot: string, pid: number, vmiUid: string): Promise<boolean> {
  const argv = (await readFile(join(procRoot, String(pid), 'cmdline'), 'utf8').catch(() => '')).split('\0');
  if (!argv.some((a) => a.includes('podvirt-launcher'))) return false;
  return argv.some((a, i) => (a === '--uid' && argv[i + 1] === vmiUid) || a === `--uid=${vmiUid}`);
}

/** The real user and group the process runs as (`Uid:`/`Gid:` of its status). */
export async function processOwner(procRoot: string, pid: number): Promise<{ uid: number; gid: number }> {
  const status = await readFile(join(procRoot, String(pid), 'status'), 'utf8');
  const first = (key: string): number => Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? NaN);
  return { uid: first('Uid'), gid: first('Gid') };
}

/** True when the process shares the handler's own network namespace (it is then not in a pod's). */
export async function sharesOwnNetns(procRoot: string, pid: number): Promise<boolean> {
  const [theirs, ours] = await Promise.all([stat(join(procRoot, String(pid), 'ns', 'net')), stat(join(procRoot, 'self', 'ns', 'net'))]);
  return theirs.ino === ours.ino && theirs.dev === ours.dev;
}
