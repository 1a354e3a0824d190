/** Which daemon binary: Debian ships only the monolithic libvirtd; virtqemud where present. */
export type LibvirtDaemonKind = 'libvirtd' | 'virtqemud';

export interface LibvirtDaemonConfig {
  /** argv, with paths as the daemon sees them inside its container. */
  readonly argv: readonly string[];
  /** Socket file name in /run/libvirt. */
  readonly socketName: string;
  /** File name → content, all written to the container's /etc/libvirt. */
  readonly files: Readonly<Record<string, string>>;
}

// A privileged daemon with no systemd, udev or cgroup placement around it, as in a launcher
// pod: unix socket only, no auth (the socket's directory is the boundary), logs on stderr.
function daemonConf(kind: LibvirtDaemonKind, settings: DaemonSettings): string {
  const extra = Object.entries(settings).map(([k, v]) => `${k} = ${typeof v === 'number' ? v : JSON.stringify(v)}`);
  return [
    ...(kind === 'libvirtd' ? ['listen_tls = 0', 'listen_tcp = 0'] : []),
    'unix_sock_dir = "/run/libvirt"',
    'unix_sock_rw_perms = "0700"',
    'auth_unix_ro = "none"',
    'auth_unix_rw = "none"',
    'log_outputs = "3:stderr"',
    ...extra,
    '',
  ].join('\n');
}

// stdio_handler = "file": qemu writes its own logs, so no virtlogd is needed. No security
// driver, no per-VM namespaces, no cgroups: none of them is available on the test host.
const QEMU_CONF = [
  'stdio_handler = "file"',
  'user = "root"',
  'group = "root"',
  'dynamic_ownership = 0',
  'remember_owner = 0',
  'security_driver = "none"',
  'namespaces = [ ]',
  'cgroup_controllers = [ ]',
  '',
].join('\n');

/** Extra `key = value` lines for the daemon's own config file (strings are quoted). */
export type DaemonSettings = Readonly<Record<string, string | number>>;

export function libvirtDaemonConfig(kind: LibvirtDaemonKind, settings: DaemonSettings = {}): LibvirtDaemonConfig {
  const conf = `${kind}.conf`;
  return {
    argv:
      kind === 'libvirtd'
        ? ['libvirtd', '-f', `/etc/libvirt/${conf}`, '-p', '/run/libvirt/libvirtd.pid']
        : ['virtqemud', '-f', `/etc/libvirt/${conf}`],
    socketName: kind === 'libvirtd' ? 'libvirt-sock' : 'virtqemud-sock',
    files: { [conf]: daemonConf(kind, settings), 'qemu.conf': QEMU_CONF },
  };
}
