/** Which libvirt daemon runs the domain: the modular virtqemud where installed, else the monolithic libvirtd. */
export interface DaemonKind {
  readonly binary: string;
  readonly configName: 'virtqemud.conf' | 'libvirtd.conf';
  readonly socketName: 'virtqemud-sock' | 'libvirt-sock';
  readonly pidName: string;
}

export const VIRTQEMUD: DaemonKind = { binary: '/usr/sbin/virtqemud', configName: 'virtqemud.conf', socketName: 'virtqemud-sock', pidName: 'virtqemud.pid' };
export const LIBVIRTD: DaemonKind = { binary: '/usr/sbin/libvirtd', configName: 'libvirtd.conf', socketName: 'libvirt-sock', pidName: 'libvirtd.pid' };

/** Debian ships only libvirtd; distributions with the split daemons get virtqemud, as KubeVirt uses. */
export function pickDaemon(exists: (path: string) => boolean): DaemonKind {
  if (exists(VIRTQEMUD.binary)) return VIRTQEMUD;
  if (exists(LIBVIRTD.binary)) return LIBVIRTD;
  throw new Error(`no libvirt daemon found (looked for ${VIRTQEMUD.binary} and ${LIBVIRTD.binary})`);
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
