// The phase mapping and the status fields, as KubeVirt's virt-handler derives them from the domain, as tables.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { VmiPhase } from '@podvirt/api';
import type { cmd } from '@podvirt/proto';
import { LauncherState } from '../src/launcher/launcher-state.js';
import { computePhase } from '../src/reconcile/compute-phase.js';
import { computeStatus } from '../src/reconcile/compute-status.js';
import { defaultedOf, graceMark, makeDomain, makeVmi, T0, type VmiShape } from './fixtures.js';

interface PhaseRow {
  readonly vmi: VmiShape;
  readonly domain: cmd.Domain | undefined;
  readonly launcher?: LauncherState;
  readonly want: VmiPhase;
}

const phaseRows: Array<[string, PhaseRow]> = [
  ['Running/Booted → Running', { vmi: {}, domain: makeDomain('Running', 'Booted'), want: 'Running' }],
  ['Blocked → Running', { vmi: {}, domain: makeDomain('Blocked', 'Unknown'), want: 'Running' }],
  ['PMSuspended → Running', { vmi: {}, domain: makeDomain('PMSuspended', 'Unknown'), want: 'Running' }],
  ['Paused/User → Running', { vmi: { phase: 'Running' }, domain: makeDomain('Paused', 'User'), want: 'Running' }],
  ['Paused/IOError → Running', { vmi: { phase: 'Running' }, domain: makeDomain('Paused', 'IOError'), want: 'Running' }],
  ['Paused/PostcopyFailed → Failed', { vmi: { phase: 'Running' }, domain: makeDomain('Paused', 'PostcopyFailed'), want: 'Failed' }],
  ['Shutoff/Shutdown → Succeeded', { vmi: { phase: 'Running' }, domain: makeDomain('Shutoff', 'Shutdown'), want: 'Succeeded' }],
  ['Shutoff/Saved → Succeeded', { vmi: { phase: 'Running' }, domain: makeDomain('Shutoff', 'Saved'), want: 'Succeeded' }],
  ['Shutoff/FromSnapshot → Succeeded', { vmi: { phase: 'Running' }, domain: makeDomain('Shutoff', 'FromSnapshot'), want: 'Succeeded' }],
  ['Shutoff/Crashed → Failed', { vmi: { phase: 'Running' }, domain: makeDomain('Shutoff', 'Crashed'), want: 'Failed' }],
  ['Shutoff/Failed (qemu died) → Failed', { vmi: { phase: 'Running' }, domain: makeDomain('Shutoff', 'Failed'), want: 'Failed' }],
  ['Shutoff/Failed reported as the domain is given up → Failed', { vmi: { phase: 'Running' }, domain: makeDomain('Shutoff', 'Failed', { deleted: true }), want: 'Failed' }],
  ['Shutoff/Unknown, domain given up for good → Failed', { vmi: { phase: 'Running' }, domain: makeDomain('Shutoff', 'Unknown', { deleted: true }), want: 'Failed' }],
  ['Crashed/Panicked → Failed', { vmi: { phase: 'Running' }, domain: makeDomain('Crashed', 'Panicked'), want: 'Failed' }],
  ['Shutoff/Destroyed with ACPI and grace → Failed (grace ran out)', { vmi: { phase: 'Running', grace: 30 }, domain: makeDomain('Shutoff', 'Destroyed'), want: 'Failed' }],
  ['Shutoff/Destroyed with grace 0 → Succeeded', { vmi: { phase: 'Running', grace: 0 }, domain: makeDomain('Shutoff', 'Destroyed'), want: 'Succeeded' }],
  ['Shutoff/Destroyed with ACPI disabled → Succeeded', { vmi: { phase: 'Running', grace: 30, acpi: false }, domain: makeDomain('Shutoff', 'Destroyed'), want: 'Succeeded' }],
  ['Shutoff/Destroyed, grace only on the domain mark → Failed', { vmi: { phase: 'Running' }, domain: makeDomain('Shutoff', 'Destroyed', { gracefulShutdown: graceMark(T0, 10) }), want: 'Failed' }],
  ['Shutoff/Migrated keeps the phase', { vmi: { phase: 'Running' }, domain: makeDomain('Shutoff', 'Migrated'), want: 'Running' }],
  ['Shutoff/Unknown keeps the phase', { vmi: { phase: 'Scheduled' }, domain: makeDomain('Shutoff', 'Unknown'), want: 'Scheduled' }],
  ['ShuttingDown keeps the phase', { vmi: { phase: 'Running' }, domain: makeDomain('ShuttingDown', 'User'), want: 'Running' }],
  ['a deleted domain keeps how it stopped', { vmi: { phase: 'Running' }, domain: makeDomain('Shutoff', 'Shutdown', { deleted: true }), want: 'Succeeded' }],
  ['no domain, Scheduled, launcher ready → Scheduled', { vmi: {}, domain: undefined, want: 'Scheduled' }],
  ['no domain, Scheduled, launcher initialising → Scheduled', { vmi: {}, domain: undefined, launcher: LauncherState.Initializing, want: 'Scheduled' }],
  ['no domain, Scheduled, launcher gone → Failed', { vmi: {}, domain: undefined, launcher: LauncherState.Unresponsive, want: 'Failed' }],
  ['no domain, Running, launcher gone → Failed', { vmi: { phase: 'Running' }, domain: undefined, launcher: LauncherState.Unresponsive, want: 'Failed' }],
  ['no domain, Scheduled, being deleted, launcher ready → Failed at once', { vmi: { deleting: true }, domain: undefined, want: 'Failed' }],
  ['no domain, Scheduled, being deleted, launcher initialising → Failed at once', { vmi: { deleting: true }, domain: undefined, launcher: LauncherState.Initializing, want: 'Failed' }],
  ['no domain, Scheduled, being deleted, launcher not answering yet → waits', { vmi: { deleting: true }, domain: undefined, launcher: LauncherState.Unreachable, want: 'Scheduled' }],
  ['no domain, Pending → Scheduled', { vmi: { phase: 'Pending' }, domain: undefined, want: 'Scheduled' }],
  ['final phases never move', { vmi: { phase: 'Succeeded' }, domain: makeDomain('Running', 'Booted'), want: 'Succeeded' }],
  ['Failed stays Failed', { vmi: { phase: 'Failed' }, domain: makeDomain('Shutoff', 'Shutdown'), want: 'Failed' }],
];

for (const [name, row] of phaseRows) {
  test(`computePhase: ${name}`, () => {
    assert.equal(computePhase(makeVmi(row.vmi), defaultedOf(makeVmi(row.vmi)), row.domain, row.launcher ?? LauncherState.Ready), row.want);
  });
}

const ready = LauncherState.Ready;
const NOW = '2025-01-01T00:00:00Z';

test('computeStatus: Scheduled → Running with guest OS, interfaces, machine and agent; Ready left to the controller', () => {
  const vmi = makeVmi();
  vmi.spec.networks = [{ name: 'default', pod: {} }];
  vmi.spec.domain.devices.interfaces = [{ name: 'default', masquerade: {}, macAddress: '52:54:00:AA:BB:CC' }];
  const domain = makeDomain('Running', 'Booted', {
    agentConnected: true,
    machine: 'pc-q35-7.2',
    osInfo: { name: 'Debian GNU/Linux', kernelRelease: '6.1.0', version: '12', prettyName: 'Debian 12', versionId: '12', kernelVersion: '#1 SMP', machine: 'x86_64', id: 'debian' },
    interfaces: [
      { name: 'lo', mac: '00:00:00:00:00:00', ipAddresses: ['127.0.0.1'] },
      { name: 'eth0', mac: '52:54:00:aa:bb:cc', ipAddresses: ['10.0.2.2', 'fd10::2'] },
    ],
  });
  const status = computeStatus({ vmi, defaulted: defaultedOf(vmi), domain, launcher: ready, nowMs: T0 });
  assert.equal(status.phase, 'Running');
  assert.deepEqual(status.phaseTransitionTimestamps, [{ phase: 'Running', phaseTransitionTimestamp: NOW }]);
  assert.equal(status.guestOSInfo?.prettyName, 'Debian 12');
  assert.deepEqual(status.machine, { type: 'pc-q35-7.2' });
  assert.deepEqual(status.interfaces, [
    { name: 'default', mac: '52:54:00:aa:bb:cc', ipAddress: '10.0.2.2', ipAddresses: ['10.0.2.2', 'fd10::2'], interfaceName: 'eth0', infoSource: 'guest-agent' },
  ]);
  assert.deepEqual(status.conditions, [
    { type: 'AgentConnected', status: 'True', lastProbeTime: null, lastTransitionTime: NOW },
    { type: 'LiveMigratable', status: 'True', lastProbeTime: null, lastTransitionTime: NOW },
  ]);
  assert.equal(status.migrationMethod, 'BlockMigration', 'the container disk overlay moves with the memory');
  assert.equal(status.nodeName, 'node01', 'controller-owned fields are kept');
  assert.deepEqual(status.activePods, { p1: 'node01' });
});

test('computeStatus keeps the Ready condition the controller wrote, untouched', () => {
  const vmi = makeVmi({ phase: 'Running' });
  const controllerReady = { type: 'Ready', status: 'True', lastProbeTime: null, lastTransitionTime: '2024-12-31T00:00:00Z' } as const;
  vmi.status = { ...vmi.status, conditions: [controllerReady] };
  const status = computeStatus({ vmi, defaulted: defaultedOf(vmi), domain: makeDomain('Paused', 'User', { pausedByUser: true }), launcher: ready, nowMs: T0 });
  assert.deepEqual(status.conditions?.find((c) => c.type === 'Ready'), controllerReady);
});

test('computeStatus: unchanged inputs give an identical status (no write)', () => {
  const vmi = makeVmi({ phase: 'Running' });
  const domain = makeDomain('Running', 'Booted', { agentConnected: true });
  vmi.status = computeStatus({ vmi, defaulted: defaultedOf(vmi), domain, launcher: ready, nowMs: T0 });
  assert.deepEqual(computeStatus({ vmi, defaulted: defaultedOf(vmi), domain, launcher: ready, nowMs: T0 + 60_000 }), vmi.status);
});

test('computeStatus: Paused by the user, then unpaused; transition times move only on flips', () => {
  const vmi = makeVmi({ phase: 'Running' });
  vmi.status = computeStatus({ vmi, defaulted: defaultedOf(vmi), domain: makeDomain('Running', 'Booted'), launcher: ready, nowMs: T0 });
  vmi.status = computeStatus({ vmi, defaulted: defaultedOf(vmi), domain: makeDomain('Paused', 'User', { pausedByUser: true }), launcher: ready, nowMs: T0 + 5_000 });
  const paused = vmi.status.conditions?.find((c) => c.type === 'Paused');
  assert.deepEqual(paused, { type: 'Paused', status: 'True', lastProbeTime: null, lastTransitionTime: '2025-01-01T00:00:05Z', reason: 'PausedByUser' });
  vmi.status = computeStatus({ vmi, defaulted: defaultedOf(vmi), domain: makeDomain('Running', 'Unpaused'), launcher: ready, nowMs: T0 + 9_000 });
  assert.equal(vmi.status.conditions?.find((c) => c.type === 'Paused'), undefined);
  assert.equal(vmi.status.phaseTransitionTimestamps, undefined, 'Running was already the phase');
});

test('computeStatus: Paused on an I/O error says so', () => {
  const status = computeStatus({ vmi: makeVmi({ phase: 'Running' }), defaulted: defaultedOf(makeVmi({ phase: 'Running' })), domain: makeDomain('Paused', 'IOError'), launcher: ready, nowMs: T0 });
  assert.equal(status.conditions?.find((c) => c.type === 'Paused')?.reason, 'PausedIOError');
});

test('computeStatus: a sync failure sets Synchronized=False; success removes it', () => {
  const vmi = makeVmi();
  const message = 'invalid VirtualMachineInstance: spec.domain.devices.gpus[0]: Unsupported value: podvirt does not support this field';
  vmi.status = computeStatus({ vmi, defaulted: defaultedOf(vmi), domain: undefined, launcher: ready, syncFailure: { message }, nowMs: T0 });
  assert.equal(vmi.status.phase, 'Scheduled');
  assert.deepEqual(vmi.status.conditions?.find((c) => c.type === 'Synchronized'), {
    type: 'Synchronized', status: 'False', lastProbeTime: null, lastTransitionTime: NOW, reason: 'Synchronizing with the Domain failed.', message,
  });
  vmi.status = computeStatus({ vmi, defaulted: defaultedOf(vmi), domain: makeDomain('Running', 'Booted'), launcher: ready, nowMs: T0 + 1000 });
  assert.equal(vmi.status.conditions?.find((c) => c.type === 'Synchronized'), undefined);
});

test('computeStatus: a fatal failure goes Failed with a reason', () => {
  const status = computeStatus({ vmi: makeVmi(), defaulted: defaultedOf(makeVmi()), domain: undefined, launcher: ready, syncFailure: { message: 'no common version', fatalReason: 'LauncherIncompatible' }, nowMs: T0 });
  assert.equal(status.phase, 'Failed');
  assert.equal(status.reason, 'LauncherIncompatible');
  assert.deepEqual(status.phaseTransitionTimestamps, [{ phase: 'Failed', phaseTransitionTimestamp: NOW }]);
});

test('computeStatus: fsFreezeStatus follows the domain', () => {
  const vmi = makeVmi({ phase: 'Running' });
  vmi.status = computeStatus({ vmi, defaulted: defaultedOf(vmi), domain: makeDomain('Running', 'Booted', { fsFreezeStatus: 'frozen' }), launcher: ready, nowMs: T0 });
  assert.equal(vmi.status.fsFreezeStatus, 'frozen');
  vmi.status = computeStatus({ vmi, defaulted: defaultedOf(vmi), domain: makeDomain('Running', 'Booted'), launcher: ready, nowMs: T0 });
  assert.equal(vmi.status.fsFreezeStatus, undefined);
});

test('computeStatus: a Running VMI whose launcher is gone goes Failed; a final VMI is left alone', () => {
  const vmi = makeVmi({ phase: 'Running' });
  const failed = computeStatus({ vmi, defaulted: defaultedOf(vmi), domain: makeDomain('Running', 'Booted', { agentConnected: true }), launcher: LauncherState.Unresponsive, nowMs: T0 });
  assert.equal(failed.phase, 'Failed');
  assert.equal(failed.conditions?.find((c) => c.type === 'AgentConnected'), undefined);
  const done = makeVmi({ phase: 'Succeeded' });
  assert.equal(computeStatus({ vmi: done, defaulted: defaultedOf(done), domain: undefined, launcher: LauncherState.Unresponsive, nowMs: T0 }), done.status);
});
