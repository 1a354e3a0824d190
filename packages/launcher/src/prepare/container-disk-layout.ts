import { access } from 'node:fs/promises';
import { join } from 'node:path';
import { VmiInvalidError, type DefaultedVmi } from '@podvirt/api';
import type { ImageFile } from '../convert/context.js';

/**
 * Where a container image's files are found inside the launcher. Nothing pulls images here:
 * the pod (or the test that stands in for it) places them under `--container-disk-dir`:
 *
 * - containerDisk volume `<vol>` (index `i` in spec.volumes): `<dir>/<vol>/<path>` when the
 *   volume names a `path`, else the first that exists of `<dir>/<vol>/disk.img`,
 *   `<dir>/<vol>/disk.qcow2` and `<dir>/disk_<i>.img` (the name KubeVirt's handler mounts).
 * - `firmware.kernelBoot.container`: `<dir>/kernel-boot/<kernelPath>` and
 *   `<dir>/kernel-boot/<initrdPath>`.
 */
export function containerDiskCandidates(dir: string, volume: string, index: number, path?: string): string[] {
  if (path !== undefined) return [join(dir, volume, path)];
  return [join(dir, volume, 'disk.img'), join(dir, volume, 'disk.qcow2'), join(dir, `disk_${index}.img`)];
}

export function kernelBootPath(dir: string, pathInImage: string): string {
  return join(dir, 'kernel-boot', pathInImage);
}

export interface ImageInspector {
  readonly exists: (path: string) => Promise<boolean>;
  /** The image format as qemu-img reports it. */
  readonly format: (path: string) => Promise<string>;
}

export const fileExists = (path: string): Promise<boolean> => access(path).then(() => true, () => false);

/** Finds the files of every containerDisk volume and of the kernel boot container. */
export async function inspectImages(
  vmi: DefaultedVmi,
  dir: string,
  inspector: ImageInspector,
): Promise<{ containerDisks: Map<string, ImageFile>; kernelBoot?: { kernel?: string; initrd?: string } }> {
  const containerDisks = new Map<string, ImageFile>();
  for (const [i, v] of (vmi.spec.volumes ?? []).entries()) {
    if (v.containerDisk === undefined) continue;
    const field = `spec.volumes[${i}].containerDisk`;
    let found: string | undefined;
    for (const candidate of containerDiskCandidates(dir, v.name, i, v.containerDisk.path)) {
      if (await inspector.exists(candidate)) { found = candidate; break; }
    }
    if (found === undefined) throw VmiInvalidError.at(`${field}.image`, 'NotFound', `no disk image for volume ${v.name} under ${dir}`);
    const format = await inspector.format(found);
    if (format !== 'raw' && format !== 'qcow2') throw VmiInvalidError.at(`${field}.image`, 'NotSupported', `unsupported image format ${format} (raw or qcow2)`);
    containerDisks.set(v.name, { path: found, format });
  }
  const container = vmi.spec.domain.firmware?.kernelBoot?.container;
  if (container === undefined) return { containerDisks };
  // A path the image lacks is the user's mistake, named here rather than booting without it.
  const resolve = async (p: string | undefined, key: string): Promise<string | undefined> => {
    if (!p) return undefined;
    const full = kernelBootPath(dir, p);
    if (await inspector.exists(full)) return full;
    throw VmiInvalidError.at(`spec.domain.firmware.kernelBoot.container.${key}`, 'NotFound', `${JSON.stringify(p)} is not in the kernel boot container's image`);
  };
  const kernel = await resolve(container.kernelPath, 'kernelPath');
  const initrd = await resolve(container.initrdPath, 'initrdPath');
  return { containerDisks, kernelBoot: { ...(kernel ? { kernel } : {}), ...(initrd ? { initrd } : {}) } };
}
