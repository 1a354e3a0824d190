// The kubelet's volume manager, for the kinds podvirt's launcher pods use: emptyDir (a pod
// directory), hostPath (Directory / DirectoryOrCreate checked or made), secret (each key
// written as a file, the Secret read from the API) and persistentVolumeClaim (the bound PV's
// directory, bound under the pod's directory; see pod-mounts.ts; a block claim's device, linked
// under the pod's volumeDevices). A volume that cannot be set up yet — a missing Secret, an unbound claim — is an
// error the worker reports as FailedMount and retries, as the real kubelet does.

import { lstat, mkdir, stat, symlink, writeFile } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
import type { CoreV1Api, V1Container, V1Pod, V1Volume } from '@kubernetes/client-node';
import type { PodPaths } from './pod-paths.js';
import { bindOnce, makeSharedMountPoint } from './pod-mounts.js';

export class VolumeSetupError extends Error {
  override readonly name = 'VolumeSetupError';
  readonly code = 'PODVIRT_KUBELET_VOLUME';
}

/** Host path behind each volume of the pod, ready to bind-mount. */
export type VolumeSources = ReadonlyMap<string, string>;

async function hostPath(volume: V1Volume): Promise<string> {
  const { path, type } = volume.hostPath ?? { path: '' };
  if (type === 'DirectoryOrCreate') await mkdir(path, { recursive: true, mode: 0o755 });
  if (type === 'Directory' || type === 'DirectoryOrCreate') {
    const st = await stat(path).catch(() => undefined);
    if (st?.isDirectory() !== true) throw new VolumeSetupError(`MountVolume.SetUp failed for volume "${volume.name}" : hostPath type check failed: ${path} is not a directory`);
  }
  return path;
}

async function secret(core: CoreV1Api, namespace: string, volume: V1Volume, dir: string): Promise<string> {
  const secretName = volume.secret?.secretName ?? '';
  const found = await core.readNamespacedSecret({ namespace, name: secretName }).catch((err: unknown) => {
    if ((err as { code?: number }).code === 404) return undefined;
    throw err;
  });
  if (found === undefined) throw new VolumeSetupError(`MountVolume.SetUp failed for volume "${volume.name}" : secret "${secretName}" not found`);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  for (const [key, value] of Object.entries(found.data ?? {})) await writeFile(join(dir, key), Buffer.from(value, 'base64'), { mode: 0o644 });
  return dir;
}

async function claim(core: CoreV1Api, namespace: string, volume: V1Volume, block: boolean, paths: PodPaths): Promise<string> {
  const claimName = volume.persistentVolumeClaim?.claimName ?? '';
  const pvc = await core.readNamespacedPersistentVolumeClaim({ namespace, name: claimName }).catch(() => undefined);
  if (pvc === undefined) throw new VolumeSetupError(`persistentvolumeclaim "${claimName}" not found`);
  if (pvc.status?.phase !== 'Bound' || !pvc.spec?.volumeName) throw new VolumeSetupError(`persistentvolumeclaim "${claimName}" is not bound`);
  const pv = await core.readPersistentVolume({ name: pvc.spec.volumeName });
  const isBlock = pv.spec?.volumeMode === 'Block';
  if (isBlock && !block) throw new VolumeSetupError(`volume "${volume.name}" has volumeMode Block, but is specified in volumeMounts`);
  if (!isBlock && block) throw new VolumeSetupError(`volume "${volume.name}" has volumeMode Filesystem, but is specified in volumeDevices`);
  const path = pv.spec?.hostPath?.path ?? pv.spec?.local?.path;
  if (path === undefined) throw new VolumeSetupError(`persistentvolume "${pvc.spec.volumeName}" has no source the testbed kubelet can attach`);
  if (isBlock) {
    // As the real kubelet maps a block volume for the pod: a link named after the PV under the
    // pod's volumeDevices to the device (podvirt-handler reads a hotplugged claim's numbers there).
    const mapped = join(paths.podDir, 'volumeDevices', 'kubernetes.io~local-volume');
    await mkdir(mapped, { recursive: true, mode: 0o750 });
    const link = join(mapped, pvc.spec.volumeName);
    if ((await lstat(link).catch(() => undefined)) === undefined) await symlink(path, link);
    return path;
  }
  // A filesystem claim is shown under the pod's directory, as the real kubelet's volume plugins
  // show theirs (podvirt-handler finds a hotplugged claim there, through its attachment pod).
  const shown = join(paths.podDir, 'volumes', 'kubernetes.io~local-volume', pvc.spec.volumeName);
  await mkdir(shown, { recursive: true, mode: 0o750 });
  await bindOnce(path, shown);
  return shown;
}

/**
 * A subPath the volume does not hold is created as a directory, as the kubelet does (KubeVirt
 * mounts both `userdata` and `userData` of a cloud-init Secret; the key it lacks becomes an empty
 * directory). `..` and absolute subPaths are refused, as the API server would.
 */
async function makeMissingSubPaths(containers: readonly V1Container[], sources: VolumeSources): Promise<void> {
  for (const m of containers.flatMap((c) => c.volumeMounts ?? [])) {
    const source = sources.get(m.name);
    if (source === undefined || m.subPath === undefined || m.subPath === '') continue;
    if (isAbsolute(m.subPath) || m.subPath.split('/').includes('..')) throw new VolumeSetupError(`volume "${m.name}": subPath ${JSON.stringify(m.subPath)} must be a relative path without ".."`);
    const path = join(source, m.subPath);
    if ((await lstat(path).catch(() => undefined)) === undefined) await mkdir(path, { recursive: true, mode: 0o750 });
  }
}

/** Sets up every volume of `pod`; throws VolumeSetupError naming the first that cannot be yet. */
export async function setUpVolumes(core: CoreV1Api, pod: V1Pod, paths: PodPaths): Promise<VolumeSources> {
  const namespace = pod.metadata?.namespace ?? 'default';
  const containers: V1Container[] = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])];
  const asDevice = new Set(containers.flatMap((c) => (c.volumeDevices ?? []).map((d) => d.name)));
  const propagated = new Set(containers.flatMap((c) => (c.volumeMounts ?? []).filter((m) => m.mountPropagation === 'HostToContainer').map((m) => m.name)));
  const sources = new Map<string, string>();
  for (const volume of pod.spec?.volumes ?? []) {
    if (volume.emptyDir !== undefined) {
      await mkdir(paths.emptyDir(volume.name), { recursive: true });
      // HostToContainer: a mount made below it on the host later reaches the container.
      if (propagated.has(volume.name)) await makeSharedMountPoint(paths.emptyDir(volume.name));
      sources.set(volume.name, paths.emptyDir(volume.name));
    } else if (volume.hostPath !== undefined) {
      sources.set(volume.name, await hostPath(volume));
    } else if (volume.secret !== undefined) {
      sources.set(volume.name, await secret(core, namespace, volume, join(paths.podDir, 'volumes', 'kubernetes.io~secret', volume.name)));
    } else if (volume.persistentVolumeClaim !== undefined) {
      sources.set(volume.name, await claim(core, namespace, volume, asDevice.has(volume.name), paths));
    }
  }
  await makeMissingSubPaths(containers, sources);
  return sources;
}
