import { LIBVIRTD, VIRTQEMUD, daemonConf as launcherDaemonConf, qemuConf } from '@podvirt/launcher';

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

// The launcher's own daemon configuration (unix socket only, no auth, logs on stderr; qemu
// with no security driver, namespaces or cgroups, and no virtlogd), plus the test's settings.
function daemonConf(kind: LibvirtDaemonKind, settings: DaemonSettings): string {
  const extra = Object.entries(settings).map(([k, v]) => `${k} = ${typeof v === 'number' ? v : JSON.stringify(v)}`);
  return `${launcherDaemonConf(kind === 'libvirtd' ? LIBVIRTD : VIRTQEMUD, '/run/libvirt', 3)}${extra.map((l) => `${l}\n`).join('')}`;
}

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
    files: { [conf]: daemonConf(kind, settings), 'qemu.conf': qemuConf() },
  };
}
