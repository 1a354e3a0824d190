import { execFile } from 'node:child_process';
import { LauncherError } from '../errors.js';

/** Runs a helper tool (qemu-img, genisoimage) with a bound; its stderr ends up in the error. */
export function runTool(command: string, args: readonly string[], signal?: AbortSignal, timeoutMs = 60_000): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(command, [...args], { timeout: timeoutMs, ...(signal ? { signal } : {}) }, (err, stdout, stderr) => {
      if (err) reject(new LauncherError('LAUNCHER_ERR_PREPARE', `${command} failed: ${stderr.trim() || err.message}`, { cause: err }));
      else resolve(stdout);
    });
  });
}
