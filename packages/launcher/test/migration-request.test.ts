import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cmd } from '@podvirt/proto';
import { migrationPlan } from '../src/migration/migration-request.js';
import { baseVmi, invalidAt } from './vmi-fixture.js';

const request = (extra: Partial<cmd.MigrateRequest> = {}): cmd.MigrateRequest =>
  cmd.MigrateRequest.fromPartial({ destinationUri: 'qemu+unix:///system?socket=/var/run/podvirt/migration/x.sock', ...extra });

test('migrationPlan: settings become the plan; the completion timeout scales with the guest memory in GiB', () => {
  const plan = migrationPlan(request({
    migrateUri: 'unix:///run/mig.sock', blockMigration: true, bandwidthMibPerSecond: 64, progressTimeoutSeconds: 150,
    completionTimeoutPerGibSeconds: 800, allowAutoConverge: true,
  }), baseVmi({}, { resources: { requests: { memory: '1536Mi' } } }));
  assert.equal(plan.migrateUri, 'unix:///run/mig.sock');
  assert.equal(plan.disksUri, undefined);
  assert.equal(plan.blockMigration, true);
  assert.equal(plan.bandwidthMiBs, 64);
  assert.equal(plan.autoConverge, true);
  assert.deepEqual(plan.limits, { progressTimeoutMs: 150_000, completionTimeoutMs: 800_000 * 2 });
});

const refused: Array<[string, Partial<cmd.MigrateRequest>, string]> = [
  ['post-copy, by name', { allowPostCopy: true }, 'allowPostCopy'],
  ['a destination that is not a unix socket URI', { destinationUri: 'qemu+tcp://node2/system' }, 'destination_uri'],
  ['a migrate URI of another scheme', { migrateUri: 'rdma://node2' }, 'migrate_uri'],
  ['a disks URI with a path for tcp', { disksUri: 'tcp://node2/x' }, 'disks_uri'],
];
for (const [name, extra, field] of refused) {
  test(`migrationPlan refuses ${name}`, () => {
    assert.throws(() => migrationPlan(request(extra), baseVmi()), invalidAt(field));
  });
}
