// The one rule for a failed Sync, pure: is it worth retrying, or has the VMI failed?
// Decided on the error's code alone (the launcher's own code travels in a gRPC trailer), never
// on its text. Retrying is the default: only a failure that retrying cannot cure ends the VMI.

import { HandlerError, type HandlerErrorCode } from '../handler-error.js';
import type { SyncFailure } from './compute-status.js';

/** `status.reason` of a VMI failed because its launcher could not prepare a volume. */
export const VOLUME_PREPARATION_FAILED = 'VolumePreparationFailed';

// Codes that fail the VMI, with the status.reason they write. Everything else is retried with
// backoff: transient trouble (UNAVAILABLE, DEADLINE_EXCEEDED, a daemon restart) may pass, and a
// refused spec (INVALID_ARGUMENT, what the node lacks) stays Synchronized=False until it changes.
const FATAL: ReadonlyMap<HandlerErrorCode, string> = new Map([
  // A volume that cannot be created or prepared (an emptyDisk larger than the pod's
  // filesystem, a missing disk image or block device): the same step fails on every retry.
  ['HANDLER_ERR_LAUNCHER_VOLUME', VOLUME_PREPARATION_FAILED],
  // No common Cmd version: this launcher will never understand this handler.
  ['HANDLER_ERR_LAUNCHER_INCOMPATIBLE', 'LauncherIncompatible'],
]);

export function syncFailure(err: unknown): SyncFailure {
  const message = err instanceof Error ? err.message : String(err);
  const fatalReason = err instanceof HandlerError ? FATAL.get(err.code) : undefined;
  return fatalReason === undefined ? { message } : { message, fatalReason };
}
