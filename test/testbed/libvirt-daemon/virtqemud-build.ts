import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

/** The virtqemud tools/build-virtqemud made from Debian's libvirt source, and its warm capabilities cache. */
export interface VirtqemudBuild {
  readonly binary: string;
  readonly capsCache: string;
}

export class VirtqemudBuildError extends Error {
  readonly code = 'TESTBED_ERR_VIRTQEMUD_NOT_BUILT';
}

/**
 * The virtqemud built for the installed libvirt (`tools/build-virtqemud --dir`), which the
 * testbed's launcher runs instead of Debian's libvirtd when `PODVIRT_TESTBED_DAEMON=virtqemud`
 * asks for it (opt-in: its cold build takes about 40 minutes, so set-up does not make it);
 * undefined otherwise. Asked for but not built is an error naming the build command.
 */
export function virtqemudBuild(repoRoot: string, env: NodeJS.ProcessEnv = process.env): VirtqemudBuild | undefined {
  const daemon = env['PODVIRT_TESTBED_DAEMON'];
  if (daemon === undefined || daemon === '' || daemon === 'libvirtd') return undefined;
  if (daemon !== 'virtqemud') throw new VirtqemudBuildError(`PODVIRT_TESTBED_DAEMON=${daemon}: expected libvirtd (the default) or virtqemud`);
  let dir: string;
  try {
    dir = execFileSync(join(repoRoot, 'tools/build-virtqemud'), ['--dir'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 10_000 }).trim();
  } catch {
    dir = '';
  }
  if (dir === '') throw new VirtqemudBuildError('PODVIRT_TESTBED_DAEMON=virtqemud, but virtqemud is not built: run tools/build-virtqemud');
  return { binary: join(dir, 'sbin/virtqemud'), capsCache: join(dir, 'caps') };
}
