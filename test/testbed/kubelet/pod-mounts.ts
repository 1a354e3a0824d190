// The host mounts the testbed kubelet makes under a pod's directory, as the real kubelet does:
// a claim's volume shown at `volumes/kubernetes.io~local-volume/<pv>`, and an emptyDir that a
// container mounts with `mountPropagation: HostToContainer` made a shared mount point, so that a
// mount made under it on the host later (podvirt-handler's hotplugged disks) reaches the
// container. Everything mounted under a pod's directory is unmounted before the directory is
// removed: a recursive removal would otherwise walk into a claim and delete its data.

import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** mountinfo's escapes (`\040` for a space …) undone. */
function unescape(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, oct: string) => String.fromCharCode(parseInt(oct, 8)));
}

/** Mount points at or below `dir` in this process's mount namespace, deepest first. */
export async function mountsUnder(dir: string): Promise<string[]> {
  const info = await readFile('/proc/self/mountinfo', 'utf8');
  const points = info.split('\n').flatMap((line) => {
    const target = line.split(' ')[4];
    if (target === undefined) return [];
    const path = unescape(target);
    return path === dir || path.startsWith(`${dir}/`) ? [path] : [];
  });
  return [...new Set(points)].sort((a, b) => b.length - a.length);
}

/** Makes `dir` a shared mount point of its own (a bind onto itself first when it is none). */
export async function makeSharedMountPoint(dir: string): Promise<void> {
  if (!(await mountsUnder(dir)).includes(dir)) await run('mount', ['--bind', dir, dir]);
  await run('mount', ['--make-shared', dir]);
}

/** Binds `source` (a directory) at `target` unless something is mounted there already. */
export async function bindOnce(source: string, target: string): Promise<void> {
  if ((await mountsUnder(target)).includes(target)) return;
  await run('mount', ['--bind', source, target]);
}

/**
 * Unmounts everything at or below `dir`, deepest first (each mount point as often as it is
 * stacked); a mount still busy is detached lazily. Answers what could not be unmounted.
 */
export async function unmountAllUnder(dir: string): Promise<string[]> {
  for (let round = 0; round < 8; round++) {
    const points = await mountsUnder(dir);
    if (points.length === 0) return [];
    for (const point of points) {
      await run('umount', [point]).catch(() => run('umount', ['--lazy', point])).catch(() => undefined);
    }
  }
  // What is still mounted: the caller must not remove the directory.
  return mountsUnder(dir);
}
