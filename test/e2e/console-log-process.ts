// The guest-console-log container's process on this machine, found by the serial log it tails,
// and the credentials the kernel holds for it: how a test sees that the container runtime ran
// it as the controller rendered it (an unprivileged account, no capability, no_new_privs).
import { readdir, readFile } from 'node:fs/promises';
import { NON_ROOT_UID, SERIAL_LOG_FILE } from '@podvirt/api';

/** What the kernel holds for a process: the credentials a container runtime applied. */
export interface ProcessCredentials {
  /** Real, effective, saved and filesystem uids, as /proc/<pid>/status lists them. */
  readonly uids: readonly number[];
  readonly capEff: bigint;
  readonly capBnd: bigint;
  readonly noNewPrivs: boolean;
}

/** The credentials the unprivileged guest-console-log container must run with. */
export const UNPRIVILEGED_TAIL: ProcessCredentials = { uids: [NON_ROOT_UID, NON_ROOT_UID, NON_ROOT_UID, NON_ROOT_UID], capEff: 0n, capBnd: 0n, noNewPrivs: true };

/** The credentials of the tail of the VMI with this uid (`podvirt-tail --logfile …/<uid>/virt-serial0-log`), if it runs. */
export async function consoleLogTail(vmiUid: string): Promise<ProcessCredentials | undefined> {
  for (const pid of (await readdir('/proc')).filter((n) => /^\d+$/.test(n))) {
    const argv = (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).split('\0');
    if (!argv.some((a) => a.endsWith('podvirt-tail') || a.endsWith('podvirt-tail.js'))) continue;
    if (!argv.some((a) => a.endsWith(`/${vmiUid}/${SERIAL_LOG_FILE}`))) continue;
    const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => undefined);
    if (status === undefined) continue;
    const field = (name: string): string => new RegExp(`^${name}:\\s*(.*)$`, 'm').exec(status)?.[1]?.trim() ?? '';
    return {
      uids: field('Uid').split(/\s+/).map(Number),
      capEff: BigInt(`0x${field('CapEff') || '0'}`),
      capBnd: BigInt(`0x${field('CapBnd') || '0'}`),
      noNewPrivs: field('NoNewPrivs') === '1',
    };
  }
  return undefined;
}
