import { LauncherError } from '../errors.js';

/** Which libvirt daemon runs the domain: the modular virtqemud where installed, else the monolithic libvirtd. */
export interface DaemonKind {
  readonly binary: string;
  readonly configName: 'virtqemud.conf' | 'libvirtd.conf';
  readonly socketName: 'virtqemud-sock' | 'libvirt-sock';
  readonly pidName: string;
}

export const VIRTQEMUD: DaemonKind = { binary: '/usr/sbin/virtqemud', configName: 'virtqemud.conf', socketName: 'virtqemud-sock', pidName: 'virtqemud.pid' };
export const LIBVIRTD: DaemonKind = { binary: '/usr/sbin/libvirtd', configName: 'libvirtd.conf', socketName: 'libvirt-sock', pidName: 'libvirtd.pid' };

/**
 * Debian ships only libvirtd; distributions with the split daemons get virtqemud, as KubeVirt
 * uses. `virtqemud` names one installed elsewhere (podvirt builds it from Debian's own libvirt
 * source, tools/build-virtqemud; env PODVIRT_VIRTQEMUD): it must exist, a wrong path is not
 * silently replaced by libvirtd.
 */
export function pickDaemon(exists: (path: string) => boolean, virtqemud?: string): DaemonKind {
  if (virtqemud !== undefined && virtqemud !== '' && !exists(VIRTQEMUD.binary)) {
    if (!exists(virtqemud)) throw new LauncherError('LAUNCHER_ERR_DAEMON', `PODVIRT_VIRTQEMUD names ${virtqemud}, which does not exist`);
    return { ...VIRTQEMUD, binary: virtqemud };
  }
  if (exists(VIRTQEMUD.binary)) return VIRTQEMUD;
  if (exists(LIBVIRTD.binary)) return LIBVIRTD;
  throw new LauncherError('LAUNCHER_ERR_DAEMON', `no libvirt daemon found (looked for ${VIRTQEMUD.binary} and ${LIBVIRTD.binary})`);
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
 * The monolithic libvirtd loads every driver module it finds (network, storage, node devices,
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
