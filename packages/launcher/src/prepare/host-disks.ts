import { normalize } from 'node:path';
import { toBytes, VmiInvalidError, type DefaultedVmi } from '@podvirt/api';
import { ConfinementError, openConfined, type ConfinedFile } from '../host/open-confined.js';

export interface HostDisksOptions {
  /** `--host-disk-dir`: a hostDisk path must be a file below one of these. */
  readonly roots: readonly string[];
  /** The launcher's pid as libvirt and qemu see it (same PID namespace): they open `/proc/<pid>/fd/<n>`. */
  readonly pid: number;
}

/**
 * The hostDisk volumes of the launcher's VMI, opened confined to the allowed directories.
 * libvirt is handed the open descriptor's `/proc/<pid>/fd/<n>` path, so qemu opens exactly the
 * file that was checked, whatever happens to the directory afterwards. Descriptors stay open
 * until `close()` (the launcher's end); a re-sync reuses them.
 */
export class HostDisks {
  readonly #o: HostDisksOptions;
  readonly #open = new Map<string, Promise<ConfinedFile>>();

  constructor(o: HostDisksOptions) {
    this.#o = o;
  }

  /** volume name → the path libvirt opens. A path outside every root is left to the converter, which names the field. */
  async resolve(vmi: DefaultedVmi): Promise<ReadonlyMap<string, string>> {
    const out = new Map<string, string>();
    const volumes = vmi.spec.volumes ?? [];
    for (const [i, v] of volumes.entries()) {
      const hd = v.hostDisk;
      if (hd === undefined) continue;
      const field = `spec.volumes[${i}].hostDisk`;
      const path = normalize(hd.path);
      const root = this.#o.roots.find((r) => path.startsWith(r.endsWith('/') ? r : `${r}/`) || path === normalize(r));
      if (root === undefined) continue;
      const create = hd.type === 'DiskOrCreate' ? { sizeBytes: toBytes(hd.capacity ?? 0) } : undefined;
      const file = await this.#openOnce(root, path, create, `${field}.path`);
      out.set(v.name, file.procPath(this.#o.pid));
    }
    return out;
  }

  #openOnce(root: string, path: string, create: { sizeBytes: bigint } | undefined, field: string): Promise<ConfinedFile> {
    const key = `${root}\0${path}`;
    let p = this.#open.get(key);
    if (p === undefined) {
      p = openConfined(root, path, create ? { create } : {}).catch((err: unknown) => {
        this.#open.delete(key);
        if (err instanceof ConfinementError) throw VmiInvalidError.at(field, 'Forbidden', err.message);
        throw err;
      });
      this.#open.set(key, p);
    }
    return p;
  }

  async close(): Promise<void> {
    const files = await Promise.allSettled(this.#open.values());
    this.#open.clear();
    for (const f of files) if (f.status === 'fulfilled') await f.value.close();
  }
}
