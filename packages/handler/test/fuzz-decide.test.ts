// decide() over generated VMIs, domains, launcher states and times, including what a VMI from
// the API may hold that decode would refuse (the handler reads the informer's objects): it
// never throws, chooses a known action, and every requeue delay is a finite, bounded number
// (a NaN delay would be a timer of 1 ms, retried forever: a write storm).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { VMI_PHASES, type VirtualMachineInstance } from '@podvirt/api';
import { cmd } from '@podvirt/proto';
import fc from 'fast-check';
import { LauncherState } from '../src/launcher/launcher-state.js';
import { decide } from '../src/reconcile/decide.js';
import { defaultedOf, makeVmi, T0 } from './fixtures.js';

const ACTIONS = new Set(['sync', 'shutdown', 'kill', 'delete', 'updateStatus', 'nothing']);
// The longest wait decide() chooses is the slow-start window; anything longer is a mistake.
const MAX_REQUEUE_MS = 5 * 60_000;

const oddNumber = fc.oneof(fc.integer(), fc.double(), fc.constantFrom(0, -1, 2 ** 53, 2 ** 63, Number.NaN, Infinity, -Infinity));
const oddValue = fc.oneof(oddNumber, fc.string({ maxLength: 6 }), fc.constantFrom(null, undefined, true, {}, []));
const timestamp = fc.oneof(
  fc.integer({ min: -600_000, max: 600_000 }).map((d) => new Date(T0 + d).toISOString()),
  fc.constantFrom('', 'not a time', '9999-99-99T00:00:00Z'),
);

const vmiArb = fc
  .record({
    phase: fc.oneof(fc.constantFrom(...VMI_PHASES), fc.string({ maxLength: 5 })),
    deleting: fc.boolean(),
    grace: fc.oneof(fc.integer({ min: 0, max: 120 }), oddValue),
    acpi: fc.boolean(),
    stamps: fc.array(fc.record({ phase: fc.constantFrom(...VMI_PHASES), phaseTransitionTimestamp: timestamp }), { maxLength: 3 }),
  })
  .map(({ phase, deleting, grace, acpi, stamps }) => {
    const vmi = makeVmi({ deleting, acpi, grace: 0 }) as unknown as { spec: Record<string, unknown>; status: Record<string, unknown> };
    vmi.spec['terminationGracePeriodSeconds'] = grace;
    vmi.status = { ...vmi.status, phase, phaseTransitionTimestamps: stamps };
    return vmi as unknown as VirtualMachineInstance;
  });

const domainArb = fc.option(
  fc
    .record({
      state: fc.constantFrom('Running', 'Blocked', 'Paused', 'ShuttingDown', 'Shutoff', 'Crashed', 'PMSuspended', 'NoState', '', 'Bogus'),
      reason: fc.constantFrom('Booted', 'Unpaused', 'User', 'Shutdown', 'Destroyed', 'Crashed', 'Failed', 'Saved', 'IOError', 'Unknown', ''),
      deleted: fc.boolean(),
      mark: fc.option(fc.record({ started: fc.boolean(), startedAtMs: fc.oneof(fc.integer({ min: T0 - 600_000, max: T0 + 600_000 }), oddNumber), gracePeriodSeconds: fc.oneof(fc.integer({ min: 0, max: 120 }), oddNumber) })),
    })
    .map(({ state, reason, deleted, mark }) =>
      cmd.Domain.fromPartial({
        name: 'default_vm1', vmiUid: 'uid-1', namespace: 'default', vmiName: 'vm1', state, reason, deleted,
        ...(mark ? { gracefulShutdown: { ...mark, deadlineMs: 0 } } : {}),
      }),
    ),
  { nil: undefined },
);

test('fuzz: decide() always chooses a known action with a bounded delay', () => {
  fc.assert(
    fc.property(
      fc.option(vmiArb, { nil: undefined }),
      domainArb,
      fc.constantFrom(...Object.values(LauncherState)),
      fc.integer({ min: T0 - 600_000, max: T0 + 3_600_000 }),
      (vmi, domain, launcher, now) => {
        const action = decide(vmi, defaultedOf(vmi), domain, launcher, now);
        assert.ok(ACTIONS.has(action.type), JSON.stringify(action));
        if ('requeueAfterMs' in action && action.requeueAfterMs !== undefined) {
          const ms = action.requeueAfterMs;
          assert.ok(Number.isFinite(ms) && ms >= 0 && ms <= MAX_REQUEUE_MS, `requeue after ${ms} ms: ${JSON.stringify(action)}`);
        }
      },
    ),
    { numRuns: Number(process.env['PODVIRT_FUZZ_RUNS'] ?? 2000), seed: Number(process.env['PODVIRT_FUZZ_SEED'] ?? 20_261_123) },
  );
});
