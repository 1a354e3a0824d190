// The one rule for a failed Sync, as a table: which errors fail the VMI and which are retried.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { VmiInvalidError } from '@podvirt/api';
import { HandlerError, type HandlerErrorCode } from '../src/handler-error.js';
import { syncFailure, VOLUME_PREPARATION_FAILED } from '../src/reconcile/sync-failure.js';

const rows: Array<[string, unknown, string | undefined]> = [
  // Retrying cannot cure these: the VMI fails with the reason.
  ['a volume the launcher cannot prepare (emptyDisk larger than the pod filesystem)', handlerError('HANDLER_ERR_LAUNCHER_VOLUME'), VOLUME_PREPARATION_FAILED],
  ['a launcher with no common Cmd version', handlerError('HANDLER_ERR_LAUNCHER_INCOMPATIBLE'), 'LauncherIncompatible'],
  // Transient: retried with backoff.
  ['UNAVAILABLE (libvirt daemon restarting)', handlerError('HANDLER_ERR_LAUNCHER_UNAVAILABLE'), undefined],
  ['DEADLINE_EXCEEDED', handlerError('HANDLER_ERR_LAUNCHER_TIMEOUT'), undefined],
  ['no launcher socket yet', handlerError('HANDLER_ERR_NO_LAUNCHER_SOCKET'), undefined],
  ['INTERNAL (libvirt error)', handlerError('HANDLER_ERR_LAUNCHER_INTERNAL'), undefined],
  // A refused spec: Synchronized=False until the spec changes.
  ['INVALID_ARGUMENT by field', handlerError('HANDLER_ERR_INVALID_VMI'), undefined],
  ['a node-capability FAILED_PRECONDITION', handlerError('HANDLER_ERR_LAUNCHER_PRECONDITION'), undefined],
  ['local validation', new VmiInvalidError([{ field: 'spec.domain.cpu.cores', type: 'Invalid', message: 'must be positive' }]), undefined],
  ['anything else', new Error('boom'), undefined],
];

for (const [name, err, want] of rows) {
  test(`syncFailure: ${name} → ${want ?? 'retry'}`, () => {
    const failure = syncFailure(err);
    assert.equal(failure.fatalReason, want);
    assert.equal(failure.message, (err as Error).message);
  });
}

function handlerError(code: HandlerErrorCode): HandlerError {
  return new HandlerError(code, `sync: spec.volumes[0].emptyDisk.capacity: ${code}`);
}
