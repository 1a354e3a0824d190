// A ghost record ties a VMI UID to its launcher's socket on the host. It outlives the VMI
// object and the handler process, so that a restarted handler can still reach (and clean up
// after) a launcher whose VMI was deleted while the handler was down.

import { HandlerError } from '../handler-error.js';

export interface GhostRecord {
  readonly name: string;
  readonly namespace: string;
  readonly socketFile: string;
  readonly uid: string;
}

/** What the launcher registry needs from the records: its role, not the store. */
export interface LauncherRecords {
  get(uid: string): GhostRecord | undefined;
  /** UIDs recorded under `namespace/name`. */
  uidsFor(key: string): string[];
  /** Persists before the launcher is first used; refuses a different socket for a known UID. */
  add(record: GhostRecord): Promise<void>;
  remove(uid: string): Promise<void>;
}

// Kubernetes UIDs are UUIDs; anything else would not be a safe file name.
const UID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

export function checkUid(uid: string): void {
  if (!UID_PATTERN.test(uid) || uid.startsWith('.')) {
    throw new HandlerError('HANDLER_ERR_GHOST_RECORD_INVALID', `not a usable VMI UID for a ghost record: ${JSON.stringify(uid)}`);
  }
}

/** Parses one record file; the file name must equal the UID inside. */
export function parseGhostRecord(fileName: string, text: string): GhostRecord {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new HandlerError('HANDLER_ERR_GHOST_RECORD_INVALID', `ghost record ${fileName}: not JSON`, { cause: err });
  }
  const v = value as Partial<Record<keyof GhostRecord, unknown>> | null;
  const fields = ['name', 'namespace', 'socketFile', 'uid'] as const;
  for (const field of fields) {
    if (typeof v?.[field] !== 'string' || v[field] === '') {
      throw new HandlerError('HANDLER_ERR_GHOST_RECORD_INVALID', `ghost record ${fileName}: ${field} must be a non-empty string`);
    }
  }
  const record = v as GhostRecord;
  if (record.uid !== fileName) throw new HandlerError('HANDLER_ERR_GHOST_RECORD_INVALID', `ghost record ${fileName}: holds uid ${record.uid}`);
  return { name: record.name, namespace: record.namespace, socketFile: record.socketFile, uid: record.uid };
}
