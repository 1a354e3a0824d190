// Where a VMI's launcher socket is, as KubeVirt finds it: through the kubelet pods dir, for
// each active pod on this node. The short mount point (`/pods` by default) matters because a
// unix socket path must fit in 108 bytes.

import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { VirtualMachineInstance } from '@podvirt/api';

export const LAUNCHER_SOCKET_SUBPATH = join('volumes', 'kubernetes.io~empty-dir', 'sockets', 'launcher-sock');

export type SocketDiscovery =
  /** No active pod of this VMI on this node has a directory here: nothing to wait for. */
  | { readonly kind: 'no-pod' }
  /** A pod directory exists but the launcher has not renamed its socket to launcher-sock yet. */
  | { readonly kind: 'waiting'; readonly podUids: readonly string[] }
  | { readonly kind: 'found'; readonly podUid: string; readonly path: string }
  /** More than one pod has a ready socket; KubeVirt refuses to guess, and so do we. */
  | { readonly kind: 'ambiguous'; readonly paths: readonly string[] };

export async function discoverLauncherSocket(
  vmi: Pick<VirtualMachineInstance, 'status'>,
  nodeName: string,
  podsDir: string,
): Promise<SocketDiscovery> {
  const podUids = Object.entries(vmi.status?.activePods ?? {})
    .filter(([, node]) => node === nodeName)
    .map(([uid]) => uid)
    .sort();
  const found: Array<{ podUid: string; path: string }> = [];
  const waiting: string[] = [];
  for (const podUid of podUids) {
    const path = join(podsDir, podUid, LAUNCHER_SOCKET_SUBPATH);
    if (await isSocket(path)) found.push({ podUid, path });
    else if (await exists(join(podsDir, podUid))) waiting.push(podUid);
  }
  const [first] = found;
  if (found.length > 1) return { kind: 'ambiguous', paths: found.map((f) => f.path) };
  if (first !== undefined) return { kind: 'found', ...first };
  if (waiting.length > 0) return { kind: 'waiting', podUids: waiting };
  return { kind: 'no-pod' };
}

export async function isSocket(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isSocket();
  } catch {
    return false;
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}
