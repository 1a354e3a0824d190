// A launcher container's device cgroup, for a hotplugged block volume (KubeVirt's handler sets
// the same rule through its cgroup manager): the container may open the device only once
// `b MAJOR:MINOR rwm` is in its devices.allow, and loses it again through devices.deny when the
// volume goes. cgroup v1's devices controller only (this machine's, and runc's on the real node
// here); on cgroup v2 device access is an eBPF program of the runtime's, which podvirt does not
// rewrite: refused by name. A launcher that shares the handler's own device cgroup (the testbed's
// process runtime gives containers none of their own) may already use what the handler may:
// nothing is written then.

import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { HandlerError } from '../handler-error.js';
import { findLauncherPid } from '../network/launcher-process.js';

export interface BlockDevice {
  readonly major: number;
  readonly minor: number;
}

/** Grants and takes back a block device for the launcher of a VMI; a fake replaces it in tests. */
export interface DeviceAccess {
  allow(vmiUid: string, launcherSocket: string, device: BlockDevice): Promise<void>;
  deny(vmiUid: string, launcherSocket: string, device: BlockDevice): Promise<void>;
}

export interface DeviceCgroupsOptions {
  /** The host's /proc (the handler runs with the host's PID namespace). */
  readonly procRoot: string;
  /** Where the cgroup v1 hierarchies are mounted (`<root>/devices/…`). */
  readonly cgroupRoot: string;
}

/** The devices hierarchy's path of a process, from its /proc/<pid>/cgroup; 'v2' without one. */
export function devicesCgroupOf(procCgroup: string): string | 'v2' | undefined {
  let unified = false;
  for (const line of procCgroup.split('\n')) {
    const [, controllers, path] = /^\d+:([^:]*):(.*)$/.exec(line) ?? [];
    if (controllers === undefined || path === undefined) continue;
    if (controllers.split(',').includes('devices')) return path;
    if (controllers === '') unified = true;
  }
  return unified ? 'v2' : undefined;
}

export class DeviceCgroups implements DeviceAccess {
  readonly #o: DeviceCgroupsOptions;

  constructor(o: DeviceCgroupsOptions) {
    this.#o = o;
  }

  allow(vmiUid: string, launcherSocket: string, device: BlockDevice): Promise<void> {
    return this.#write(vmiUid, launcherSocket, device, 'devices.allow');
  }

  deny(vmiUid: string, launcherSocket: string, device: BlockDevice): Promise<void> {
    return this.#write(vmiUid, launcherSocket, device, 'devices.deny');
  }

  async #write(vmiUid: string, launcherSocket: string, device: BlockDevice, file: 'devices.allow' | 'devices.deny'): Promise<void> {
    const pid = await findLauncherPid(this.#o.procRoot, vmiUid, launcherSocket);
    if (pid === undefined) throw new HandlerError('HANDLER_ERR_HOTPLUG', `no launcher process of VMI ${vmiUid} serves ${launcherSocket}: its device cgroup is unknown`);
    const [theirs, ours] = await Promise.all([
      readFile(join(this.#o.procRoot, String(pid), 'cgroup'), 'utf8').then(devicesCgroupOf),
      readFile(join(this.#o.procRoot, 'self', 'cgroup'), 'utf8').then(devicesCgroupOf),
    ]);
    if (theirs === 'v2' || theirs === undefined) {
      throw new HandlerError('HANDLER_ERR_HOTPLUG', `the launcher (pid ${pid}) has no cgroup v1 devices controller; podvirt hotplugs block volumes on cgroup v1 only`);
    }
    if (theirs === ours) return;
    if (theirs.split('/').includes('..')) throw new HandlerError('HANDLER_ERR_HOTPLUG', `device cgroup path ${JSON.stringify(theirs)} of pid ${pid}`);
    await writeFile(join(this.#o.cgroupRoot, 'devices', theirs, file), `b ${device.major}:${device.minor} rwm`).catch((err: unknown) => {
      throw new HandlerError('HANDLER_ERR_HOTPLUG', `${file} of the launcher's device cgroup ${theirs}: ${(err as Error).message}`, { cause: err });
    });
  }
}
