// Tells whether a path exists, and again whenever that may have changed: an inotify watch on
// its directory (fs.watch), re-checked with lstat on every event that names it, because events
// coalesce and a rename shows up as the same event as a removal. The watch starts before the
// first check, as KubeVirt's device health check does, so a change between the two is not lost.
// A directory that does not exist yet (/dev/net on a node without tun) is waited for by watching
// the nearest ancestor that does, moving down once it appears.

import { watch, type FSWatcher } from 'node:fs';
import { lstat } from 'node:fs/promises';
import { basename, dirname } from 'node:path';

export type PathKind = 'socket' | 'any';

export class PathWatch {
  readonly path: string;
  readonly #kind: PathKind;
  readonly #onChange: (present: boolean) => void;
  readonly #onError: (err: Error) => void;
  #watcher: FSWatcher | undefined;
  #present: boolean | undefined;
  #checking: Promise<void> = Promise.resolve();
  #closed = false;

  constructor(path: string, options: { kind?: PathKind; onChange: (present: boolean) => void; onError: (err: Error) => void }) {
    this.path = path;
    this.#kind = options.kind ?? 'any';
    this.#onChange = options.onChange;
    this.#onError = options.onError;
  }

  /** Starts watching; resolves with whether the path exists now (no onChange for that). */
  async start(): Promise<boolean> {
    this.#arm();
    this.#present = await this.#exists();
    return this.#present;
  }

  /** Watches the path's directory, or else its nearest existing ancestor until the directory appears. */
  #arm(): void {
    if (this.#closed) return;
    this.#watcher?.close();
    const name = basename(this.path);
    const dir = dirname(this.path);
    for (let at = dir; ; at = dirname(at)) {
      try {
        this.#watcher = watch(at, { persistent: false }, (_event, file) => {
          if (at !== dir) {
            this.#arm();
            void this.recheck();
          } else if (file === null || file === name) {
            // Some kernels give no file name; then any event may be ours.
            void this.recheck();
          }
        });
        this.#watcher.on('error', (err) => this.#onError(err));
        return;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || at === dirname(at)) throw err;
      }
    }
  }

  get present(): boolean {
    return this.#present === true;
  }

  /** Checks again (one check at a time, in order) and reports a change. */
  recheck(): Promise<void> {
    this.#checking = this.#checking.then(async () => {
      if (this.#closed) return;
      const present = await this.#exists();
      if (this.#closed || present === this.#present) return;
      this.#present = present;
      this.#onChange(present);
    });
    return this.#checking;
  }

  async #exists(): Promise<boolean> {
    try {
      const stat = await lstat(this.path);
      return this.#kind === 'socket' ? stat.isSocket() : true;
    } catch {
      return false;
    }
  }

  close(): void {
    this.#closed = true;
    this.#watcher?.close();
  }
}
