import { runCommand } from '../sandbox/run-command.js';
import { ContainerError, type ContainerErrorCode } from './container-error.js';

/**
 * Runs one podman command (Debian's podman with runc; see scripts/setup for its configuration)
 * and resolves with its stdout; a non-zero exit rejects with podman's own words.
 */
export async function podman(args: readonly string[], code: ContainerErrorCode = 'PODVIRT_CONTAINER_START_FAILED', timeoutMs = 60_000, cwd?: string): Promise<string> {
  const result = await runCommand(['podman', ...args], { timeoutMs, ...(cwd === undefined ? {} : { cwd }) });
  if (result.code !== 0) {
    const why = result.stderr.trim().replace(/^Error: /, '') || `exit code ${String(result.code)}`;
    throw new ContainerError(code, why);
  }
  return result.stdout;
}
