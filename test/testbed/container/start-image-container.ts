// A container started from a real image through podman and runc, inside a pod sandbox the
// kubelet made: it joins the sandbox's network namespace (`--network ns:<path>`), gets its own
// PID and mount namespaces from runc, its memory limit from the cgroup runc makes, and its
// output is written by conmon straight into the kubelet's CRI-format log file (podman's
// k8s-file log driver is that format), as a CRI runtime does. podman is daemonless: each
// container's conmon keeps it running even if the kubelet goes away.

import { readdir, readlink, rmdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import { spawn } from 'node:child_process';
import { setTimeout as delay } from 'node:timers/promises';
import type { BindMount } from './container-state-paths.js';
import { ContainerError } from './container-error.js';
import { MemoryCgroup, TESTBED_CGROUP_PARENT } from './memory-cgroup.js';
import { podman } from './podman.js';
import type { Container, ContainerExit } from './start-container.js';

/** Every testbed container's cgroup sits under this one (as the process runtime's do). */
export const IMAGE_CGROUP_PARENT = `/${TESTBED_CGROUP_PARENT}`;
const CGROUP_ROOT = '/sys/fs/cgroup';
/** Label naming the kubelet root a container belongs to, so leftovers can be found. */
export const KUBELET_ROOT_LABEL = 'podvirt.testbed.kubelet-root';

export interface ImageContainerOptions {
  /** podman's name for it (unique per run of a container). */
  readonly name: string;
  readonly image: string;
  /** The whole argv: its first word replaces the image's ENTRYPOINT, the rest its CMD. */
  readonly command: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly binds: readonly BindMount[];
  readonly cwd?: string;
  /** The sandbox's network namespace; none: the host's (hostNetwork). */
  readonly netnsPath?: string;
  readonly hostname?: string;
  /** The pod's IP: /etc/hosts maps the hostname to it, as the kubelet's managed hosts file does. */
  readonly podIP?: string;
  readonly memoryLimitBytes?: number;
  /** podman flags for the security context (see kubelet/security-context.ts). */
  readonly securityArgs: readonly string[];
  /** The kubelet's log file for this container (CRI format). */
  readonly logPath: string;
  readonly labels: Readonly<Record<string, string>>;
}

function createArgs(o: ImageContainerOptions, parent: string): string[] {
  const [entrypoint, ...rest] = o.command;
  if (entrypoint === undefined) throw new ContainerError('PODVIRT_CONTAINER_START_FAILED', 'no command specified: the image has no ENTRYPOINT or CMD and the container no command');
  return [
    'create', '--replace', '--name', o.name, '--pull', 'never',
    '--log-driver', 'k8s-file', '--log-opt', `path=${o.logPath}`,
    '--network', o.netnsPath === undefined ? 'host' : `ns:${o.netnsPath}`,
    // libvirt resolves the hostname when it starts a domain; unresolvable, that waits ~20 s
    // on a DNS server the testbed cannot reach.
    ...(o.hostname === undefined || o.netnsPath === undefined ? [] : ['--hostname', o.hostname]),
    ...(o.hostname === undefined || o.podIP === undefined || o.netnsPath === undefined ? [] : ['--add-host', `${o.hostname}:${o.podIP}`]),
    '--cgroup-parent', parent,
    ...Object.entries(o.labels).flatMap(([k, v]) => ['--label', `${k}=${v}`]),
    ...o.securityArgs,
    ...Object.entries(o.env).flatMap(([k, v]) => ['--env', `${k}=${v}`]),
    ...o.binds.flatMap((b) => ['--volume', `${b.source}:${b.target}:${b.readOnly === true ? 'ro' : 'rw'}${b.hostToContainer === true ? ',rslave' : ''}`]),
    ...(o.cwd === undefined ? [] : ['--workdir', o.cwd]),
    '--entrypoint', JSON.stringify([entrypoint]),
    o.image,
    ...rest,
  ];
}

/** `podman wait` prints the exit code once the container has stopped. */
function waitOnce(id: string): Promise<void> {
  return new Promise((resolve) => {
    const child = spawn('podman', ['wait', id], { stdio: 'ignore' });
    child.once('error', () => resolve());
    child.once('exit', () => resolve());
  });
}

/** Between two `podman wait`s on a container that still runs: no spawn storm if podman keeps failing. */
const REWAIT_DELAY_MS = 1_000;
const LIVE_STATES = new Set(['running', 'paused', 'stopping']);

/**
 * Resolves once the container has stopped. podman has no daemon to restart: what the kubelet
 * holds of a running container is its `podman wait` process, while conmon keeps the container
 * itself. When that process ends but the container still runs (it was killed, or podman was
 * upgraded under it), the kubelet waits again instead of taking the container for exited.
 */
async function waitFor(id: string): Promise<void> {
  for (;;) {
    await waitOnce(id);
    const state = (await podman(['inspect', '--format', '{{.State.Status}}', id]).catch(() => '')).trim();
    if (!LIVE_STATES.has(state)) return;
    await delay(REWAIT_DELAY_MS);
  }
}

/**
 * runc and podman made `parent`, its `conmon` and the container's `libpod-<id>` group in every
 * cgroup v1 hierarchy (cgroupfs) and do not always remove them: remove what is left, children first.
 */
async function removeGroups(parent: string, id: string): Promise<void> {
  const hierarchies = await readdir(CGROUP_ROOT).catch(() => [] as string[]);
  await Promise.all(hierarchies.map(async (h) => {
    for (const dir of [...(id === '' ? [] : [`${parent}/libpod-${id}`]), `${parent}/conmon`, parent]) {
      await rmdir(join(CGROUP_ROOT, h, dir)).catch(() => undefined);
    }
  }));
}

function emptyStream(): Readable {
  return Readable.from([]);
}

/**
 * Creates and starts the container. A container that cannot be created, or whose process
 * cannot be started (its entrypoint missing), rejects with podman's message and is removed:
 * code PODVIRT_CONTAINER_START_FAILED for the first, PODVIRT_CONTAINER_EXEC_FAILED for the
 * second (the kubelet's StartError).
 */
export async function startImageContainer(o: ImageContainerOptions): Promise<Container> {
  // Each run has a group of its own that runc nests the container's cgroup in and podman puts
  // conmon in (as CRI-O does with conmon_cgroup "pod"), holding the memory limit: conmon
  // misses OOM kills on this hybrid cgroup host (podman says OOMKilled false), and runc removes
  // the container's own group, where the kernel counts the kill, before anyone can read it.
  const parent = `${IMAGE_CGROUP_PARENT}/${o.name}`;
  const cgroup = o.memoryLimitBytes === undefined ? undefined : await MemoryCgroup.create(o.name, o.memoryLimitBytes);
  let id = '';
  const dropGroups = async (): Promise<void> => {
    await removeGroups(parent, id);
    await cgroup?.remove().catch(() => undefined);
  };
  try {
    id = (await podman(createArgs(o, parent))).trim();
  } catch (err) {
    await dropGroups();
    throw err;
  }
  const remove = (): Promise<unknown> => podman(['rm', '--force', '--time', '0', id]).catch(() => undefined);
  try {
    // conmon, which `podman start` spawns, inherits its working directory and writes an `oom`
    // file there when the container is OOM-killed: start it in the container's log directory,
    // which goes with the pod.
    await podman(['start', id], 'PODVIRT_CONTAINER_EXEC_FAILED', undefined, dirname(o.logPath));
  } catch (err) {
    await remove();
    await dropGroups();
    throw err;
  }
  const pid = Number((await podman(['inspect', '--format', '{{.State.Pid}}', id]).catch(() => '0')).trim());
  const mountNamespace = pid > 0 ? await readlink(`/proc/${pid}/ns/mnt`).catch(() => '') : '';

  const exited = waitFor(id).then(async (): Promise<ContainerExit> => {
    const state = await podman(['inspect', '--format', '{{.State.ExitCode}} {{.State.OOMKilled}}', id]).catch(() => '');
    await remove();
    const [code, oom] = state.trim().split(' ');
    // The kill is counted in the container's own group, gone by now; the limit was ours. A
    // SIGKILLed container whose group reached its limit was killed by the OOM killer.
    const hitLimit = (await cgroup?.limitHits().catch(() => 0)) ?? 0;
    await dropGroups();
    return { code: code === undefined || code === '' ? null : Number(code), signal: null, oomKilled: oom === 'true' || (code === '137' && hitLimit > 0) };
  });
  let done = false;
  void exited.then(() => (done = true));
  const kill = (signal: NodeJS.Signals = 'SIGTERM'): void => {
    if (!done) void podman(['kill', '--signal', signal, id]).catch(() => undefined);
  };
  let stopping: Promise<ContainerExit> | undefined;
  const stop = (opts?: { graceMs?: number }): Promise<ContainerExit> => {
    // podman stop: the image's stop signal (SIGTERM), SIGKILL after the grace, in whole seconds.
    stopping ??= podman(['stop', '--time', String(Math.ceil((opts?.graceMs ?? 10_000) / 1000)), id], 'PODVIRT_CONTAINER_LEFTOVERS', 3_600_000)
      .catch(() => undefined)
      .then(() => exited);
    return stopping;
  };
  // conmon writes the output to the log file itself.
  return { id, pid, mountNamespace, stdout: emptyStream(), stderr: emptyStream(), exited, kill, stop };
}
