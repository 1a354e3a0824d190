// Where the migration streams meet each pod (see the README's Migration section). A `unix://`
// migrate URI names one path that both sides use: the target's qemu listens on it in the
// target pod, the source's qemu connects to it in the source pod, where the source handler's
// proxy listens. Both are in the pod's `public` emptyDir (KubeVirt's /var/run/kubevirt,
// `migrationproxy/` as KubeVirt names it), which every pod mounts from its own directory on
// its node — so the same in-pod path is a different file per pod, even when two pods share a
// machine, and the handler reaches it under the kubelet's pods dir.

import { dirname, join } from 'node:path';

/** The pod-side streams of a migration: libvirt's connection, qemu's memory, the disks (NBD). */
export const MIGRATION_STREAMS = { libvirt: 0, memory: 49152, disks: 49153 } as const;
export type MigrationStream = (typeof MIGRATION_STREAMS)[keyof typeof MIGRATION_STREAMS];

/** The proxy's directory inside a launcher pod (in the `public` emptyDir). */
export const POD_MIGRATION_PROXY_DIR = '/var/run/kubevirt/migrationproxy';
const PUBLIC_EMPTY_DIR = 'public';

/** KubeVirt's file name: `<uid>-source.sock` for libvirt's connection, `<uid>-<port>-source.sock` for the others. */
export function migrationSocketName(vmiUid: string, stream: MigrationStream): string {
  return stream === MIGRATION_STREAMS.libvirt ? `${vmiUid}-source.sock` : `${vmiUid}-${stream}-source.sock`;
}

/** The stream's socket as the pod sees it (what the URIs name). */
export function podMigrationSocket(vmiUid: string, stream: MigrationStream): string {
  return join(POD_MIGRATION_PROXY_DIR, migrationSocketName(vmiUid, stream));
}

/**
 * The same socket seen from the node, beside the pod's launcher socket
 * (`<pod>/volumes/kubernetes.io~empty-dir/sockets/launcher-sock`).
 */
export function hostMigrationSocket(launcherSocketPath: string, vmiUid: string, stream: MigrationStream): string {
  return join(dirname(dirname(launcherSocketPath)), PUBLIC_EMPTY_DIR, 'migrationproxy', migrationSocketName(vmiUid, stream));
}

export interface MigrationUris {
  /** Migrate's destination_uri: the target's libvirt daemon through the proxy. */
  readonly destinationUri: string;
  readonly migrateUri: string;
  readonly disksUri: string;
}

/** The URIs the source launcher's Migrate gets; the paths are the same in both pods. */
export function migrationUris(vmiUid: string): MigrationUris {
  return {
    destinationUri: `qemu+unix:///system?socket=${podMigrationSocket(vmiUid, MIGRATION_STREAMS.libvirt)}`,
    migrateUri: `unix://${podMigrationSocket(vmiUid, MIGRATION_STREAMS.memory)}`,
    disksUri: `unix://${podMigrationSocket(vmiUid, MIGRATION_STREAMS.disks)}`,
  };
}
