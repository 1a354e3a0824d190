// A container's memory limit, as a container runtime enforces it: a cgroup v1 memory group
// (this machine mounts the memory controller at /sys/fs/cgroup/memory) holding the container's
// processes, with memory.limit_in_bytes from the container's resources.limits.memory. When the
// kernel's OOM killer acts inside it, `oom_kill` in memory.oom_control counts it, which is how the
// kubelet knows to report the container as OOMKilled. The group is removed once the container's
// last process is gone.

import { mkdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ContainerError } from './container-error.js';

export const MEMORY_CGROUP_ROOT = '/sys/fs/cgroup/memory';
/** Every testbed container's group lives under this one, so a leak is easy to see. */
export const TESTBED_CGROUP_PARENT = 'podvirt-testbed';

export class MemoryCgroup {
  readonly path: string;

  private constructor(path: string) {
    this.path = path;
  }

  /** Creates the group `name` (unique per container run) with the limit. */
  static async create(name: string, limitBytes: number, root = MEMORY_CGROUP_ROOT): Promise<MemoryCgroup> {
    if (!/^[A-Za-z0-9._-]+$/.test(name)) throw new ContainerError('PODVIRT_CONTAINER_START_FAILED', `not a usable cgroup name: ${name}`);
    const path = join(root, TESTBED_CGROUP_PARENT, name);
    try {
      await mkdir(path, { recursive: true });
      await writeFile(join(path, 'memory.limit_in_bytes'), String(limitBytes));
    } catch (err) {
      await rmdir(path).catch(() => undefined);
      throw new ContainerError('PODVIRT_CONTAINER_START_FAILED', `cannot make memory cgroup ${path}: ${(err as Error).message}`, { cause: err });
    }
    return new MemoryCgroup(path);
  }

  /** Moves a process into the group; children it forks afterwards stay in it. */
  async add(pid: number): Promise<void> {
    await writeFile(join(this.path, 'cgroup.procs'), String(pid));
  }

  async limitBytes(): Promise<number> {
    return Number((await readFile(join(this.path, 'memory.limit_in_bytes'), 'utf8')).trim());
  }

  /** How many processes the kernel's OOM killer has killed in the group. */
  async oomKills(): Promise<number> {
    const text = await readFile(join(this.path, 'memory.oom_control'), 'utf8');
    return Number(/^oom_kill (\d+)$/m.exec(text)?.[1] ?? '0');
  }

  /** How often the group's usage reached its limit (memory.failcnt). */
  async limitHits(): Promise<number> {
    return Number((await readFile(join(this.path, 'memory.failcnt'), 'utf8')).trim());
  }

  /** Removes the group; its processes must be gone. Retries briefly while the kernel lets go of them. */
  async remove(): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        await rmdir(this.path);
        return;
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'ENOENT') return;
        if (code !== 'EBUSY' || attempt >= 50) throw err;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }
  }
}
