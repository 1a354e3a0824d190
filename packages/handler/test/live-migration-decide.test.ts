// The pure halves of live migration in the handler: which role this node plays, the target's
// and the source's decisions as tables, which launcher progress belongs to this migration,
// the fields each side writes (and keeps), and the migration flags.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { kubeTime, type VmiMigrationState, type VmiStatus } from '@podvirt/api';
import { cmd } from '@podvirt/proto';
import { decideSource, progressOf, type SourceInput } from '../src/live-migration/decide-source.js';
import { decideTarget, type TargetInput } from '../src/live-migration/decide-target.js';
import { withSourceFields, withTargetFields } from '../src/live-migration/migration-fields.js';
import { migrationRole } from '../src/live-migration/migration-role.js';
import { DEFAULT_MIGRATION_SETTINGS, MIGRATION_OPTIONS, parseMigrationSettings } from '../src/live-migration/migration-settings.js';
import { parseHandlerArgs } from '../src/handler-args.js';
import { isHandlerError } from '../src/handler-error.js';
import { LauncherState } from '../src/launcher/launcher-state.js';
import { makeDomain, makeVmi, NODE, T0 } from './fixtures.js';

const TARGET = 'node02';
const MS: VmiMigrationState = { migrationUid: 'mig-1', sourceNode: NODE, sourcePod: 'p1', targetNode: TARGET, targetPod: 'p2' };
const progress = (p: Partial<cmd.MigrationProgress>): cmd.MigrationProgress => cmd.MigrationProgress.fromPartial({ startedAtMs: T0, mode: 'PreCopy', ...p });

test('role: source on the owning node, target on the named node until the hand-over, none otherwise', () => {
  const vmi = makeVmi({ phase: 'Running' });
  assert.equal(migrationRole(vmi, NODE), 'none', 'no migration');
  vmi.status = { ...vmi.status, migrationState: MS };
  assert.equal(migrationRole(vmi, NODE), 'source');
  assert.equal(migrationRole(vmi, TARGET), 'target');
  assert.equal(migrationRole(vmi, 'node03'), 'none');
  vmi.status.nodeName = TARGET; // the hand-over
  assert.equal(migrationRole(vmi, TARGET), 'none', 'the target owns it: the ordinary reconcile');
  assert.equal(migrationRole(vmi, NODE), 'none', 'the source is out of it');
  vmi.status = { ...vmi.status, nodeName: NODE, migrationState: { ...MS, targetNode: NODE } };
  assert.equal(migrationRole(vmi, NODE), 'none', 'a migration onto its own node is nobody\'s');
});

test('target decisions', () => {
  const running = makeDomain('Running', 'Migrated');
  const incoming = makeDomain('Paused', 'Migration');
  const rows: Array<[string, Partial<TargetInput>, string]> = [
    ['launcher initialising', { launcher: LauncherState.Initializing }, 'nothing'],
    ['launcher not answering', { launcher: LauncherState.Unreachable }, 'nothing'],
    ['ready, nothing open: prepare', {}, 'prepare'],
    ['ready, open: wait for the source', { endpointOpen: true }, 'nothing'],
    ['incoming domain: never prepare over it', { domain: incoming }, 'nothing'],
    ['guest runs here after the switch', { endpointOpen: true, domain: running }, 'detected'],
    ['a paused guest arrives paused by the user', { endpointOpen: true, domain: makeDomain('Paused', 'User') }, 'detected'],
    ['already detected', { endpointOpen: true, domain: running, migrationState: { ...MS, targetNodeDomainDetected: true } }, 'nothing'],
    ['failed: close', { endpointOpen: true, migrationState: { ...MS, failed: true } }, 'close'],
    ['target launcher gone: close', { endpointOpen: true, launcher: LauncherState.Unresponsive }, 'close'],
    ['completed, not detected yet, launcher silent', { launcher: LauncherState.Unreachable, migrationState: { ...MS, completed: true } }, 'nothing'],
  ];
  for (const [why, input, want] of rows) {
    const got = decideTarget({ migrationState: MS, launcher: LauncherState.Ready, domain: undefined, endpointOpen: false, ...input });
    assert.equal(got.type, want, why);
  }
});

test('source decisions', () => {
  const ready: VmiMigrationState = { ...MS, targetNodeAddress: '10.0.0.2', targetDirectMigrationNodePorts: { '40001': 0, '40002': 49152, '40003': 49153 } };
  const running = makeDomain('Running', 'Booted');
  const rows: Array<[string, Partial<SourceInput>, string, boolean?]> = [
    ['target not ready', { migrationState: MS }, 'none', false],
    ['target ready: migrate', {}, 'migrate'],
    ['launcher not ready', { launcher: LauncherState.Unreachable }, 'none', false],
    ['domain down', { domain: makeDomain('Shutoff', 'Shutdown') }, 'none', false],
    ['running: hold', { progress: progress({ phase: 'Running' }) }, 'none', true],
    ['abort requested while running: cancel', { migrationState: { ...ready, abortRequested: true }, progress: progress({ phase: 'Running' }) }, 'cancel'],
    ['abort already passed on', { migrationState: { ...ready, abortRequested: true }, progress: progress({ phase: 'Running', abortRequested: true }) }, 'none', true],
    ['VMI deleted while running: cancel', { deleting: true, progress: progress({ phase: 'Running' }) }, 'cancel'],
    ['VMI deleted before the start: never start', { deleting: true }, 'none', false],
    ['abort before the start', { migrationState: { ...ready, abortRequested: true } }, 'abortUnstarted'],
    ['succeeded: the guest left, hold', { progress: progress({ phase: 'Succeeded' }) }, 'none', true],
    ['domain shut off as migrated', { domain: makeDomain('Shutoff', 'Migrated') }, 'none', true],
    ['failed: the guest stays, ordinary reconcile', { progress: progress({ phase: 'Failed' }) }, 'none', false],
    ['started, no progress here: hold', { migrationState: { ...ready, startTimestamp: kubeTime(T0) } }, 'none', true],
    ['Migrate called, report on its way: hold', { migrateCalled: true }, 'none', true],
  ];
  for (const [why, input, want, hold] of rows) {
    const got = decideSource({ migrationState: ready, launcher: LauncherState.Ready, domain: running, progress: undefined, migrateCalled: false, deleting: false, ...input });
    assert.equal(got.type, want, why);
    if (hold !== undefined && got.type === 'none') assert.equal(got.hold, hold, `${why}: hold`);
  }
});

test('progress: only this migration\'s, never an earlier one\'s', () => {
  const withProgress = (p: Partial<cmd.MigrationProgress>): cmd.Domain => makeDomain('Running', 'Booted', { migration: progress(p) });
  assert.equal(progressOf(MS, makeDomain('Running', 'Booted'), undefined), undefined);
  assert.equal(progressOf(MS, withProgress({ phase: 'Running' }), undefined)?.phase, 'Running', 'one running is this one');
  assert.equal(progressOf(MS, withProgress({ phase: 'Failed' }), undefined), undefined, 'an ended one with nothing recorded is older');
  assert.equal(progressOf(MS, withProgress({ phase: 'Failed' }), { previousStartMs: undefined })?.phase, 'Failed', 'ended after our Migrate');
  assert.equal(progressOf(MS, withProgress({ phase: 'Failed' }), { previousStartMs: T0 }), undefined, 'the same one as before our Migrate');
  const started = { ...MS, startTimestamp: kubeTime(T0) };
  assert.equal(progressOf(started, withProgress({ phase: 'Succeeded' }), undefined)?.phase, 'Succeeded', 'matches the recorded start');
  assert.equal(progressOf(started, withProgress({ phase: 'Succeeded', startedAtMs: T0 + 60_000 }), undefined), undefined);
});

test('each side writes its own fields and keeps everything else as read', () => {
  const status: VmiStatus = { phase: 'Running', nodeName: NODE, conditions: [{ type: 'Ready', status: 'True' }], migrationState: { ...MS, abortRequested: true } };
  const target = withTargetFields(status, 'mig-1', { address: '10.0.0.2', ports: { '40001': 0 }, detectedAtMs: T0 });
  assert.deepEqual(target, {
    ...status,
    migrationState: { ...status.migrationState, targetNodeAddress: '10.0.0.2', targetDirectMigrationNodePorts: { '40001': 0 }, targetNodeDomainDetected: true, targetNodeDomainReadyTimestamp: kubeTime(T0) },
  });
  assert.equal(withTargetFields(status, 'mig-2', { address: 'x' }), status, 'another migration: unchanged');

  const ended = withSourceFields(status, 'mig-1', { progress: progress({ phase: 'Failed', endedAtMs: T0 + 5_000, failureReason: 'no progress', abortStatus: 'Succeeded', dataRemaining: 7 }) });
  assert.deepEqual(ended.migrationState, {
    ...status.migrationState, startTimestamp: kubeTime(T0), mode: 'PreCopy', abortStatus: 'Succeeded', endTimestamp: kubeTime(T0 + 5_000), failed: true, failureReason: 'no progress',
  });
  assert.equal(ended.phase, 'Running');
  assert.deepEqual(ended.conditions, status.conditions);
  // Counters are never written: two reports that differ only in them make the same status.
  const a = withSourceFields(status, 'mig-1', { progress: progress({ phase: 'Running', dataRemaining: 100, iterations: 1 }) });
  const b = withSourceFields(status, 'mig-1', { progress: progress({ phase: 'Running', dataRemaining: 5, iterations: 3 }) });
  assert.deepEqual(a, b);
  const concluded = withSourceFields(status, 'mig-1', { ended: { atMs: T0, completed: true } });
  assert.equal(concluded.migrationState?.completed, true);
  assert.equal(withSourceFields(concluded, 'mig-1', { ended: { atMs: T0 + 1, completed: false, reason: 'late' } }).migrationState?.failed, undefined, 'an end is never rewritten');
});

test('migration flags: KubeVirt\'s defaults, the one duration grammar, post-copy refused by name', () => {
  assert.deepEqual(parseHandlerArgs([], { NODE_NAME: 'n' }).migration, DEFAULT_MIGRATION_SETTINGS);
  const args = parseHandlerArgs(['--migration-bandwidth', '64', '--migration-progress-timeout', '2m30s', '--migration-completion-timeout-per-gib', '1500ms', '--migration-allow-auto-converge'], { NODE_NAME: 'n' });
  assert.deepEqual(args.migration, { bandwidthMiBs: 64, progressTimeoutSeconds: 150, completionTimeoutPerGibSeconds: 2, allowAutoConverge: true });
  assert.equal(parseHandlerArgs(['--migration-progress-timeout', '0s'], { NODE_NAME: 'n' }).migration.progressTimeoutSeconds, 0, '0: never');
  const refused = (argv: string[], text: RegExp): void => {
    assert.throws(() => parseHandlerArgs(argv, { NODE_NAME: 'n' }), (err) => isHandlerError(err, 'HANDLER_ERR_INVALID_ARGS') && text.test(err.message));
  };
  refused(['--migration-allow-post-copy'], /--migration-allow-post-copy: podvirt migrates pre-copy only \(allowPostCopy/);
  refused(['--migration-bandwidth', '1.5'], /--migration-bandwidth/);
  refused(['--migration-bandwidth=-1'], /--migration-bandwidth/);
  refused(['--migration-progress-timeout', 'soon'], /--migration-progress-timeout: "soon" is not a duration/);
  refused(['--migration-completion-timeout-per-gib=-5s'], /--migration-completion-timeout-per-gib: "-5s" is negative/);
  assert.equal(Object.keys(MIGRATION_OPTIONS).length, 5);
  assert.throws(() => parseMigrationSettings({ ...defaults(), 'migration-progress-timeout': '200000000h' }), /too long/);
});

function defaults() {
  return { 'migration-bandwidth': '0', 'migration-progress-timeout': '150s', 'migration-completion-timeout-per-gib': '150s', 'migration-allow-auto-converge': false, 'migration-allow-post-copy': false };
}

test('the migration proxy flags go together; without them no migration is acted on', () => {
  assert.equal(parseHandlerArgs([], { NODE_NAME: 'n' }).migrationProxy, undefined);
  assert.deepEqual(parseHandlerArgs(['--migration-tls-dir', '/etc/m', '--migration-address', '10.0.0.1'], { NODE_NAME: 'n' }).migrationProxy, { tlsDir: '/etc/m', address: '10.0.0.1' });
  assert.deepEqual(parseHandlerArgs(['--migration-address', '10.0.0.1'], { NODE_NAME: 'n' }).migrationProxy, { tlsDir: '/etc/podvirt-handler/migration-certificates', address: '10.0.0.1' }, 'the Secret\'s mount path by default');
  for (const argv of [['--migration-tls-dir', '/etc/m'], ['--migration-tls-dir=/etc/m'], ['--migration-tls-dir', '', '--migration-address', 'x']]) {
    assert.throws(() => parseHandlerArgs(argv, { NODE_NAME: 'n' }), (err) => isHandlerError(err, 'HANDLER_ERR_INVALID_ARGS') && /go together/.test(err.message));
  }
});
