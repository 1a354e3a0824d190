// decide() against the rows of the decision table of `sync` in KubeVirt's pkg/virt-handler/vm.go.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { VirtualMachineInstance } from '@podvirt/api';
import type { cmd } from '@podvirt/proto';
import { LauncherState } from '../src/launcher/launcher-state.js';
import type { Action } from '../src/reconcile/action.js';
import { decide } from '../src/reconcile/decide.js';
import { defaultedOf, graceMark, makeDomain, makeVmi, T0 } from './fixtures.js';

const R = LauncherState.Ready;

interface Row {
  readonly name: string;
  readonly vmi: VirtualMachineInstance | undefined;
  readonly domain: cmd.Domain | undefined;
  readonly launcher?: LauncherState;
  readonly now?: number;
  readonly want: Action;
}

const running = makeDomain('Running', 'Booted');

const rows: Row[] = [
  // Domain unknown
  { name: 'launcher not answering yet: skip everything', vmi: makeVmi({ phase: 'Running' }), domain: running, launcher: LauncherState.Unreachable,
    want: { type: 'nothing', why: 'launcher not answering yet', requeueAfterMs: 1000 } },
  // Row 2: VMI gone
  { name: 'VMI gone, domain alive: graceful shutdown (grace from the domain mark)', vmi: undefined,
    domain: makeDomain('Running', 'Booted', { gracefulShutdown: { started: false, startedAtMs: 0, gracePeriodSeconds: 30, deadlineMs: 0 } }),
    want: { type: 'shutdown', send: true, first: true, requeueAfterMs: 5000 } },
  { name: 'VMI gone, domain down: undefine and clean up', vmi: undefined, domain: makeDomain('Shutoff', 'Shutdown'),
    want: { type: 'delete', undefine: true, cleanup: true } },
  { name: 'VMI gone, launcher gone: clean up only', vmi: undefined, domain: running, launcher: LauncherState.Unresponsive,
    want: { type: 'delete', undefine: false, cleanup: true } },
  // Row 3: VMI deleting
  { name: 'deleting, grace 0: kill at once', vmi: makeVmi({ phase: 'Running', deleting: true, grace: 0 }), domain: running,
    want: { type: 'kill', reason: 'no-grace', requeueAfterMs: 1000 } },
  { name: 'deleting, first attempt: Shutdown, requeue in 5 s', vmi: makeVmi({ phase: 'Running', deleting: true, grace: 30 }), domain: running,
    want: { type: 'shutdown', send: true, first: true, requeueAfterMs: 5000 } },
  { name: 'deleting, guest still running 10 s in: Shutdown re-sent, not first', vmi: makeVmi({ phase: 'Running', deleting: true, grace: 30 }),
    domain: makeDomain('Running', 'Booted', { gracefulShutdown: graceMark(T0 - 10_000, 30) }),
    want: { type: 'shutdown', send: true, first: false, requeueAfterMs: 5000 } },
  { name: 'deleting, guest shutting down: no re-send', vmi: makeVmi({ phase: 'Running', deleting: true, grace: 30 }),
    domain: makeDomain('ShuttingDown', 'User', { gracefulShutdown: graceMark(T0 - 10_000, 30) }),
    want: { type: 'shutdown', send: false, first: false, requeueAfterMs: 5000 } },
  { name: 'deleting, 2 s of grace left: look again in 2 s', vmi: makeVmi({ phase: 'Running', deleting: true, grace: 30 }),
    domain: makeDomain('Running', 'Booted', { gracefulShutdown: graceMark(T0 - 28_000, 30) }),
    want: { type: 'shutdown', send: true, first: false, requeueAfterMs: 2000 } },
  { name: 'deleting, grace expired: kill', vmi: makeVmi({ phase: 'Running', deleting: true, grace: 30 }),
    domain: makeDomain('ShuttingDown', 'User', { gracefulShutdown: graceMark(T0 - 30_000, 30) }),
    want: { type: 'kill', reason: 'grace-expired', requeueAfterMs: 1000 } },
  { name: 'deleting, no grace on the VMI: its default (30 s) decides, not a domain mark', vmi: makeVmi({ phase: 'Running', deleting: true }),
    domain: makeDomain('Running', 'Booted', { gracefulShutdown: graceMark(T0 - 6_000, 5) }),
    want: { type: 'shutdown', send: true, first: false, requeueAfterMs: 5_000 } },
  { name: 'deleting, a VMI that no longer decodes: the domain mark decides', vmi: makeVmi({ phase: 'Running', deleting: true, grace: -1 }),
    domain: makeDomain('Running', 'Booted', { gracefulShutdown: graceMark(T0 - 6_000, 5) }),
    want: { type: 'kill', reason: 'grace-expired', requeueAfterMs: 1000 } },
  { name: 'deleting, domain down: undefine, keep state until final', vmi: makeVmi({ phase: 'Running', deleting: true }),
    domain: makeDomain('Shutoff', 'Shutdown'), want: { type: 'delete', undefine: true, cleanup: false } },
  // Row 1: launcher got SIGTERM
  { name: 'launcher marked for graceful shutdown, VMI Running: continue the shutdown', vmi: makeVmi({ phase: 'Running', grace: 30 }),
    domain: makeDomain('ShuttingDown', 'User', { gracefulShutdown: graceMark(T0 - 1_000, 30) }),
    want: { type: 'shutdown', send: false, first: false, requeueAfterMs: 5000 } },
  // Row 4: final
  { name: 'VMI Succeeded: undefine what is left and clean up', vmi: makeVmi({ phase: 'Succeeded' }), domain: makeDomain('Shutoff', 'Shutdown'),
    want: { type: 'delete', undefine: true, cleanup: true } },
  { name: 'VMI Failed, no domain: clean up', vmi: makeVmi({ phase: 'Failed' }), domain: undefined,
    want: { type: 'delete', undefine: false, cleanup: true } },
  // Row 5: domain stopped by itself
  { name: 'domain crashed while Running: undefine (status goes Failed)', vmi: makeVmi({ phase: 'Running' }), domain: makeDomain('Crashed', 'Panicked'),
    want: { type: 'delete', undefine: true, cleanup: false } },
  { name: 'Shutoff/Unknown just after Scheduled: qemu may still start', vmi: makeVmi({ phase: 'Scheduled', scheduledAtMs: T0 - 60_000 }),
    domain: makeDomain('Shutoff', 'Unknown'), want: { type: 'nothing', why: 'qemu may still be starting', requeueAfterMs: 5000 } },
  { name: 'Shutoff/Unknown 6 min after Scheduled: give up and undefine', vmi: makeVmi({ phase: 'Scheduled', scheduledAtMs: T0 - 360_000 }),
    domain: makeDomain('Shutoff', 'Unknown'), want: { type: 'delete', undefine: true, cleanup: false } },
  // Row 6: keep in sync
  { name: 'Scheduled, no domain, launcher ready: sync (define and start)', vmi: makeVmi(), domain: undefined, want: { type: 'sync' } },
  { name: 'Scheduled, launcher initialising: look again in 200 ms', vmi: makeVmi(), domain: undefined, launcher: LauncherState.Initializing,
    want: { type: 'nothing', why: 'launcher initialising', requeueAfterMs: 200 } },
  { name: 'Scheduled, launcher gone: status only (goes Failed)', vmi: makeVmi(), domain: undefined, launcher: LauncherState.Unresponsive,
    want: { type: 'updateStatus' } },
  { name: 'Running VMI whose launcher went silent: status only', vmi: makeVmi({ phase: 'Running' }), domain: running, launcher: LauncherState.Unresponsive,
    want: { type: 'updateStatus' } },
  { name: 'Scheduled, domain running: phase catches up first', vmi: makeVmi(), domain: running, want: { type: 'updateStatus' } },
  // Sync would change nothing of a running domain or one the user paused: status only.
  { name: 'Running, domain running: status only', vmi: makeVmi({ phase: 'Running' }), domain: running, want: { type: 'updateStatus' } },
  { name: 'Running, paused by the user: status only (the launcher keeps user pauses)', vmi: makeVmi({ phase: 'Running' }),
    domain: makeDomain('Paused', 'User', { pausedByUser: true }), want: { type: 'updateStatus' } },
  { name: 'Running, paused by an I/O error: sync (the launcher resumes it)', vmi: makeVmi({ phase: 'Running' }),
    domain: makeDomain('Paused', 'IOError'), want: { type: 'sync' } },
  { name: 'Running, paused by the user while an I/O error had paused it: status only', vmi: makeVmi({ phase: 'Running' }),
    domain: makeDomain('Paused', 'IOError', { pausedByUser: true }), want: { type: 'updateStatus' } },
];

for (const row of rows) {
  test(`decide: ${row.name}`, () => {
    assert.deepEqual(decide(row.vmi, defaultedOf(row.vmi), row.domain, row.launcher ?? R, row.now ?? T0), row.want);
  });
}
