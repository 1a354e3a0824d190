import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { closeOnSignal } from '../close-on-signal.js';
import { containerStatePaths } from '../container/container-state-paths.js';
import { startContainer } from '../container/start-container.js';
import type { Container } from '../container/start-container.js';
import { repoRoot } from '../guest/repo-root.js';
import { restoreCapabilities, saveCapabilities } from './capabilities-cache.js';
import { libvirtDaemonConfig } from './libvirt-daemon-config.js';
import type { DaemonSettings, LibvirtDaemonKind } from './libvirt-daemon-config.js';
import { LibvirtDaemonError } from './libvirt-daemon-error.js';
import { waitForSocket } from './wait-for-socket.js';

export interface LibvirtDaemonOptions {
  /** Backs the daemon's /etc/libvirt, /run/libvirt, … (see `containerStatePaths`). */
  readonly stateDir: string;
  /** Aborting during start rejects and stops the daemon; afterwards it closes it. */
  readonly signal?: AbortSignal;
  /** Default: virtqemud when installed, else libvirtd. */
  readonly kind?: LibvirtDaemonKind;
  /** Shared QEMU capabilities cache; default `<repo>/.cache/libvirt-caps`. */
  readonly capsCacheDir?: string;
  /** Extra lines for libvirtd.conf / virtqemud.conf, e.g. `{ log_filters: '1:qemu' }`. */
  readonly settings?: DaemonSettings;
  /** Bound on the socket coming up (default 20 s). */
  readonly startTimeoutMs?: number;
}

export interface TestLibvirtDaemon {
  /** The daemon's socket as seen from the host. */
  readonly socketPath: string;
  /** `qemu+unix:///system?socket=…`, for virsh or a libvirt client. */
  readonly uri: string;
  /** Host pid of the daemon itself (its container's PID 1 is a small reaping init). */
  readonly pid: number;
  readonly kind: LibvirtDaemonKind;
  /** The daemon's container (own mount and PID namespaces; qemu runs in them too). */
  readonly container: Container;
  /** Everything the daemon wrote on stdout and stderr so far (the last 2 MiB). */
  logs(): string;
  /** Signals the daemon. Once it exits, its container ends and takes every qemu with it. */
  kill(signal?: NodeJS.Signals): void;
  /**
   * SIGTERM the daemon, then end every qemu left in its namespace and wait until they are
   * gone (bounded), save the capabilities cache, remove the socket. Idempotent.
   */
  close(): Promise<void>;
}

const LOG_LIMIT = 2 * 1024 * 1024;
// libvirtd exits 5–8 ms after SIGTERM; the margin covers a daemon stuck in capability probing.
const STOP_GRACE_MS = 5000;

// PID 1 of the daemon's container, as the launcher monitor is in a pod. libvirt double-forks
// qemu, which is then reparented here; bash reaps any child while it waits, so libvirt sees
// qemu gone at once (destroy ~0.2 s) instead of after the host init's 1.2–1.8 s reaping lag.
// When the daemon exits, so does this init, and the kernel ends the rest of the namespace.
const INIT = `"$@" &
daemon=$!
trap 'kill -TERM "$daemon" 2>/dev/null' TERM INT
trap 'kill -HUP "$daemon" 2>/dev/null' HUP
while :; do wait "$daemon"; rc=$?; kill -0 "$daemon" 2>/dev/null || break; done
exit "$rc"
`;

/** Host pid of the init's child called `comm` (qemu probes are its children as well). */
async function childNamed(parent: number, comm: string): Promise<number | undefined> {
  const children = await readFile(`/proc/${parent}/task/${parent}/children`, 'utf8').catch(() => '');
  for (const pid of children.trim().split(/\s+/).filter(Boolean).map(Number)) {
    const name = await readFile(`/proc/${pid}/comm`, 'utf8').catch(() => '');
    if (name.trim() === comm) return pid;
  }
  return undefined;
}

function defaultKind(): LibvirtDaemonKind {
  return existsSync('/usr/sbin/virtqemud') ? 'virtqemud' : 'libvirtd';
}

/**
 * Runs a private libvirt daemon in its own container (mount namespace), the way a launcher
 * pod runs one per VM, and resolves once its socket accepts connections.
 */
export async function startLibvirtDaemon(opts: LibvirtDaemonOptions): Promise<TestLibvirtDaemon> {
  opts.signal?.throwIfAborted();
  const kind = opts.kind ?? defaultKind();
  const config = libvirtDaemonConfig(kind, opts.settings);
  const paths = containerStatePaths(opts.stateDir);
  const capsDir = join(paths.varCacheLibvirt, 'qemu', 'capabilities');
  const sharedCaps = opts.capsCacheDir ?? join(repoRoot(), '.cache', 'libvirt-caps');
  const socketPath = join(paths.runLibvirt, config.socketName);

  // Another daemon on this state dir would answer on "our" socket and hide our failure.
  if (await waitForSocket(socketPath, 0, () => true)) {
    throw new LibvirtDaemonError('PODVIRT_LIBVIRTD_START_FAILED', `a daemon already listens on ${socketPath}`);
  }
  await mkdir(paths.etcLibvirt, { recursive: true });
  await Promise.all(Object.entries(config.files).map(([name, text]) => writeFile(join(paths.etcLibvirt, name), text)));
  await restoreCapabilities(sharedCaps, capsDir);

  const container = await startContainer({
    stateDir: opts.stateDir,
    pidNamespace: true,
    command: ['bash', '-c', INIT, 'podvirt-libvirt-init', ...config.argv],
  }).catch((err: unknown) => {
    throw new LibvirtDaemonError('PODVIRT_LIBVIRTD_START_FAILED', `cannot start ${kind}`, { cause: err });
  });
  let log = '';
  const append = (chunk: Buffer): void => {
    log += chunk.toString();
    if (log.length > LOG_LIMIT) log = log.slice(-LOG_LIMIT);
  };
  container.stdout.on('data', append);
  container.stderr.on('data', append);

  let started = false;
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      forget();
      try {
        await container.stop({ graceMs: STOP_GRACE_MS });
      } finally {
        await saveCapabilities(capsDir, sharedCaps).catch(() => 0);
        // A killed daemon leaves its sockets behind. Only ours: a daemon that never came up
        // may have lost to another one on the same state dir.
        if (started) await Promise.all(
          ['libvirt-sock', 'libvirt-sock-ro', 'libvirt-admin-sock', 'virtqemud-sock', 'virtqemud-sock-ro', 'virtqemud-admin-sock']
            .map((s) => rm(join(paths.runLibvirt, s), { force: true })),
        );
      }
    })();
    return closing;
  };
  const forget = closeOnSignal(close);
  const onAbort = (): void => void close().catch(() => undefined);
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  void container.exited.then(() => opts.signal?.removeEventListener('abort', onAbort));

  let exited = false;
  void container.exited.then(() => {
    exited = true;
  });
  const timeoutMs = opts.startTimeoutMs ?? 20_000;
  const up = await waitForSocket(socketPath, timeoutMs, () => exited || opts.signal?.aborted === true);
  const pid = up ? await childNamed(container.pid, kind) : undefined;
  if (pid === undefined) {
    await close().catch(() => undefined);
    opts.signal?.throwIfAborted();
    const why = exited ? 'exited' : up ? 'is not a child of its init' : `did not accept connections within ${timeoutMs} ms`;
    throw new LibvirtDaemonError(
      exited ? 'PODVIRT_LIBVIRTD_START_FAILED' : 'PODVIRT_LIBVIRTD_START_TIMEOUT',
      `${kind} ${why}; its output:\n${log}`,
    );
  }
  started = true;
  return {
    socketPath,
    uri: `qemu+unix:///system?socket=${socketPath}`,
    pid,
    kind,
    container,
    logs: () => log,
    kill: (signal = 'SIGTERM') => {
      if (exited) return;
      try {
        process.kill(pid, signal);
      } catch {
        // Already gone; `container.exited` reports it.
      }
    },
    close,
  };
}
