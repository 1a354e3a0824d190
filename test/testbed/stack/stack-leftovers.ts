import { lstat, readdir, readFile, readlink } from 'node:fs/promises';
import { join } from 'node:path';
import { podman } from '../container/podman.js';
import { KUBELET_ROOT_LABEL } from '../container/start-image-container.js';

/**
 * What a closed stack must not leave behind, as descriptions (empty when clean): a process
 * whose command line names the stack's state dir (the real control plane's etcd, API server …),
 * a process (qemu, monitor, launcher, daemon …) still holding a mount from the state dir, such
 * a mount in this namespace, a container of the image runtime, the state dir itself, or the
 * pods-dir symlink.
 */
export async function stackLeftovers(stack: { readonly stateDir: string; readonly podsDir: string }): Promise<string[]> {
  const left: string[] = [];
  const mentions = (text: string): boolean => text.includes(stack.stateDir);
  const seen = new Set<string>();
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    // The real control plane's processes (etcd, kube-apiserver …) name the state dir in their flags.
    const cmdline = (await readFile(`/proc/${name}/cmdline`, 'utf8').catch(() => '')).replaceAll('\0', ' ');
    if (Number(name) !== process.pid && mentions(cmdline)) left.push(`process ${name} (${cmdline.slice(0, 80)}) started for ${stack.stateDir}`);
    // One look per mount namespace: every host process shows the host's mounts.
    const ns = await readlink(`/proc/${name}/ns/mnt`).catch(() => undefined);
    if (ns === undefined || seen.has(ns)) continue;
    seen.add(ns);
    // Containers bind-mount pod directories from the state dir, so their processes show them.
    const mounts = await readFile(`/proc/${name}/mountinfo`, 'utf8').catch(() => '');
    if (!mentions(mounts)) continue;
    const comm = (await readFile(`/proc/${name}/comm`, 'utf8').catch(() => '?')).trim();
    left.push(`process ${name} (${comm}) with a mount from ${stack.stateDir}`);
  }
  for (const name of await imageContainers(join(stack.stateDir, 'kubelet'))) left.push(`podman container ${name}`);
  for (const path of [stack.stateDir, stack.podsDir]) {
    if (await lstat(path).then(() => true, () => false)) left.push(`path ${path}`);
  }
  return left;
}

/** The image runtime's containers of a kubelet root, running or not (none without podman). */
async function imageContainers(kubeletRoot: string): Promise<string[]> {
  if (!(await lstat('/usr/bin/podman').then(() => true, () => false))) return [];
  const out = await podman(['ps', '--all', '--filter', `label=${KUBELET_ROOT_LABEL}=${kubeletRoot}`, '--format', '{{.Names}}'], 'PODVIRT_CONTAINER_LEFTOVERS');
  return out.split('\n').filter((l) => l !== '');
}
