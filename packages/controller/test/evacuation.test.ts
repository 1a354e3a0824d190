import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import pino from 'pino';
import type { EvictionStrategy, VirtualMachineInstance, VirtualMachineInstanceMigration } from '@podvirt/api';
import { decideEvacuation, EVACUATION_ANNOTATION, EVACUATION_BACKOFF_MS } from '../src/decide/decide-evacuation.js';
import { EvacuationController } from '../src/reconcile/evacuation-controller.js';
import type { EvacuationClient } from '../src/kube/cluster-roles.js';

const NOW = new Date('2026-01-01T12:00:00Z');

function vmi(over: { mark?: string; node?: string; migratable?: boolean; strategy?: EvictionStrategy; phase?: string; deleting?: boolean } = {}): VirtualMachineInstance {
  return {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachineInstance',
    metadata: { name: 'vm1', namespace: 'default', uid: 'u1', ...(over.deleting === true ? { deletionTimestamp: NOW.toISOString() } : {}) },
    spec: { domain: { devices: {} }, ...(over.strategy === undefined ? {} : { evictionStrategy: over.strategy }) },
    status: {
      phase: (over.phase ?? 'Running') as 'Running',
      nodeName: over.node ?? 'node-a',
      conditions: [{ type: 'LiveMigratable', status: over.migratable === false ? 'False' : 'True' }],
      ...(over.mark === undefined ? {} : { evacuationNodeName: over.mark }),
    },
  } as VirtualMachineInstance;
}

function migration(name: string, phase: string | undefined, over: { evacuatedFrom?: string; failedAgoMs?: number } = {}): VirtualMachineInstanceMigration {
  return {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachineInstanceMigration',
    metadata: { name, namespace: 'default', ...(over.evacuatedFrom === undefined ? {} : { annotations: { [EVACUATION_ANNOTATION]: over.evacuatedFrom } }) },
    spec: { vmiName: 'vm1' },
    status: {
      ...(phase === undefined ? {} : { phase }),
      ...(over.failedAgoMs === undefined ? {} : { phaseTransitionTimestamps: [{ phase: 'Failed', phaseTransitionTimestamp: new Date(NOW.getTime() - over.failedAgoMs).toISOString() }] }),
    },
  } as VirtualMachineInstanceMigration;
}

describe('decideEvacuation', () => {
  const rows: Array<[string, VirtualMachineInstance, VirtualMachineInstanceMigration[], boolean, string]> = [
    ['not marked', vmi(), [], false, 'none'],
    ['marked, migratable, nothing running', vmi({ mark: 'node-a' }), [], false, 'create'],
    ['marked, the VMI already left the node', vmi({ mark: 'node-a', node: 'node-b' }), [], false, 'clear'],
    ['marked, a migration (any, even the user\'s) under way', vmi({ mark: 'node-a' }), [migration('m1', 'Running')], false, 'none'],
    ['marked, a migration without a phase yet', vmi({ mark: 'node-a' }), [migration('m1', undefined)], false, 'none'],
    ['marked, a creation not yet in the cache', vmi({ mark: 'node-a' }), [], true, 'none'],
    ['marked, a finished migration only', vmi({ mark: 'node-a' }), [migration('m1', 'Succeeded')], false, 'create'],
    ['marked, External', vmi({ mark: 'node-a', strategy: 'External' }), [], false, 'none'],
    ['marked, no longer migratable', vmi({ mark: 'node-a', migratable: false }), [], false, 'none'],
    ['marked, being deleted', vmi({ mark: 'node-a', deleting: true }), [], false, 'none'],
    ['marked, ended', vmi({ mark: 'node-a', phase: 'Failed' }), [], false, 'none'],
    ['marked, the last evacuation failed 5 s ago', vmi({ mark: 'node-a' }), [migration('e1', 'Failed', { evacuatedFrom: 'node-a', failedAgoMs: 5_000 })], false, 'wait'],
    ['marked, the last evacuation failed long ago', vmi({ mark: 'node-a' }), [migration('e1', 'Failed', { evacuatedFrom: 'node-a', failedAgoMs: EVACUATION_BACKOFF_MS })], false, 'create'],
  ];
  for (const [title, v, migrations, creationPending, kind] of rows) {
    test(`${title} → ${kind}`, () => {
      assert.equal(decideEvacuation({ vmi: v, migrations, clusterDefault: 'None', creationPending, now: NOW }).kind, kind);
    });
  }

  test('the backoff doubles per failed evacuation migration', () => {
    const failed = (n: number): VirtualMachineInstanceMigration[] => Array.from({ length: n }, (_, i) => migration(`e${i}`, 'Failed', { evacuatedFrom: 'node-a', failedAgoMs: 1_000 }));
    const waits = [1, 2, 3].map((n) => decideEvacuation({ vmi: vmi({ mark: 'node-a' }), migrations: failed(n), clusterDefault: 'None', creationPending: false, now: NOW }));
    assert.deepEqual(waits.map((d) => (d.kind === 'wait' ? d.afterMs : -1)), [19_000, 39_000, 79_000]);
  });
});

describe('EvacuationController', () => {
  test('creates exactly one migration while its cache lags, another only after that one ended, and clears the mark once the VMI left', async () => {
    let current = vmi({ mark: 'node-a' });
    const cached: VirtualMachineInstanceMigration[] = [];
    const created: VirtualMachineInstanceMigration[] = [];
    let cleared = 0;
    const client: EvacuationClient = {
      createMigration: async (_ns, vmim) => {
        const made = { ...vmim, metadata: { ...vmim.metadata, name: `kubevirt-evacuation-${created.length}` } };
        created.push(made);
        return made;
      },
      clearEvacuation: async () => {
        cleared += 1;
      },
    };
    const events: string[] = [];
    const controller = new EvacuationController({
      workers: 2,
      log: pino({ level: 'silent' }),
      deps: {
        vmis: { get: () => current, list: () => [current] },
        migrations: { getMigration: (_ns, name) => cached.find((m) => m.metadata.name === name), listMigrations: () => cached },
        client,
        events: { record: async (_v, type, reason) => void events.push(`${type} ${reason}`) },
        clusterDefault: 'None',
        now: () => NOW,
      },
    });
    const stop = new AbortController();
    const running = controller.run(stop.signal);
    // Every store and client here is in memory: a few turns of the event loop run each queued sync.
    const settle = async (): Promise<void> => {
      for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    };
    await settle();
    // The first list created one; more VMI events on a cache that does not show it yet create none.
    for (let i = 0; i < 5; i++) controller.vmiChanged(current);
    await settle();
    assert.equal(created.length, 1);
    assert.deepEqual(created[0]?.metadata.annotations, { [EVACUATION_ANNOTATION]: 'node-a' });
    assert.equal(created[0]?.spec.vmiName, 'vm1');
    // The cache catches up; the migration runs: still one.
    const first = { ...created[0]!, status: { phase: 'Running' } } as VirtualMachineInstanceMigration;
    cached.push(first);
    controller.migrationChanged(first);
    controller.vmiChanged(current);
    await settle();
    assert.equal(created.length, 1);
    // It fails (long enough ago for no backoff): the next one is made.
    cached[0] = migration(first.metadata.name ?? '', 'Failed', { evacuatedFrom: 'node-a', failedAgoMs: EVACUATION_BACKOFF_MS });
    controller.migrationChanged(cached[0]);
    await settle();
    assert.equal(created.length, 2);
    // The VMI now runs on node-b: the mark is cleared, nothing more is created.
    current = vmi({ mark: 'node-a', node: 'node-b' });
    cached.push({ ...created[1]!, status: { phase: 'Succeeded' } } as VirtualMachineInstanceMigration);
    controller.vmiChanged(current);
    await settle();
    assert.equal(created.length, 2);
    assert.equal(cleared, 1);
    assert.deepEqual(events, ['Normal SuccessfulCreateVirtualMachineInstanceMigration', 'Normal SuccessfulCreateVirtualMachineInstanceMigration']);
    stop.abort();
    await running;
  });
});
