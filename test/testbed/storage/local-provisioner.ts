// The testbed's dynamic provisioner for one storage class (like a local-path provisioner): a
// filesystem claim gets a directory under `rootDir`, a block claim a sparse file attached to a
// loop device. Everything it creates it removes again — on reclaim (policy Delete) and, for
// whatever is left, on close — so no directory or loop device outlives the testbed.

import { execFile } from 'node:child_process';
import { mkdir, open, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export const LOCAL_PROVISIONER = 'podvirt.io/testbed-local';

export interface ProvisionedVolume {
  /** What the PV points at: a directory (hostPath) or a loop device (local). */
  readonly path: string;
  readonly block: boolean;
}

export class LocalProvisioner {
  readonly #root: string;
  /** Loop device → backing file, for every device attached and not yet released. */
  readonly #loops = new Map<string, string>();

  constructor(rootDir: string) {
    this.#root = rootDir;
  }

  async provision(name: string, sizeBytes: bigint, block: boolean): Promise<ProvisionedVolume> {
    if (!block) {
      const dir = join(this.#root, name);
      await mkdir(dir, { recursive: true });
      return { path: dir, block: false };
    }
    await mkdir(join(this.#root, 'block'), { recursive: true });
    const file = join(this.#root, 'block', `${name}.img`);
    const fh = await open(file, 'wx');
    try {
      await fh.truncate(Number(sizeBytes));
    } finally {
      await fh.close();
    }
    const { stdout } = await run('losetup', ['--find', '--show', file]);
    const device = stdout.trim();
    this.#loops.set(device, file);
    return { path: device, block: true };
  }

  /** Frees what `provision` made for this path: detaches the loop device, removes the files. */
  async release(path: string): Promise<void> {
    const file = this.#loops.get(path);
    if (file !== undefined) {
      await run('losetup', ['--detach', path]).catch(() => undefined);
      this.#loops.delete(path);
      await rm(file, { force: true });
      return;
    }
    if (path.startsWith(this.#root + '/')) await rm(path, { recursive: true, force: true });
  }

  owns(path: string): boolean {
    return this.#loops.has(path) || path.startsWith(this.#root + '/');
  }

  async close(): Promise<void> {
    for (const device of [...this.#loops.keys()]) await this.release(device);
    await rm(this.#root, { recursive: true, force: true });
  }
}
