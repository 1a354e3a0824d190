import { execFile } from 'node:child_process';

/** virsh failed; the message carries its stderr. */
export class VirshError extends Error {
  override readonly name = 'VirshError';
  readonly code = 'PODVIRT_TEST_VIRSH_FAILED';
}

/** Runs `virsh -q -c <uri> …` and resolves with its stdout (bounded at 30 s). */
export function virsh(uri: string, ...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('virsh', ['-q', '-c', uri, ...args], { timeout: 30_000 }, (err, stdout, stderr) => {
      if (err) reject(new VirshError(`virsh ${args.join(' ')}: ${stderr.trim() || err.message}`, { cause: err }));
      else resolve(stdout);
    });
  });
}
