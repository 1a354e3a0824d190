// A container's securityContext (merged over its pod's) as the OCI runtime applies it, in the
// terms the image runtime passes to podman. What a real kubelet does with these fields:
// privileged gives every capability and every host device; capabilities add/drop change the
// runtime's default set (containerd's list, configured by scripts/setup); runAsUser/runAsGroup
// pick the process's ids, runAsNonRoot refuses an image that would run as root;
// readOnlyRootFilesystem and allowPrivilegeEscalation map to read-only root and no_new_privs.
// Seccomp is Unconfined unless the pod asks for RuntimeDefault (the kubelet's default without
// SeccompDefault).

import type { V1Container, V1Pod } from '@kubernetes/client-node';

export class SecurityContextError extends Error {
  override readonly name = 'SecurityContextError';
  readonly code = 'PODVIRT_KUBELET_SECURITY_CONTEXT';
}

/** What applying the security context needs to know of the image. */
export interface ImageUser {
  /** The image's USER ("" or "root" or "0" run as root). */
  readonly user: string;
}

function capName(cap: string): string {
  return cap.toUpperCase().replace(/^CAP_/, '');
}

function runsAsRoot(uid: number | undefined, image: ImageUser): boolean {
  if (uid !== undefined) return uid === 0;
  const user = image.user.split(':')[0] ?? '';
  return user === '' || user === 'root' || user === '0';
}

/**
 * podman create flags for the container's effective security context. Throws
 * SecurityContextError (the kubelet's CreateContainerConfigError) for runAsNonRoot with an
 * image that runs as root and no runAsUser.
 */
export function securityArgs(pod: V1Pod, container: V1Container, image: ImageUser): string[] {
  const podCtx = pod.spec?.securityContext ?? {};
  const ctx = container.securityContext ?? {};
  const uid = ctx.runAsUser ?? podCtx.runAsUser;
  const gid = ctx.runAsGroup ?? podCtx.runAsGroup;
  const nonRoot = ctx.runAsNonRoot ?? podCtx.runAsNonRoot;
  if (nonRoot === true && runsAsRoot(uid, image)) {
    throw new SecurityContextError(uid === undefined
      ? 'container has runAsNonRoot and image will run as root'
      : 'container\'s runAsUser breaks non-root policy');
  }
  const args: string[] = [];
  if (ctx.privileged === true) args.push('--privileged');
  for (const cap of ctx.capabilities?.drop ?? []) args.push('--cap-drop', capName(cap));
  for (const cap of ctx.capabilities?.add ?? []) args.push('--cap-add', capName(cap));
  if (uid !== undefined) args.push('--user', gid === undefined ? String(uid) : `${uid}:${gid}`);
  else if (gid !== undefined) args.push('--group-add', String(gid));
  for (const g of podCtx.supplementalGroups ?? []) args.push('--group-add', String(g));
  if (ctx.readOnlyRootFilesystem === true) args.push('--read-only', '--read-only-tmpfs=false');
  if (ctx.allowPrivilegeEscalation === false) args.push('--security-opt', 'no-new-privileges');
  const seccomp = ctx.seccompProfile?.type ?? podCtx.seccompProfile?.type;
  if (seccomp !== 'RuntimeDefault' && ctx.privileged !== true) args.push('--security-opt', 'seccomp=unconfined');
  return args;
}
