// Runs the real podvirt-launcher in its own mount namespace (as in its pod), with a
// STANDALONE_VMI that boots the test guest through kernelBoot, and a gRPC client on its
// socket. Every resource is released through `t.after`.
import { mkdir, mkdtemp, readdir, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { cmd, promiseClient, type PromiseMethods } from '@podvirt/proto';
import { eventually } from '@podvirt/test-support';
import { guestImage, launcherDaemon, launcherDaemonEnv, processesInMountNamespace, repoRoot, startContainer, waitForConsoleText, type Container, type GuestImage, type LauncherDaemon } from '../testbed/index.js';

export interface LauncherRunOptions {
  /** Added to the guest's kernel command line (e.g. the ACPI-ignore switch). */
  readonly extraKernelArgs?: string;
  readonly gracePeriodSeconds?: number;
  readonly qemuTimeout?: string;
  /** Pass the VMI as STANDALONE_VMI (default); false leaves the launcher waiting for a Sync call. */
  readonly standalone?: boolean;
  /** Fills the launcher's `--private-dir` before it starts, as the pod's mounts would (vmi-disks/<volume>/…). */
  readonly setUpPrivateDir?: (privateDir: string) => Promise<void>;
  /** Changes the guest VMI before the launcher gets it. */
  readonly editVmi?: (vmi: Record<string, unknown>) => Record<string, unknown>;
  /** Mount the share dir at /var/run/kubevirt in the launcher's namespace, as its pod's `public` emptyDir. */
  readonly podShareDir?: boolean;
}

export interface LauncherRun {
  readonly container: Container;
  readonly client: cmd.CmdClient;
  /** The Cmd service's unary calls as promises, 20 s deadline unless the call names one. */
  readonly cmd: CmdCalls;
  readonly dir: string;
  readonly socketPath: string;
  readonly serialLog: string;
  readonly vmi: Record<string, unknown>;
  readonly guest: GuestImage;
  /** The libvirt daemon it runs (virtqemud unless PODVIRT_TESTBED_DAEMON=libvirtd); its process is named after `kind`. */
  readonly daemon: LauncherDaemon;
  /** Everything the launcher printed on stdout, parsed (it logs JSON lines). */
  readonly logs: () => Record<string, unknown>[];
}

const POD_SHARE_DIR = '/var/run/kubevirt';

export const UID = '6a1f3e0c-2b9d-4d7e-9c1a-5e8f0b2c4d61';

export function guestVmi(guest: GuestImage, extraKernelArgs = ''): Record<string, unknown> {
  return {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachineInstance',
    metadata: { name: 'guest', namespace: 'e2e', uid: UID },
    spec: {
      terminationGracePeriodSeconds: 10,
      domain: {
        resources: { requests: { memory: '128Mi' } },
        firmware: {
          serial: 'podvirt-e2e',
          kernelBoot: {
            kernelArgs: `${guest.kernelArgs} ${extraKernelArgs}`.trim(),
            container: { image: 'podvirt/test-guest:latest', kernelPath: '/boot/vmlinuz', initrdPath: '/boot/initrd.img' },
          },
        },
        devices: {
          autoattachGraphicsDevice: false,
          autoattachMemBalloon: false,
          // The launcher runs outside any pod here and refuses to wire the host's network namespace.
          autoattachPodInterface: false,
          disks: [{ name: 'data', disk: { bus: 'virtio' } }],
        },
      },
      volumes: [{ name: 'data', containerDisk: { image: 'podvirt/test-guest:latest' } }],
    },
  };
}

/**
 * The guest image placed as the launcher's documented layout under `<share>/container-disks`:
 * kernel-boot/<path> for guestVmi's kernelBoot and data/disk.img for its containerDisk.
 */
export async function guestContainerDisks(guest: GuestImage, share: string): Promise<string> {
  const cdisks = join(share, 'container-disks');
  await mkdir(join(cdisks, 'kernel-boot', 'boot'), { recursive: true });
  await mkdir(join(cdisks, 'data'), { recursive: true });
  await symlink(guest.kernel, join(cdisks, 'kernel-boot', 'boot', 'vmlinuz'));
  await symlink(guest.initrd, join(cdisks, 'kernel-boot', 'boot', 'initrd.img'));
  await symlink(guest.dataDisk, join(cdisks, 'data', 'disk.img'));
  return cdisks;
}

export async function startLauncher(t: TestContext, opts: LauncherRunOptions = {}): Promise<LauncherRun> {
  const guest = guestImage();
  const root = repoRoot();
  const dir = await mkdtemp(join(tmpdir(), 'podvirt-e2e-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const share = join(dir, 'share');
  const cdisks = await guestContainerDisks(guest, share);
  const vmi = (opts.editVmi ?? ((v) => v))(guestVmi(guest, opts.extraKernelArgs));
  const args = [
    '--qemu-timeout', opts.qemuTimeout ?? '60s', '--name', 'guest', '--namespace', 'e2e', '--uid', UID,
    '--kubevirt-share-dir', opts.podShareDir === true ? POD_SHARE_DIR : share, '--ephemeral-disk-dir', join(dir, 'ephemeral'), '--container-disk-dir', cdisks,
    '--private-dir', join(dir, 'private'), '--grace-period-seconds', String(opts.gracePeriodSeconds ?? 20),
    '--hook-sidecars', '0', '--allow-emulation',
  ];
  const daemon = launcherDaemon(root);
  await mkdir(join(dir, 'private'), { recursive: true });
  await opts.setUpPrivateDir?.(join(dir, 'private'));
  const container = await startContainer({
    command: [process.execPath, join(root, 'packages', 'launcher', 'bin', 'podvirt-launcher.js'), ...args],
    stateDir: join(dir, 'container'),
    ...(opts.podShareDir === true ? { binds: [{ source: share, target: POD_SHARE_DIR }] } : {}),
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', ...launcherDaemonEnv(daemon), ...(opts.standalone === false ? {} : { STANDALONE_VMI: JSON.stringify(vmi) }) },
  });
  t.after(() => container.stop({ graceMs: 5_000 }).then(() => undefined));
  let out = '';
  container.stdout.on('data', (c: Buffer) => (out += c.toString()));
  container.stderr.on('data', (c: Buffer) => (out += c.toString()));
  const socketPath = join(share, 'sockets', 'launcher-sock');
  await eventually(() => readFile(socketPath).then(() => true, (e: NodeJS.ErrnoException) => e.code === 'ENXIO'), { what: 'launcher-sock', deadlineMs: 30_000, detail: () => `launcher output:\n${out}` });
  const client = new cmd.CmdClient(`unix:${socketPath}`, grpc.credentials.createInsecure());
  t.after(() => client.close());
  const calls = cmdCalls(client);
  const logs = (): Record<string, unknown>[] =>
    out.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
  return { container, client, cmd: calls, dir, socketPath, serialLog: join(dir, 'private', UID, 'virt-serial0-log'), vmi, guest, daemon, logs };
}

/** Waits for the guest's ready marker (from byte `from`), with the serial log in the error. */
export function waitForReady(run: LauncherRun, from = 0): Promise<{ line: string; end: number }> {
  return waitForConsoleText(run.serialLog, run.guest.readyMarker, { timeoutMs: 60_000, from });
}

export function vmiRequest(run: LauncherRun): cmd.VmiRequest {
  return { vmiJson: Buffer.from(JSON.stringify(run.vmi)) };
}

export type CmdCalls = PromiseMethods<typeof cmd.CmdService>;

/** The one promise client of @podvirt/proto, as the handler uses it; failures stay grpc ServiceErrors. */
export function cmdCalls(client: cmd.CmdClient, timeoutMs = 20_000): CmdCalls {
  return promiseClient(cmd.CmdService, client, { timeoutMs });
}

/** Collects every WatchDomain event until the launcher ends the stream. */
export function collectWatch(run: { readonly client: cmd.CmdClient }): { events: cmd.WatchDomainEvent[]; ended: Promise<void> } {
  const events: cmd.WatchDomainEvent[] = [];
  const stream = run.client.watchDomain({});
  const ended = new Promise<void>((resolve) => {
    stream.on('data', (ev: cmd.WatchDomainEvent) => events.push(ev));
    stream.on('end', () => resolve());
    stream.on('error', () => resolve());
  });
  return { events, ended };
}

export function domains(events: readonly cmd.WatchDomainEvent[]): cmd.Domain[] {
  return events.flatMap((e) => (e.event?.$case === 'domain' ? [e.event.value] : []));
}

/**
 * What a container of the launcher left behind: processes in its mount namespace, mounts of
 * its directory, and any qemu started from that directory. Empty when it all went away.
 */
export async function containerLeftovers(mountNamespace: string, dir: string): Promise<string[]> {
  const left: string[] = [];
  const members = await processesInMountNamespace(mountNamespace);
  if (members.length > 0) left.push(`processes in the namespace: ${members.join(', ')}`);
  if ((await readFile('/proc/self/mountinfo', 'utf8')).includes(dir)) left.push('mounts');
  for (const pid of (await readdir('/proc')).filter((n) => /^\d+$/.test(n))) {
    const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.includes('qemu-system') && cmdline.includes(dir)) left.push(`qemu ${pid}`);
  }
  return left;
}

/** The libvirt driver modules (`libvirt_driver_<name>.so`) the launcher's daemon has loaded. */
export async function daemonDriverModules(run: LauncherRun): Promise<string[]> {
  for (const pid of await processesInMountNamespace(run.container.mountNamespace)) {
    const comm = (await readFile(`/proc/${pid}/comm`, 'utf8').catch(() => '')).trim();
    if (comm !== 'libvirtd' && comm !== 'virtqemud') continue;
    const maps = await readFile(`/proc/${pid}/maps`, 'utf8');
    return [...new Set([...maps.matchAll(/libvirt_driver_(\w+)\.so/g)].map((m) => m[1] ?? ''))].sort();
  }
  throw new Error('no libvirt daemon in the launcher\'s container');
}

/** Nothing of the launcher is left: no process in its namespace, no socket, no mount, no qemu of this VMI. */
export async function assertNothingLeft(run: LauncherRun): Promise<string[]> {
  const left = await containerLeftovers(run.container.mountNamespace, run.dir);
  if (await readFile(run.socketPath).then(() => true, (e: NodeJS.ErrnoException) => e.code !== 'ENOENT')) left.push('launcher socket');
  return left;
}
