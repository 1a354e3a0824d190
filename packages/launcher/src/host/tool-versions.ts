import { execFile } from 'node:child_process';

/** The version a tool prints (`libvirtd (libvirt) 9.0.0` → `9.0.0`); empty when it cannot tell. */
export function toolVersion(command: string): Promise<string> {
  return new Promise((resolve) => {
    execFile(command, ['--version'], { timeout: 5_000 }, (err, stdout) => {
      resolve(err ? '' : (/(\d+\.\d+(?:\.\d+)?)/.exec(stdout)?.[1] ?? ''));
    });
  });
}
