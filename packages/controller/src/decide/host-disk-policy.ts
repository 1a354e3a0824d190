// hostDisk gives a VMI a file of the node as its disk, so the cluster decides whether it may be
// used and where. As in KubeVirt, the HostDisk feature gate keeps it off unless the controller
// is started with `--feature-gates=HostDisk`; podvirt adds an allow-list of host directories
// (`--host-disk-allowed-dir`, repeatable; none by default). The checks here are lexical and run
// before any pod exists: a path must be absolute, in normal form, strictly below a listed
// directory, and never a listed directory itself. The pod then mounts the LISTED directory (the
// admin vouches for it, so the kubelet never resolves a component the VMI's author chose) and
// the launcher walks the rest inside that mount refusing every symbolic link.

import { posix } from 'node:path';
import type { FieldError, VirtualMachineInstance } from '@podvirt/api';
import { ControllerError } from '../controller-error.js';

/** KubeVirt's name for the gate, as in its `featureGates: [HostDisk]`. */
export const HOST_DISK_GATE = 'HostDisk';

export interface HostDiskPolicy {
  /** The HostDisk feature gate. */
  readonly enabled: boolean;
  /** Absolute host directories in normal form; a hostDisk must name a file strictly below one. */
  readonly allowedDirs: readonly string[];
}

/** What a controller started without the flags does: refuse every hostDisk. */
export const HOST_DISK_OFF: HostDiskPolicy = { enabled: false, allowedDirs: [] };

/** Throws CONTROLLER_ERR_BAD_FLAG unless `dir` can be an allowed directory. */
export function checkAllowedDir(dir: string): string {
  const bad = (why: string): never => {
    throw new ControllerError('CONTROLLER_ERR_BAD_FLAG', `--host-disk-allowed-dir=${dir}: ${why}`);
  };
  if (!posix.isAbsolute(dir)) bad('must be an absolute path');
  if (dir.split('/').includes('..')) bad('must not contain ".."');
  if (posix.normalize(dir) !== dir || (dir.length > 1 && dir.endsWith('/'))) bad(`write it as ${posix.normalize(dir).replace(/(.)\/$/, '$1')}`);
  if (dir === '/') bad('would allow every file of the node; name a directory that holds only disk images');
  return dir;
}

/** The deepest listed directory `path` lies strictly below, or undefined. */
export function allowedDirOf(path: string, policy: HostDiskPolicy): string | undefined {
  let best: string | undefined;
  for (const dir of policy.allowedDirs) {
    if (path.startsWith(`${dir}/`) && (best === undefined || dir.length > best.length)) best = dir;
  }
  return best;
}

function pathErrors(field: string, path: string, policy: HostDiskPolicy): FieldError[] {
  // Not absolute, or with "..": the VMI's own validation (checkVmi) names it already.
  if (!posix.isAbsolute(path) || path.split('/').includes('..')) return [];
  const normal = posix.normalize(path);
  if (normal !== path || path.endsWith('/')) {
    return [{ field, type: 'Invalid', message: `${JSON.stringify(path)} is not in normal form (no ".", "//" or trailing "/"); write it as ${JSON.stringify(normal.replace(/(.)\/$/, '$1'))}` }];
  }
  const listed = policy.allowedDirs.length === 0 ? 'none is allowed (podvirt-controller has no --host-disk-allowed-dir)' : `allowed: ${policy.allowedDirs.join(', ')} (podvirt-controller --host-disk-allowed-dir)`;
  if (policy.allowedDirs.includes(path)) {
    return [{ field, type: 'Forbidden', message: `${JSON.stringify(path)} is an allowed directory itself; name a disk image file inside it` }];
  }
  if (allowedDirOf(path, policy) === undefined) {
    return [{ field, type: 'Forbidden', message: `${JSON.stringify(path)} is not inside a directory allowed for host disks; ${listed}` }];
  }
  return [];
}

/**
 * Why the VMI's hostDisk volumes may not be used under `policy`, by field; empty when they may
 * (or when it has none). Shape errors of a volume are left to checkVmi.
 */
export function checkHostDisks(vmi: VirtualMachineInstance, policy: HostDiskPolicy): FieldError[] {
  const errors: FieldError[] = [];
  const volumes: unknown = vmi.spec?.volumes;
  if (!Array.isArray(volumes)) return errors;
  volumes.forEach((volume: unknown, i) => {
    const hostDisk = (volume as { hostDisk?: unknown } | null)?.hostDisk;
    if (hostDisk === undefined || hostDisk === null) return;
    const field = `spec.volumes[${i}].hostDisk`;
    if (!policy.enabled) {
      errors.push({ field, type: 'Forbidden', message: `${HOST_DISK_GATE} feature gate is not enabled (podvirt-controller --feature-gates=${HOST_DISK_GATE}); a hostDisk gives the VM a file of the node, so the cluster must allow it` });
      return;
    }
    const path = (hostDisk as { path?: unknown }).path;
    if (typeof path === 'string') errors.push(...pathErrors(`${field}.path`, path, policy));
  });
  return errors;
}
