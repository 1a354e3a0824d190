import { join } from 'node:path';

export interface BindMount {
  readonly source: string;
  readonly target: string;
  readonly readOnly?: boolean;
  /** HostToContainer: mounts made below `source` on the host later appear at `target` (a slave mount). */
  readonly hostToContainer?: boolean;
}

/** Where a container's private libvirt directories and account files live on the host. */
export interface ContainerStatePaths {
  readonly etcLibvirt: string;
  readonly runLibvirt: string;
  readonly varLibLibvirt: string;
  readonly varLogLibvirt: string;
  readonly varCacheLibvirt: string;
  readonly passwd: string;
  readonly group: string;
  /** The bind mounts that put the above over the fixed paths inside the container. */
  readonly binds: readonly BindMount[];
}

/**
 * A privileged libvirt daemon uses fixed paths (/etc/libvirt, /run/libvirt …); a container
 * image gives each launcher its own. Here each is a directory under `stateDir`, so the
 * daemon's socket is visible from the host at `runLibvirt/<name>-sock`.
 */
export function containerStatePaths(stateDir: string): ContainerStatePaths {
  const p = {
    etcLibvirt: join(stateDir, 'etc'),
    runLibvirt: join(stateDir, 'run'),
    varLibLibvirt: join(stateDir, 'lib'),
    varLogLibvirt: join(stateDir, 'log'),
    varCacheLibvirt: join(stateDir, 'cache'),
    passwd: join(stateDir, 'passwd'),
    group: join(stateDir, 'group'),
  };
  return {
    ...p,
    binds: [
      { source: p.etcLibvirt, target: '/etc/libvirt' },
      { source: p.runLibvirt, target: '/run/libvirt' },
      { source: p.varLibLibvirt, target: '/var/lib/libvirt' },
      { source: p.varLogLibvirt, target: '/var/log/libvirt' },
      { source: p.varCacheLibvirt, target: '/var/cache/libvirt' },
      { source: p.passwd, target: '/etc/passwd' },
      { source: p.group, target: '/etc/group' },
    ],
  };
}
