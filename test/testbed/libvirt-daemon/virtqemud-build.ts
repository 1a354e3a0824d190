import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

/**
 * The libvirt daemon the testbed's launchers run: the virtqemud tools/build-virtqemud made from
 * Debian's libvirt source (with the warm capabilities cache that very binary probed), or
 * Debian's libvirtd when `PODVIRT_TESTBED_DAEMON=libvirtd` asks for the fallback.
 */
export type LauncherDaemon =
  | { readonly kind: 'virtqemud'; readonly binary: string; readonly capsCache: string }
  | { readonly kind: 'libvirtd'; readonly capsCache: string };

export class VirtqemudBuildError extends Error {
  readonly code = 'TESTBED_ERR_VIRTQEMUD_NOT_BUILT';
}

/**
 * virtqemud (`tools/build-virtqemud --dir`, which scripts/setup builds) unless
 * `PODVIRT_TESTBED_DAEMON=libvirtd`. Not built is an error naming the build command, never a
 * silent libvirtd.
 */
export function launcherDaemon(repoRoot: string, env: NodeJS.ProcessEnv = process.env): LauncherDaemon {
  const daemon = env['PODVIRT_TESTBED_DAEMON'];
  if (daemon === 'libvirtd') return { kind: 'libvirtd', capsCache: join(repoRoot, '.cache/libvirt-caps') };
  if (daemon !== undefined && daemon !== '' && daemon !== 'virtqemud') {
    throw new VirtqemudBuildError(`PODVIRT_TESTBED_DAEMON=${daemon}: expected virtqemud (the default) or libvirtd`);
  }
  let dir: string;
  try {
    dir = execFileSync(join(repoRoot, 'tools/build-virtqemud'), ['--dir'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 10_000 }).trim();
  } catch {
    dir = '';
  }
  if (dir === '') throw new VirtqemudBuildError('virtqemud is not built: run scripts/setup (or tools/build-virtqemud), or set PODVIRT_TESTBED_DAEMON=libvirtd');
  return { kind: 'virtqemud', binary: join(dir, 'sbin/virtqemud'), capsCache: join(dir, 'caps') };
}

/** The launcher's environment for that daemon (read by packages/launcher/src/flags.ts). */
export function launcherDaemonEnv(daemon: LauncherDaemon): Record<string, string> {
  return daemon.kind === 'virtqemud'
    ? { PODVIRT_VIRTQEMUD: daemon.binary, PODVIRT_LIBVIRT_CAPS_CACHE: daemon.capsCache }
    : { PODVIRT_LIBVIRT_DAEMON: 'libvirtd', PODVIRT_LIBVIRT_CAPS_CACHE: daemon.capsCache };
}
