import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root could not be found above a module. */
export class RepoRootNotFoundError extends Error {
  override readonly name = 'RepoRootNotFoundError';
  readonly code = 'PODVIRT_TESTBED_NO_REPO_ROOT';
}

/**
 * The directory holding `pnpm-workspace.yaml`, found by walking up from `from` (a file URL or
 * path). Compiled testbed code runs from `test/dist/...`, so fixed `../..` hops would break.
 */
export function repoRoot(from: string = import.meta.url): string {
  const start = from.startsWith('file:') ? dirname(fileURLToPath(from)) : from;
  for (let dir = start; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'pnpm-workspace.yaml'))) return dir;
    if (dirname(dir) === dir) {
      throw new RepoRootNotFoundError(`no pnpm-workspace.yaml above ${start}`);
    }
  }
}
