// Runs the real podvirt-launcher-monitor as PID 1 of its own PID and mount namespace (as in
// the launcher pod's compute container), starting the real launcher, which boots the test
// guest from STANDALONE_VMI under TCG. Every resource is released through `t.after`.
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { TestContext } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { cmd } from '@podvirt/proto';
import { eventually } from '@podvirt/test-support';
import { acceptsConnections, containerStatePaths, guestImage, launcherDaemon, launcherDaemonEnv, repoRoot, startContainer, type Container, type GuestImage } from '../testbed/index.js';
import { cmdCalls, containerLeftovers, guestContainerDisks, guestVmi, UID, type CmdCalls } from './launcher-run.js';
import { childrenOf, type ProcStat } from './monitor-procfs.js';

export interface MonitorRunOptions {
  readonly keepAfterFailure?: boolean;
  /** `warm` seeds the daemon's QEMU capabilities cache; `empty` makes libvirt probe qemu. */
  readonly capsCache?: 'warm' | 'empty';
  readonly gracePeriodSeconds?: number;
  /** Added to the guest's kernel command line (e.g. the switch that keeps its agent off). */
  readonly extraKernelArgs?: string;
  /** Called with the monitor's host pid as soon as the container runs (before any wait). */
  readonly onStart?: (monitorPid: number) => void;
}

export type LogLine = Record<string, unknown> & { readonly msg?: string; readonly component?: string };

export interface MonitorRun {
  readonly container: Container;
  /** The monitor's pid on the host (PID 1 inside its namespace). */
  readonly monitorPid: number;
  readonly client: cmd.CmdClient;
  readonly cmd: CmdCalls;
  readonly dir: string;
  readonly socketPath: string;
  readonly serialLog: string;
  readonly vmi: Record<string, unknown>;
  readonly guest: GuestImage;
  /** The container's private /var/cache/libvirt, as seen from the host. */
  readonly libvirtCacheDir: string;
  /** Every JSON line printed so far (monitor and launcher share stdout). */
  readonly logs: () => LogLine[];
  readonly monitorLogs: () => LogLine[];
  /** All output so far, for failure messages. */
  readonly output: () => string;
}

const MONITOR_COMPONENT = 'virt-launcher-monitor';
// The monitor's safety sweep would hide a missed SIGCHLD: this long, SIGCHLD alone has to reap.
const REAP_SWEEP_INTERVAL = '10m';

/** The monitor's entry point; it loads its compiled code and native addon, which must be built. */
function monitorBin(root: string): string {
  const pkg = join(root, 'packages', 'launcher-monitor');
  for (const built of [join(pkg, 'dist', 'src', 'main.js'), join(pkg, 'build', 'Release', 'podvirt_monitor.node')]) {
    if (!existsSync(built)) throw new Error(`${built} is missing: build the monitor (pnpm install; pnpm exec tsc -b packages/launcher-monitor)`);
  }
  return join(pkg, 'bin', 'podvirt-launcher-monitor.js');
}

export async function startMonitorRun(t: TestContext, opts: MonitorRunOptions = {}): Promise<MonitorRun> {
  const guest = guestImage();
  const root = repoRoot();
  const monitor = monitorBin(root);
  const dir = await mkdtemp(join(tmpdir(), 'podvirt-e2e-monitor-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const share = join(dir, 'share');
  const cdisks = await guestContainerDisks(guest, share);
  const vmi = guestVmi(guest, opts.extraKernelArgs);
  const monitorFlags = [
    '--launcher-bin', join(root, 'packages', 'launcher', 'bin', 'podvirt-launcher.js'),
    '--qemu-stop-timeout', '10s', '--reap-sweep-interval', REAP_SWEEP_INTERVAL,
    ...(opts.keepAfterFailure === true ? ['--keep-after-failure'] : []),
  ];
  // The launcher's daemon (virtqemud unless PODVIRT_TESTBED_DAEMON=libvirtd); its capabilities cache only by the flag, so 'empty' has none.
  const daemon = launcherDaemon(root);
  const { PODVIRT_LIBVIRT_CAPS_CACHE: _caps, ...daemonEnv } = launcherDaemonEnv(daemon);
  const launcherArgs = [
    '--qemu-timeout', '60s', '--name', 'guest', '--namespace', 'e2e', '--uid', UID,
    '--kubevirt-share-dir', share, '--ephemeral-disk-dir', join(dir, 'ephemeral'), '--container-disk-dir', cdisks,
    '--private-dir', join(dir, 'private'), '--grace-period-seconds', String(opts.gracePeriodSeconds ?? 20),
    '--hook-sidecars', '0', '--allow-emulation',
    ...(opts.capsCache === 'empty' ? [] : ['--libvirt-caps-cache', daemon.capsCache]),
  ];
  const stateDir = join(dir, 'container');
  const container = await startContainer({
    command: [process.execPath, monitor, ...monitorFlags, ...launcherArgs],
    stateDir,
    pidNamespace: true,
    // The launcher's bin starts with `#!/usr/bin/env node`: this node must be first on PATH.
    env: { PATH: `${dirname(process.execPath)}:${process.env['PATH'] ?? '/usr/bin:/bin'}`, ...daemonEnv, STANDALONE_VMI: JSON.stringify(vmi) },
  });
  t.after(() => container.stop({ graceMs: 5_000 }).then(() => undefined));
  opts.onStart?.(container.pid);
  let out = '';
  container.stdout.on('data', (c: Buffer) => (out += c.toString()));
  container.stderr.on('data', (c: Buffer) => (out += c.toString()));
  const logs = (): LogLine[] => out.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as LogLine);
  const socketPath = join(share, 'sockets', 'launcher-sock');
  // A unix socket reads as ENXIO: that is how we know it exists.
  await eventually(() => readFile(socketPath).then(() => undefined, (e: NodeJS.ErrnoException) => (e.code === 'ENXIO' ? true : undefined)), { what: 'launcher-sock', deadlineMs: 60_000, detail: () => out });
  const client = new cmd.CmdClient(`unix:${socketPath}`, grpc.credentials.createInsecure());
  t.after(() => client.close());
  return {
    container, monitorPid: container.pid, client, cmd: cmdCalls(client), dir, socketPath, vmi, guest,
    serialLog: join(dir, 'private', UID, 'virt-serial0-log'),
    libvirtCacheDir: containerStatePaths(stateDir).varCacheLibvirt,
    logs,
    monitorLogs: () => logs().filter((l) => l.component === MONITOR_COMPONENT),
    output: () => out,
  };
}

/** The launcher: the monitor's child running the launcher's bin. */
export async function launcherOf(run: MonitorRun): Promise<ProcStat | undefined> {
  for (const child of await childrenOf(run.monitorPid)) {
    const cmdline = await readFile(`/proc/${child.pid}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.includes('podvirt-launcher.js') && child.state !== 'Z') return child;
  }
  return undefined;
}

/** The VM's qemu among the monitor's children (libvirt double-forks it, so it is re-parented here). */
export async function qemuOf(run: MonitorRun): Promise<ProcStat | undefined> {
  for (const child of await childrenOf(run.monitorPid)) {
    if (!child.comm.startsWith('qemu-system') || child.state === 'Z') continue;
    const cmdline = await readFile(`/proc/${child.pid}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.includes('e2e_guest')) return child;
  }
  return undefined;
}

export function findLog(run: MonitorRun, msg: string): LogLine | undefined {
  return run.monitorLogs().find((l) => l.msg === msg);
}

/**
 * What is left of the run once the container has exited: processes in its namespace, a qemu
 * of this VM anywhere, the launcher's sockets, its mounts. Empty when it all went away.
 * `deadSocket: 'allowed'` accepts a launcher socket FILE that nobody listens on any more: a
 * SIGKILLed launcher cannot remove it, and (as in KubeVirt) a handler that finds it refusing
 * connections marks the launcher unresponsive at once, where a missing one reads as a
 * launcher still starting.
 */
export async function leftovers(run: MonitorRun, opts: { deadSocket?: 'allowed' } = {}): Promise<string[]> {
  const left = await containerLeftovers(run.container.mountNamespace, run.dir);
  for (const name of await readdir(dirname(run.socketPath)).catch(() => [])) {
    if (!name.startsWith('launcher')) continue;
    const listening = await acceptsConnections(join(dirname(run.socketPath), name));
    if (listening || opts.deadSocket !== 'allowed') left.push(`socket ${name}${listening ? ' (listening)' : ''}`);
  }
  return left;
}


