import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

/** The virtqemud tools/build-virtqemud made from Debian's libvirt source, and its warm capabilities cache. */
export interface VirtqemudBuild {
  readonly binary: string;
  readonly capsCache: string;
}

/**
 * The virtqemud built for the installed libvirt (`tools/build-virtqemud --dir`), which the
 * testbed's launcher image runs instead of Debian's libvirtd; undefined when it is not built,
 * or when `PODVIRT_TESTBED_DAEMON=libvirtd` asks for libvirtd (the fallback, and the benchmarks'
 * comparison).
 */
export function virtqemudBuild(repoRoot: string, env: NodeJS.ProcessEnv = process.env): VirtqemudBuild | undefined {
  if (env['PODVIRT_TESTBED_DAEMON'] === 'libvirtd') return undefined;
  let dir: string;
  try {
    dir = execFileSync(join(repoRoot, 'tools/build-virtqemud'), ['--dir'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 10_000 }).trim();
  } catch {
    return undefined;
  }
  return dir === '' ? undefined : { binary: join(dir, 'sbin/virtqemud'), capsCache: join(dir, 'caps') };
}
