import { LauncherError } from '../errors.js';

/** Which libvirt daemon runs the domain: the modular virtqemud (as KubeVirt's launcher), or Debian's monolithic libvirtd when told. */
export interface DaemonKind {
  readonly binary: string;
  readonly configName: 'virtqemud.conf' | 'libvirtd.conf';
  readonly socketName: 'virtqemud-sock' | 'libvirt-sock';
  readonly pidName: string;
}

export const VIRTQEMUD: DaemonKind = { binary: '/usr/sbin/virtqemud', configName: 'virtqemud.conf', socketName: 'virtqemud-sock', pidName: 'virtqemud.pid' };
export const LIBVIRTD: DaemonKind = { binary: '/usr/sbin/libvirtd', configName: 'libvirtd.conf', socketName: 'libvirt-sock', pidName: 'libvirtd.pid' };

/** What env PODVIRT_LIBVIRT_DAEMON asks for: virtqemud (the default) or the libvirtd fallback. */
export type DaemonChoice = 'virtqemud' | 'libvirtd';

/**
 * The launcher runs virtqemud: the one env PODVIRT_VIRTQEMUD names (podvirt builds it from
 * Debian's own libvirt source, tools/build-virtqemud, since Debian 12 ships only libvirtd), else
 * /usr/sbin/virtqemud. Debian's libvirtd runs only when PODVIRT_LIBVIRT_DAEMON=libvirtd asks for
 * it: a missing virtqemud fails the start, it is never silently replaced.
 */
export function pickDaemon(exists: (path: string) => boolean, choice: DaemonChoice = 'virtqemud', virtqemud?: string): DaemonKind {
  if (choice === 'libvirtd') {
    if (exists(LIBVIRTD.binary)) return LIBVIRTD;
    throw new LauncherError('LAUNCHER_ERR_DAEMON', `PODVIRT_LIBVIRT_DAEMON=libvirtd, but ${LIBVIRTD.binary} does not exist`);
  }
  if (virtqemud !== undefined && virtqemud !== '') {
    if (!exists(virtqemud)) throw new LauncherError('LAUNCHER_ERR_DAEMON', `PODVIRT_VIRTQEMUD names ${virtqemud}, which does not exist`);
    return { ...VIRTQEMUD, binary: virtqemud };
  }
  if (exists(VIRTQEMUD.binary)) return VIRTQEMUD;
  throw new LauncherError('LAUNCHER_ERR_DAEMON', `no virtqemud: ${VIRTQEMUD.binary} does not exist and PODVIRT_VIRTQEMUD names none `
    + '(tools/build-virtqemud builds one; PODVIRT_LIBVIRT_DAEMON=libvirtd runs libvirtd instead)');
}

/** env PODVIRT_LIBVIRT_DAEMON: unset or empty is virtqemud; anything but the two names is refused. */
export function parseDaemonChoice(value: string | undefined): DaemonChoice {
  if (value === undefined || value === '' || value === 'virtqemud') return 'virtqemud';
  if (value === 'libvirtd') return 'libvirtd';
  throw new LauncherError('LAUNCHER_ERR_DAEMON', `PODVIRT_LIBVIRT_DAEMON=${JSON.stringify(value)}: expected virtqemud (the default) or libvirtd`);
}

/** Where distributions install libvirt's driver modules (Debian's multiarch path first). */
export const DRIVER_MODULE_DIRS: readonly string[] = [
  '/usr/lib/x86_64-linux-gnu/libvirt/connection-driver',
  '/usr/lib/aarch64-linux-gnu/libvirt/connection-driver',
  '/usr/lib64/libvirt/connection-driver',
  '/usr/lib/libvirt/connection-driver',
];
export const QEMU_DRIVER_MODULE = 'libvirt_driver_qemu.so';

/**
 * The monolithic libvirtd (the fallback) loads every driver module it finds (network, storage, node devices,
 * nwfilter, interface, secret), and each one starts up: node devices enumerate udev, network and
 * nwfilter probe the firewall. A launcher needs the QEMU driver alone — virtqemud, which KubeVirt
 * runs, has nothing else — so libvirtd is pointed (LIBVIRT_DRIVER_DIR) at a directory holding
 * only that module. Undefined when the module is not found: libvirtd then loads what it has.
 */
export function qemuOnlyDriverModule(exists: (path: string) => boolean): string | undefined {
  for (const dir of DRIVER_MODULE_DIRS) {
    const module = `${dir}/${QEMU_DRIVER_MODULE}`;
    if (exists(module)) return module;
  }
  return undefined;
}

/**
 * The daemon's own config: only the unix socket (no TCP/TLS listeners), reachable by its
 * owner only, no authentication inside the container, logs on stderr for re-emission.
 */
export function daemonConf(kind: DaemonKind, runDir: string, logLevel: 1 | 2 | 3 | 4): string {
  const lines = [
    `unix_sock_dir = "${runDir}"`,
    'unix_sock_rw_perms = "0700"',
    'unix_sock_ro_perms = "0700"',
    'auth_unix_ro = "none"',
    'auth_unix_rw = "none"',
    `log_outputs = "${logLevel}:stderr"`,
  ];
  if (kind === LIBVIRTD) lines.push('listen_tls = 0', 'listen_tcp = 0');
  return `${lines.join('\n')}\n`;
}

/**
 * The daemon's environment beside the launcher's: one glibc malloc arena. glibc gives each
 * thread that allocates an arena of its own (up to 8 per core), and each keeps the pages it
 * touched; libvirt's RPC and driver threads allocate little and rarely at once. qemu does not
 * inherit it: libvirt starts qemu with an environment of its own.
 */
export const DAEMON_ENV: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: '1' };

/**
 * qemu.conf for a daemon inside the launcher's container: the pod already provides cgroups and
 * namespaces (and there is no systemd to place cgroups), no security driver relabels files,
 * and `stdio_handler = "file"` writes qemu's output to /var/log/libvirt/qemu/<dom>.log itself,
 * so no virtlogd has to run.
 */
export function qemuConf(): string {
  return [
    'stdio_handler = "file"',
    'user = "root"',
    'group = "root"',
    'dynamic_ownership = 0',
    'remember_owner = 0',
    'security_driver = "none"',
    'namespaces = [ ]',
    'cgroup_controllers = [ ]',
    'vnc_listen = "127.0.0.1"',
    '',
  ].join('\n');
}
