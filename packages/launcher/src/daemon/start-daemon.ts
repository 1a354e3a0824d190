import { existsSync } from 'node:fs';
import { mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { seedCapsCache } from './caps-cache.js';
import { DAEMON_ENV, daemonConf, LIBVIRTD, pickDaemon, qemuConf, qemuOnlyDriverModule, QEMU_DRIVER_MODULE, type DaemonChoice, type DaemonKind } from './daemon-config.js';
import { DaemonSupervisor } from './daemon-supervisor.js';

/** The fixed paths a privileged libvirt daemon uses; private to the launcher's container. */
export interface LibvirtDirs {
  readonly etc: string;
  readonly run: string;
  readonly cache: string;
  readonly log: string;
  /** libvirt's state (qemu monitor and agent sockets live under `<lib>/qemu`). */
  readonly lib: string;
}

export const DEFAULT_LIBVIRT_DIRS: LibvirtDirs = {
  etc: '/etc/libvirt', run: '/run/libvirt', cache: '/var/cache/libvirt', log: '/var/log/libvirt', lib: '/var/lib/libvirt',
};

export interface StartedDaemon {
  readonly kind: DaemonKind;
  readonly supervisor: DaemonSupervisor;
  readonly socketPath: string;
}

/**
 * Writes the daemon's configs into the container's private /etc/libvirt, seeds the QEMU
 * capabilities cache, and starts the supervised daemon. On failure the daemon is stopped.
 */
export async function startDaemon(dirs: LibvirtDirs, capsCacheDir: string | undefined, log: Logger, signal: AbortSignal, choice: DaemonChoice = 'virtqemud', virtqemud?: string): Promise<StartedDaemon> {
  const kind = pickDaemon(existsSync, choice, virtqemud);
  await mkdir(dirs.etc, { recursive: true });
  await writeFile(join(dirs.etc, kind.configName), daemonConf(kind, dirs.run, 3));
  await writeFile(join(dirs.etc, 'qemu.conf'), qemuConf());
  const seeded = await seedCapsCache(capsCacheDir, join(dirs.cache, 'qemu', 'capabilities'));
  const drivers = kind === LIBVIRTD ? await qemuOnlyDriverDir(join(dirs.run, 'connection-driver')) : undefined;
  const socketPath = join(dirs.run, kind.socketName);
  const supervisor = new DaemonSupervisor({
    command: kind.binary,
    args: ['-f', join(dirs.etc, kind.configName), '-p', join(dirs.run, kind.pidName)],
    env: drivers === undefined ? DAEMON_ENV : { ...DAEMON_ENV, LIBVIRT_DRIVER_DIR: drivers },
    socketPath,
    log,
  });
  try {
    await supervisor.start(signal);
  } catch (err) {
    await supervisor.close();
    throw err;
  }
  log.info({ binary: kind.binary, pid: supervisor.pid, capsSeeded: seeded }, 'libvirt daemon started');
  return { kind, supervisor, socketPath };
}

/** A directory with a link to the QEMU driver module alone (see qemuOnlyDriverModule); undefined without one. */
async function qemuOnlyDriverDir(dir: string): Promise<string | undefined> {
  const module = qemuOnlyDriverModule(existsSync);
  if (module === undefined) return undefined;
  await mkdir(dir, { recursive: true });
  await rm(join(dir, QEMU_DRIVER_MODULE), { force: true });
  await symlink(module, join(dir, QEMU_DRIVER_MODULE));
  return dir;
}
