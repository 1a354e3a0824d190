// The in-pod socket paths of a migration and the URIs the source launcher gets: the same path
// in both pods, KubeVirt's names, and each pod's own file on the node.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hostMigrationSocket, MIGRATION_STREAMS, migrationUris, podMigrationSocket } from '../src/migration-proxy/migration-sockets.js';

const UID = '6a1f0c1e-2b3d-4e5f-8a9b-0c1d2e3f4a5b';

test('the URIs name the pod-side sockets in the public emptyDir, KubeVirt\'s names, under 108 bytes', () => {
  const uris = migrationUris(UID);
  assert.equal(uris.destinationUri, `qemu+unix:///system?socket=/var/run/kubevirt/migrationproxy/${UID}-source.sock`);
  assert.equal(uris.migrateUri, `unix:///var/run/kubevirt/migrationproxy/${UID}-49152-source.sock`);
  assert.equal(uris.disksUri, `unix:///var/run/kubevirt/migrationproxy/${UID}-49153-source.sock`);
  for (const stream of Object.values(MIGRATION_STREAMS)) assert.ok(podMigrationSocket(UID, stream).length < 108);
});

test('on the node each pod has its own file beside its launcher socket', () => {
  const sock = (pod: string): string => `/var/lib/kubelet/pods/${pod}/volumes/kubernetes.io~empty-dir/sockets/launcher-sock`;
  assert.equal(hostMigrationSocket(sock('p1'), UID, MIGRATION_STREAMS.memory), `/var/lib/kubelet/pods/p1/volumes/kubernetes.io~empty-dir/public/migrationproxy/${UID}-49152-source.sock`);
  assert.notEqual(hostMigrationSocket(sock('p1'), UID, MIGRATION_STREAMS.disks), hostMigrationSocket(sock('p2'), UID, MIGRATION_STREAMS.disks));
});
