// Writes a computed VMI status through the status subresource only when it changed, and on a
// conflict recomputes it on a freshly read object instead of overwriting someone's write.

import { jsonEqual, type VirtualMachineInstance, type VmiStatus } from '@podvirt/api';
import { isHandlerError } from '../handler-error.js';
import type { VmiApi } from './vmi-api.js';

// Three tries: the controller writes the same object now and again; more means something else.
const MAX_ATTEMPTS = 3;

export interface StatusWrite {
  /** The status the write replaced (of the object actually written over). */
  readonly before: VmiStatus;
  readonly after: VmiStatus;
  readonly written: boolean;
  readonly vmi: VirtualMachineInstance;
  /** The resourceVersion of the object written over. */
  readonly replacedVersion: string | undefined;
}

export async function writeStatus(
  api: VmiApi,
  vmi: VirtualMachineInstance,
  compute: (vmi: VirtualMachineInstance) => VmiStatus,
  signal: AbortSignal,
): Promise<StatusWrite | undefined> {
  let current = vmi;
  for (let attempt = 1; ; attempt++) {
    const before = current.status ?? {};
    const after = compute(current);
    const replacedVersion = current.metadata.resourceVersion;
    if (jsonEqual(before, after)) return { before, after, written: false, vmi: current, replacedVersion };
    try {
      const updated = await api.updateStatus({ ...current, status: after }, signal);
      return { before, after, written: true, vmi: updated, replacedVersion };
    } catch (err) {
      if (!isHandlerError(err, 'HANDLER_ERR_CONFLICT') || attempt >= MAX_ATTEMPTS) throw err;
      const fresh = await api.get(current.metadata.namespace ?? '', current.metadata.name ?? '', signal);
      // Deleted or replaced by a new VMI of the same name: this status no longer applies.
      if (fresh === undefined || fresh.metadata.uid !== vmi.metadata.uid) return undefined;
      current = fresh;
    }
  }
}
