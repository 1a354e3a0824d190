// Tells whether a path exists, and again whenever that may have changed: an inotify watch on
// its directory (fs.watch), re-checked with lstat on every event that names it, because events
// coalesce and a rename shows up as the same event as a removal. The watch starts before the
// first check, as KubeVirt's device health check does, so a change between the two is not lost.

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
    const name = basename(this.path);
    this.#watcher = watch(dirname(this.path), { persistent: false }, (_event, file) => {
      // Some kernels give no file name; then any event may be ours.
      if (file === null || file === name) this.recheck();
    });
    this.#watcher.on('error', (err) => this.#onError(err));
    this.#present = await this.#exists();
    return this.#present;
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
