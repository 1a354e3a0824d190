// Ghost records on host disk: one JSON file per VMI UID in a root-only directory, written
// atomically (temporary file, fsync, rename) so a crash leaves either the old record or the
// new one, never half of one. Loaded once at start; kept in memory afterwards.

import { mkdir, open, readdir, readFile, rename, rm, chmod } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { HandlerError, isHandlerError } from '../handler-error.js';
import { checkUid, parseGhostRecord, type GhostRecord, type LauncherRecords } from './ghost-record.js';

const TEMP_PREFIX = '.tmp-';

export class GhostRecordStore implements LauncherRecords {
  readonly dir: string;
  readonly #log: Logger;
  readonly #records = new Map<string, GhostRecord>();

  constructor(dir: string, log: Logger) {
    this.dir = dir;
    this.#log = log;
  }

  /** Creates the directory (0700), drops torn temporary files, and reads every record. */
  async load(): Promise<GhostRecord[]> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    await chmod(this.dir, 0o700);
    for (const file of await readdir(this.dir)) {
      const path = join(this.dir, file);
      if (file.startsWith(TEMP_PREFIX)) {
        await rm(path, { force: true });
        continue;
      }
      try {
        const record = parseGhostRecord(file, await readFile(path, 'utf8'));
        this.#records.set(record.uid, record);
      } catch (err) {
        // A record we cannot read must not stop the handler; it is kept for a human to inspect.
        if (!isHandlerError(err, 'HANDLER_ERR_GHOST_RECORD_INVALID')) throw err;
        this.#log.warn({ err, file: path }, 'ignoring unreadable ghost record');
      }
    }
    return this.list();
  }

  get(uid: string): GhostRecord | undefined {
    return this.#records.get(uid);
  }

  list(): GhostRecord[] {
    return [...this.#records.values()];
  }

  uidsFor(key: string): string[] {
    return this.list().filter((r) => `${r.namespace}/${r.name}` === key).map((r) => r.uid);
  }

  async add(record: GhostRecord): Promise<void> {
    checkUid(record.uid);
    const existing = this.#records.get(record.uid);
    if (existing !== undefined) {
      if (existing.socketFile === record.socketFile && existing.name === record.name && existing.namespace === record.namespace) return;
      throw new HandlerError(
        'HANDLER_ERR_GHOST_RECORD_CONFLICT',
        `VMI ${record.uid} is recorded with launcher socket ${existing.socketFile} (${existing.namespace}/${existing.name}), refusing ${record.socketFile}`,
      );
    }
    const copy: GhostRecord = { name: record.name, namespace: record.namespace, socketFile: record.socketFile, uid: record.uid };
    // In memory first, so a concurrent add of the same UID sees it and a conflict is caught.
    this.#records.set(record.uid, copy);
    try {
      await this.#write(copy);
    } catch (err) {
      this.#records.delete(record.uid);
      throw err;
    }
  }

  async remove(uid: string): Promise<void> {
    if (!this.#records.delete(uid)) return;
    await rm(join(this.dir, uid), { force: true });
  }

  async #write(record: GhostRecord): Promise<void> {
    const target = join(this.dir, record.uid);
    const temp = join(this.dir, `${TEMP_PREFIX}${record.uid}`);
    const file = await open(temp, 'w', 0o600);
    try {
      await file.writeFile(JSON.stringify(record));
      await file.sync();
    } finally {
      await file.close();
    }
    try {
      await rename(temp, target);
    } catch (err) {
      await rm(temp, { force: true });
      throw err;
    }
  }
}
