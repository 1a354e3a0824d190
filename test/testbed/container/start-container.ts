import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdir, open, readFile } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import type { Readable, Duplex } from 'node:stream';
import { ContainerError } from './container-error.js';
import { writeContainerAccounts } from './container-accounts.js';
import { containerStatePaths } from './container-state-paths.js';
import type { BindMount } from './container-state-paths.js';
import { killNamespaceProcesses } from './kill-namespace-processes.js';
import { MemoryCgroup } from './memory-cgroup.js';
import { mountNamespaceOf } from './mount-namespace.js';
import { deviceArgs, PRIVATE_DEV_SETUP, type DeviceNode } from './private-dev.js';

export interface ContainerOptions {
  /** argv of the container's main process, looked up on PATH. */
  readonly command: readonly string[];
  /** Backs the private /etc/libvirt, /run/libvirt, … and /etc/passwd, /etc/group. */
  readonly stateDir: string;
  /** Extra bind mounts, made after the libvirt ones (so they may mount inside them). */
  readonly binds?: readonly BindMount[];
  /** Own PID namespace with a fresh /proc: the command is PID 1 there, as in a pod. */
  readonly pidNamespace?: boolean;
  /** Join this network namespace (a pod sandbox's, e.g. /run/netns/<name>) instead of the host's. */
  readonly netnsPath?: string;
  readonly env?: Readonly<Record<string, string>>;
  readonly cwd?: string;
  /** Aborting stops the container (grace `abortGraceMs`, default 5 s). */
  readonly signal?: AbortSignal;
  readonly abortGraceMs?: number;
  /** Bound on the namespace set-up (default 10 s). */
  readonly startTimeoutMs?: number;
  /** Grace for processes left in the namespace once the main one has exited (default 1 s). */
  readonly leftoverGraceMs?: number;
  /** Run every process of the container under this memory limit (a memory cgroup of its own). */
  readonly memory?: { readonly cgroupName: string; readonly limitBytes: number };
  /** A private /dev holding the standard nodes and exactly these (see private-dev.ts); unset: the host's /dev. */
  readonly devices?: readonly DeviceNode[];
}

export interface ContainerExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** The kernel's OOM killer killed a process of the container (only with `memory`). */
  readonly oomKilled?: boolean;
}

/**
 * A running container. Read (or drain) `stdout` and `stderr`: a full pipe blocks the command.
 * `exited` resolves once the main process has exited AND nothing is left in the namespace.
 */
export interface Container {
  /** The runtime's id for it, when it has one (the image runtime's container id). */
  readonly id?: string;
  /** Host pid of the command (PID 1 inside when `pidNamespace`). */
  readonly pid: number;
  /** `mnt:[<inode>]`, the container's mount namespace as /proc/<pid>/ns/mnt shows it. */
  readonly mountNamespace: string;
  readonly stdout: Readable;
  readonly stderr: Readable;
  readonly exited: Promise<ContainerExit>;
  kill(signal?: NodeJS.Signals): void;
  /** SIGTERM, SIGKILL after `graceMs` (default 10 s), then clear the namespace. Idempotent. */
  stop(opts?: { graceMs?: number }): Promise<ContainerExit>;
}

// Runs in the new mount namespace, before the command: bind mounts, then a handshake on
// fd 3 ("ready" out, one line in) so the host can pin the namespace before anything can
// exit. Set-up errors go to fd 3 too, so they reach the start error, not the caller's stderr.
// In a new PID namespace the first fork becomes its PID 1, so there everything (even the
// mkdir and mount commands) runs in that first child.
// With a PID namespace, unshare's own --fork loses the exit signal of PID 1 (util-linux 2.38
// exits 1 with "sigprocmask unblock failed"), so this shell forks PID 1 itself and re-raises
// its signal; `set -m` keeps SIGINT/SIGQUIT from being ignored in the background child, and
// `set +m` right after stops bash from printing a job-control "Done" line into the logs.
const SETUP = `set -e
exec 4>&2 2>&3
${PRIVATE_DEV_SETUP}
pidns=$1 privdev=$2 ndev=$3; shift 3
start() {
  if [ "$pidns" = 1 ]; then mount -t proc proc /proc; fi
  if [ "$privdev" = 1 ]; then private_dev; fi
  while [ "$ndev" -gt 0 ]; do
    mkdir -p "$(dirname "$1")"; mknod -m "$5" "$1" "$2" "$3" "$4"; shift 5; ndev=$((ndev - 1))
  done
  n=$1; shift
  while [ "$n" -gt 0 ]; do
    src=$1; tgt=$2; ro=$3; shift 3; n=$((n - 1))
    if [ -d "$src" ]; then mkdir -p "$tgt"
    elif [ ! -e "$tgt" ]; then mkdir -p "$(dirname "$tgt")"; : >"$tgt"; fi
    mount --bind "$src" "$tgt"
    if [ "$ro" = ro ]; then mount -o remount,bind,ro "$tgt"; fi
  done
  echo ready >&3
  read -r _ <&3
  exec 2>&4 4>&- 3>&-
  exec "$@"
}
if [ "$pidns" = 0 ]; then start "$@"; fi
set -m
start "$@" &
child=$!
set +m
exec 2>&4 4>&- 3>&-
trap 'kill -KILL "$child" 2>/dev/null' TERM INT HUP
set +e
while :; do wait "$child"; rc=$?; kill -0 "$child" 2>/dev/null || break; done
if [ "$rc" -gt 128 ]; then trap - TERM INT HUP; kill -n "$((rc - 128))" "$$"; fi
exit "$rc"
`;

function unshareArgs(opts: ContainerOptions, binds: readonly BindMount[]): string[] {
  const pidns = opts.pidNamespace === true;
  const bindArgs = binds.flatMap((b) => [b.source, b.target, b.readOnly === true ? 'ro' : 'rw']);
  const devices = opts.devices ?? [];
  // Private, unless a bind asks for HostToContainer: then every mount is a slave of the host's
  // (a host mount that is private stays so; the kubelet made the bind's source shared), so host
  // mounts reach the container and none of the container's reaches the host.
  const propagation = binds.some((b) => b.hostToContainer === true) ? 'slave' : 'private';
  return ['--mount', '--propagation', propagation, ...(pidns ? ['--pid'] : []), '/bin/bash', '-c', SETUP,
    'podvirt-container', pidns ? '1' : '0', opts.devices === undefined ? '0' : '1', String(devices.length), ...deviceArgs(devices),
    String(binds.length), ...bindArgs, ...opts.command];
}

/** Waits for the set-up handshake; resolves with whatever the set-up printed before it. */
function handshake(child: ChildProcess, control: Duplex, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let text = '';
    const done = (err?: Error): void => {
      clearTimeout(timer);
      control.off('data', onData);
      child.off('exit', onExit);
      child.off('error', onError);
      if (err) reject(err);
      else resolve();
    };
    const onData = (chunk: Buffer): void => {
      text += chunk.toString();
      if (/^ready$/m.test(text)) done();
    };
    const onExit = (code: number | null, signal: NodeJS.Signals | null): void => {
      const stderr = (child.stderr?.read() as Buffer | null)?.toString() ?? '';
      const why = `${text}${stderr}`.trim();
      done(new ContainerError('PODVIRT_CONTAINER_START_FAILED',
        `container set-up exited (code ${String(code)}, signal ${String(signal)}): ${why}`));
    };
    const onError = (err: Error): void => {
      done(new ContainerError('PODVIRT_CONTAINER_START_FAILED', `cannot run unshare: ${err.message}`, { cause: err }));
    };
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      done(new ContainerError('PODVIRT_CONTAINER_START_TIMEOUT', `container set-up took over ${timeoutMs} ms: ${text}`));
    }, timeoutMs);
    control.on('data', onData);
    child.once('exit', onExit);
    child.once('error', onError);
  });
}

/** The set-up shell's only child is the namespace's PID 1 (the command after exec). */
async function namespaceInitPid(shellPid: number): Promise<number> {
  const children = await readFile(`/proc/${shellPid}/task/${shellPid}/children`, 'utf8');
  const pid = Number(children.trim().split(/\s+/)[0]);
  if (!Number.isInteger(pid) || pid <= 0) {
    throw new ContainerError('PODVIRT_CONTAINER_START_FAILED', `set-up shell ${shellPid} has no child`);
  }
  return pid;
}

/**
 * Runs `command` in its own mount namespace (optionally its own PID namespace) with private
 * libvirt directories and account files, the way a pod's container sees its image. Mounts
 * live only in that namespace, so they vanish with its last process; stopping kills every
 * process still in the namespace.
 */
export async function startContainer(opts: ContainerOptions): Promise<Container> {
  opts.signal?.throwIfAborted();
  const paths = containerStatePaths(opts.stateDir);
  await Promise.all(
    [paths.etcLibvirt, paths.runLibvirt, paths.varLibLibvirt, paths.varLogLibvirt, paths.varCacheLibvirt]
      .map((d) => mkdir(d, { recursive: true })),
  );
  await writeContainerAccounts(paths);

  // nsenter without a PID namespace execs unshare in place, so `child` stays the set-up shell.
  const argv = ['unshare', ...unshareArgs(opts, [...paths.binds, ...(opts.binds ?? [])])];
  if (opts.netnsPath !== undefined) argv.unshift('nsenter', `--net=${opts.netnsPath}`, '--');
  const child = spawn(argv[0] ?? 'unshare', argv.slice(1), {
    stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
    ...(opts.env === undefined ? {} : { env: { ...opts.env } }),
    ...(opts.cwd === undefined ? {} : { cwd: opts.cwd }),
  });
  const rawExit = new Promise<ContainerExit>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  const control = child.stdio[3] as Duplex;
  // The set-up may be killed with our "go" unread (ECONNRESET): nothing to act on.
  control.on('error', () => undefined);
  let nsHandle: FileHandle | undefined;
  let pid: number;
  let ns: string | undefined;
  let cgroup: MemoryCgroup | undefined;
  try {
    await handshake(child, control, opts.startTimeoutMs ?? 10_000);
    pid = opts.pidNamespace === true ? await namespaceInitPid(child.pid ?? 0) : (child.pid ?? 0);
    // Before "go": the command and everything it forks start inside the limit.
    if (opts.memory !== undefined) {
      cgroup = await MemoryCgroup.create(opts.memory.cgroupName, opts.memory.limitBytes);
      await cgroup.add(pid);
    }
    ns = await mountNamespaceOf(pid);
    // Holding the namespace open keeps its inode number from being reused by someone
    // else's namespace while we look for our leftovers.
    nsHandle = await open(`/proc/${pid}/ns/mnt`, 'r');
    if (ns === undefined || ns !== (await mountNamespaceOf(pid))) throw new Error(`pid ${pid} changed`);
    control.end('go\n');
  } catch (err) {
    // PID 1 (if forked yet) sits in `read` on fd 3: closing it ends the set-up there too.
    control.destroy();
    child.kill('SIGKILL');
    await rawExit;
    await nsHandle?.close();
    await cgroup?.remove().catch(() => undefined);
    throw err instanceof ContainerError
      ? err
      : new ContainerError('PODVIRT_CONTAINER_START_FAILED', `container set-up failed: ${String(err)}`, { cause: err });
  }
  control.resume();
  void rawExit.then(() => control.destroy());
  const mountNamespace = ns;
  const handle = nsHandle;
  const group = cgroup;

  let leftoverError: unknown;
  const exited = rawExit.then(async (exit): Promise<ContainerExit> => {
    let oomKilled: boolean | undefined;
    try {
      await killNamespaceProcesses(mountNamespace, { graceMs: opts.leftoverGraceMs ?? 1000, timeoutMs: 5000 });
      if (group !== undefined) {
        oomKilled = (await group.oomKills()) > 0;
        await group.remove();
      }
    } catch (err) {
      leftoverError = err;
    } finally {
      await handle.close();
      opts.signal?.removeEventListener('abort', onAbort);
    }
    return oomKilled === undefined ? exit : { ...exit, oomKilled };
  });

  let exitedYet = false;
  void exited.then(() => {
    exitedYet = true;
  });
  const kill = (signal: NodeJS.Signals = 'SIGTERM'): void => {
    if (exitedYet) return;
    try {
      process.kill(pid, signal);
    } catch {
      // Exited meanwhile; `exited` reports it.
    }
  };
  let stopping: Promise<ContainerExit> | undefined;
  const stop = (stopOpts?: { graceMs?: number }): Promise<ContainerExit> => {
    stopping ??= (async () => {
      kill('SIGTERM');
      const timer = setTimeout(() => kill('SIGKILL'), stopOpts?.graceMs ?? 10_000);
      try {
        const exit = await exited;
        if (leftoverError !== undefined) throw leftoverError;
        return exit;
      } finally {
        clearTimeout(timer);
      }
    })();
    return stopping;
  };
  function onAbort(): void {
    stop({ graceMs: opts.abortGraceMs ?? 5000 }).catch(() => undefined);
  }
  if (opts.signal?.aborted === true) onAbort();
  else opts.signal?.addEventListener('abort', onAbort, { once: true });

  return {
    pid,
    mountNamespace,
    stdout: child.stdout as Readable,
    stderr: child.stderr as Readable,
    exited,
    kill,
    stop,
  };
}
