// The one condition rule: a condition keeps its place, a new one is appended, lastTransitionTime
// moves only when the status flips, and an unchanged condition is kept object and all. Plus the
// one timestamp spelling.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { kubeTime, notLiveMigratableReason, removeCondition, upsertCondition, type VmiCondition } from '../src/index.js';

const T1 = '2026-01-01T00:00:00Z';
const T2 = '2026-01-01T00:01:00Z';
const T3 = '2026-01-01T00:02:00Z';

const list = (): VmiCondition[] => [
  { type: 'Ready', status: 'False', lastProbeTime: null, lastTransitionTime: T1, reason: 'GuestNotRunning', message: 'not yet' },
  { type: 'Paused', status: 'True', lastProbeTime: null, lastTransitionTime: T1, reason: 'PausedByUser' },
];

test('a changed condition keeps its place; a new one is appended', () => {
  const before = list();
  const after = upsertCondition(before, { type: 'Ready', status: 'True' }, T2);
  assert.deepEqual(after.map((c) => c.type), ['Ready', 'Paused']);
  assert.deepEqual(after[0], { type: 'Ready', status: 'True', lastProbeTime: null, lastTransitionTime: T2 });
  assert.equal(after[1], before[1], 'the others are the same objects');
  const added = upsertCondition(after, { type: 'AgentConnected', status: 'True' }, T3);
  assert.deepEqual(added.map((c) => c.type), ['Ready', 'Paused', 'AgentConnected']);
  assert.deepEqual(upsertCondition(undefined, { type: 'Ready', status: 'Unknown' }, T1), [{ type: 'Ready', status: 'Unknown', lastProbeTime: null, lastTransitionTime: T1 }]);
  assert.deepEqual(before, list(), 'the input is not changed');
});

test('lastTransitionTime moves only when the status flips; the caller may name it', () => {
  const before = list();
  const sameStatus = upsertCondition(before, { type: 'Ready', status: 'False', reason: 'PodTerminating', message: 'going' }, T2);
  assert.deepEqual(sameStatus[0], { type: 'Ready', status: 'False', lastProbeTime: null, lastTransitionTime: T1, reason: 'PodTerminating', message: 'going' });
  const flipped = upsertCondition(before, { type: 'Paused', status: 'False', lastTransitionTime: T3 }, T2);
  assert.equal(flipped[1]?.lastTransitionTime, T3, 'the time the caller knows');
  const fresh = upsertCondition(before, { type: 'X', status: 'True', lastTransitionTime: T3 }, T2);
  assert.equal(fresh[2]?.lastTransitionTime, T3);
  const unstamped: VmiCondition[] = [{ type: 'Ready', status: 'False', lastTransitionTime: null, reason: 'A' }];
  assert.equal(upsertCondition(unstamped, { type: 'Ready', status: 'False', reason: 'B' }, T2)[0]?.lastTransitionTime, T2, 'no time to keep');
});

test('an unchanged condition is kept as it was; empty reason and message count as absent', () => {
  const before = list();
  const after = upsertCondition(before, { type: 'Paused', status: 'True', reason: 'PausedByUser', message: '' }, T2);
  assert.notEqual(after, before, 'a new list');
  assert.equal(after[1], before[1], 'the very same condition');
  const written = upsertCondition(before, { type: 'New', status: 'True', reason: '', message: '' }, T2);
  assert.deepEqual(Object.keys(written[2] ?? {}), ['type', 'status', 'lastProbeTime', 'lastTransitionTime']);
});

test('removeCondition drops every condition of the type', () => {
  assert.deepEqual(removeCondition(list(), 'Ready').map((c) => c.type), ['Paused']);
  assert.deepEqual(removeCondition(undefined, 'Ready'), []);
});

test('kubeTime: whole seconds in UTC, from a Date or epoch milliseconds', () => {
  assert.equal(kubeTime(Date.UTC(2026, 0, 2, 3, 4, 5, 999)), '2026-01-02T03:04:05Z');
  assert.equal(kubeTime(new Date('2026-01-02T03:04:05.001+02:00')), '2026-01-02T01:04:05Z');
  assert.equal(kubeTime(0), '1970-01-01T00:00:00Z');
});

test('notLiveMigratableReason: undefined when LiveMigratable is True, else why, from the condition', () => {
  const of = (c?: { status: string; reason?: string; message?: string }) => ({ status: { conditions: c === undefined ? [] : [{ type: 'LiveMigratable', ...c }] } });
  assert.equal(notLiveMigratableReason(of({ status: 'True' })), undefined);
  assert.equal(notLiveMigratableReason(of()), 'it has no LiveMigratable condition yet');
  assert.equal(notLiveMigratableReason(of({ status: 'False', reason: 'DisksNotLiveMigratable', message: 'disk rootdisk is not shared' })), 'DisksNotLiveMigratable: disk rootdisk is not shared');
  assert.equal(notLiveMigratableReason(of({ status: 'False', reason: '', message: '' })), 'LiveMigratable=False');
});
