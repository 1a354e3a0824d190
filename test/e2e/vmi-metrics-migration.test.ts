// Live-migration progress in the source handler's /metrics while a VMI migrates, on the two-node
// testbed with every real piece: the guest rewrites 48 MiB of its memory as fast as it can and
// the handlers cap a migration at 4 MiB/s, so the migration runs (and cannot converge) until the
// test cancels it. Scraped mid-way, the source node's handler shows KubeVirt's five
// kubevirt_vmi_migration_* samples for the VMI (data total, processed and remaining; the dirty
// rate and the memory transfer rate in bytes per second), the data processed grows from one
// scrape to a later one, and once the migration has ended they are gone.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { VirtualMachineInstance } from '@podvirt/api';
import { metricSamples, metricsPort, scrape } from './handler-node.js';
import { guestVmi, NS, VmiSuite } from './vmi-stack.js';

const NAME = 'mig-metrics';
const VMIM = 'mig-metrics-1';
const MIB = 1024 * 1024;
const BANDWIDTH_MIB_S = 4;
const METRICS = {
  total: 'kubevirt_vmi_migration_data_bytes_total',
  processed: 'kubevirt_vmi_migration_data_processed_bytes',
  remaining: 'kubevirt_vmi_migration_data_remaining_bytes',
  dirtyRate: 'kubevirt_vmi_migration_dirty_memory_rate_bytes',
  transferRate: 'kubevirt_vmi_migration_memory_transfer_rate_bytes',
} as const;
type Progress = Record<keyof typeof METRICS, number>;

describe('migration progress metrics while a VMI migrates (two nodes, the guest dirtying memory, 4 MiB/s)', () => {
  const suite = VmiSuite.setUp({ stack: { nodes: 2, handlerArgs: ['--migration-bandwidth', String(BANDWIDTH_MIB_S)] } });

  /** The source handler's kubevirt_vmi_migration_* values for the VMI: all five, or undefined. */
  async function progressOn(port: number, node: string): Promise<Progress | undefined> {
    const { status, body } = await scrape(port);
    assert.equal(status, 200);
    const out: Partial<Progress> = {};
    for (const [key, metric] of Object.entries(METRICS) as Array<[keyof Progress, string]>) {
      const mine = metricSamples(body, metric).filter((s) => s.labels['name'] === NAME);
      if (mine.length === 0) continue;
      assert.equal(mine.length, 1, `one ${metric} sample for the VMI`);
      assert.deepEqual(mine[0]!.labels, { node, namespace: NS, name: NAME }, `${metric}: KubeVirt's labels`);
      out[key] = mine[0]!.value;
    }
    const found = Object.keys(out).length;
    assert.ok(found === 0 || found === Object.keys(METRICS).length, `all five or none: ${JSON.stringify(out)}`);
    return found === 0 ? undefined : out as Progress;
  }

  test('scraped mid-way: data total/processed/remaining, dirty rate and transfer rate; processed grows; gone once it ended', async (t) => {
    await suite.apply(guestVmi(suite.guest, NAME, { extraKernelArgs: 'podvirt.dirty=48' }));
    const running = await suite.waitForPhase(NAME, 'Running');
    await suite.waitForGuestReady(running);
    await suite.eventually(`${NAME} LiveMigratable`, async () => ((await suite.vmi(NAME))?.status?.conditions?.some((c) => c.type === 'LiveMigratable' && c.status === 'True') === true ? true : undefined));
    const source = running.status?.nodeName ?? '';
    const handler = suite.stack.nodes.find((n) => n.nodeName === source)?.handler;
    assert.ok(handler !== undefined, `the source node ${source} has a handler`);
    const port = metricsPort(handler);
    assert.ok(port !== undefined, 'the source handler logs its /metrics port');
    assert.equal(await progressOn(port, source), undefined, 'no migration samples before a migration');

    await suite.apply({ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstanceMigration', metadata: { name: VMIM, namespace: NS }, spec: { vmiName: NAME } });
    // The rates come once qemu has measured them (its first pass over memory ends after a second
    // or more at this bandwidth); the launcher reads libvirt's job statistics every second.
    const first = await suite.eventually('migration progress with both rates on the source', async () => {
      const p = await progressOn(port, source);
      return p !== undefined && p.processed > 0 && p.dirtyRate > 0 && p.transferRate > 0 ? p : undefined;
    }, 120_000);
    // libvirt's data_processed counts every byte sent, pages sent again included, so it passes
    // data_total once a pass over memory repeats; what is left never exceeds the total.
    assert.ok(first.total >= first.remaining, `total ${first.total} ≥ remaining ${first.remaining}`);
    assert.ok(first.remaining > 0, 'data left while it runs');
    assert.ok(first.total >= 128 * MIB, `the guest's 128 MiB are to be moved: ${first.total}`);
    // The guest rewrites its 48 MiB with dd as fast as it can: far more than a MiB per second.
    assert.ok(first.dirtyRate > MIB, `dirty rate ${first.dirtyRate} B/s`);
    // qemu holds the stream at the handlers' bandwidth; its rate is measured over short windows.
    assert.ok(first.transferRate <= 2 * BANDWIDTH_MIB_S * MIB, `transfer rate ${first.transferRate} B/s within the ${BANDWIDTH_MIB_S} MiB/s cap`);
    const later = await suite.eventually('data processed grows', async () => {
      const p = await progressOn(port, source);
      return p !== undefined && p.processed > first.processed ? p : undefined;
    }, 60_000);
    assert.ok(later.processed - first.processed >= 1, `${first.processed} → ${later.processed}`);
    t.diagnostic(`mid-way: ${JSON.stringify(first)}; later: ${JSON.stringify(later)}`);

    const vmim = await suite.custom.getNamespacedCustomObject({ group: 'kubevirt.io', version: 'v1', namespace: NS, plural: 'virtualmachineinstancemigrations', name: VMIM }) as { status?: { phase?: string } };
    assert.equal(vmim.status?.phase, 'Running', 'it was scraped while the migration ran');
    // Cancelled as a user cancels it: the migration object deleted.
    await suite.kubectl(['delete', 'vmim', VMIM, '-n', NS, '--wait=false']);
    const after = await suite.eventually('the migration ended on the source', async () => {
      const v: VirtualMachineInstance | undefined = await suite.vmi(NAME);
      return v?.status?.migrationState?.endTimestamp !== undefined ? v : undefined;
    }, 120_000);
    assert.equal(after.status?.nodeName, source, 'the guest runs on, unmoved');
    await suite.eventually('no migration samples once it ended', async () => ((await progressOn(port, source)) === undefined ? true : undefined), 30_000);

    await suite.kubectl(['delete', 'vmi', NAME, '--wait=false']);
    await suite.waitForGone(NAME);
    await suite.waitForPodsGone(running);
  });
});
