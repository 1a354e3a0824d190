// The kubevirt_vmi_* domain stats: libvirt's typed parameters to KubeVirt's names, units and
// labels, read only on scrape, all launchers at once, and a scrape bounded in time: a stalled
// launcher is left out and counted, never holds the scrape.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { cmd } from '@podvirt/proto';
import { Registry } from 'prom-client';
import { DomainStatsCollector, type DomainStatsTarget } from '../src/metrics/domain-stats-collector.js';
import { DOMAIN_METRICS, domainStatsSamples, migrationSamples } from '../src/metrics/domain-stats.js';
import { HandlerMetrics } from '../src/metrics/handler-metrics.js';

const STATS: cmd.DomainStats = {
  values: {
    'cpu.time': 2_500_000_000, 'cpu.user': 1_000_000_000, 'cpu.system': 500_000_000,
    'balloon.current': 131072, 'balloon.maximum': 131072, 'balloon.rss': 65536, 'balloon.available': 120000,
    'balloon.unused': 90000, 'balloon.usable': 100000, 'balloon.disk_caches': 2048, 'balloon.swap_in': 0, 'balloon.swap_out': 0,
    'balloon.major_fault': 12, 'balloon.minor_fault': 3400,
    'vcpu.current': 2, 'vcpu.maximum': 2,
    'vcpu.0.state': 1, 'vcpu.0.time': 1_500_000_000, 'vcpu.0.wait': 0, 'vcpu.0.delay': 250_000_000,
    'vcpu.1.state': 2, 'vcpu.1.time': 500_000_000,
    'net.count': 1, 'net.0.rx.bytes': 1500, 'net.0.rx.pkts': 10, 'net.0.rx.errs': 0, 'net.0.rx.drop': 1,
    'net.0.tx.bytes': 700, 'net.0.tx.pkts': 7, 'net.0.tx.errs': 0, 'net.0.tx.drop': 0,
    'block.count': 2, 'block.0.rd.reqs': 100, 'block.0.rd.bytes': 409600, 'block.0.rd.times': 3_000_000, 'block.0.wr.reqs': 5,
    'block.0.wr.bytes': 20480, 'block.0.wr.times': 1_000_000, 'block.0.fl.reqs': 2, 'block.0.fl.times': 500_000,
    'block.1.rd.reqs': 1,
  },
  labels: { 'net.0.name': 'tap0', 'net.0.alias': 'default', 'block.0.name': 'vda', 'block.0.alias': 'rootdisk', 'block.0.path': '/x', 'block.1.name': 'sda' },
};

function sample(name: string, labels: Record<string, string> = {}): number | undefined {
  return domainStatsSamples(STATS).find((s) => s.metric === name && JSON.stringify(s.labels) === JSON.stringify(labels))?.value;
}

test('libvirt stats become KubeVirt names in seconds and bytes, per vCPU, NIC and drive', () => {
  assert.equal(sample('kubevirt_vmi_cpu_usage_seconds_total'), 2.5);
  assert.equal(sample('kubevirt_vmi_cpu_user_usage_seconds_total'), 1);
  assert.equal(sample('kubevirt_vmi_memory_resident_bytes'), 65536 * 1024);
  assert.equal(sample('kubevirt_vmi_memory_domain_bytes'), 128 * 1024 * 1024);
  assert.equal(sample('kubevirt_vmi_memory_actual_balloon_bytes'), 128 * 1024 * 1024);
  assert.equal(sample('kubevirt_vmi_memory_pgmajfault_total'), 12);
  assert.equal(sample('kubevirt_vmi_vcpu_seconds_total', { id: '0', state: 'running' }), 1.5);
  assert.equal(sample('kubevirt_vmi_vcpu_seconds_total', { id: '1', state: 'blocked' }), 0.5);
  assert.equal(sample('kubevirt_vmi_vcpu_delay_seconds_total', { id: '0' }), 0.25);
  assert.equal(sample('kubevirt_vmi_vcpu_wait_seconds_total', { id: '1' }), undefined, 'no wait stat, no sample');
  assert.equal(sample('kubevirt_vmi_network_receive_bytes_total', { interface: 'default' }), 1500, 'the VMI interface name, not the tap');
  assert.equal(sample('kubevirt_vmi_network_receive_packets_dropped_total', { interface: 'default' }), 1);
  assert.equal(sample('kubevirt_vmi_storage_read_traffic_bytes_total', { drive: 'rootdisk' }), 409600);
  assert.equal(sample('kubevirt_vmi_storage_read_times_seconds_total', { drive: 'rootdisk' }), 0.003);
  assert.equal(sample('kubevirt_vmi_storage_iops_read_total', { drive: 'sda' }), 1, 'the target name when the drive has no alias');
  assert.equal(sample('kubevirt_vmi_dirty_rate_bytes_per_second'), undefined, 'not measured, not reported');
  const names = new Set(DOMAIN_METRICS.map((m) => m.name));
  assert.equal(names.size, DOMAIN_METRICS.length, 'each metric once');
  for (const s of domainStatsSamples(STATS)) assert.ok(names.has(s.metric), s.metric);
});

test('migration progress only while a migration runs', () => {
  const running: cmd.MigrationProgress = {
    phase: 'Running', startedAtMs: 1, endedAtMs: 0, dataTotal: 1000, dataProcessed: 400, dataRemaining: 600, iterations: 1,
    memoryDirtyRateBps: 2_097_152, memoryTransferBps: 4_194_304,
    downtimeMs: 0, mode: 'PreCopy', abortRequested: false, abortStatus: '', failureReason: '',
  };
  assert.deepEqual(migrationSamples(running).map((s) => [s.metric, s.value]), [
    ['kubevirt_vmi_migration_data_bytes_total', 1000], ['kubevirt_vmi_migration_data_processed_bytes', 400], ['kubevirt_vmi_migration_data_remaining_bytes', 600],
    ['kubevirt_vmi_migration_dirty_memory_rate_bytes', 2_097_152], ['kubevirt_vmi_migration_memory_transfer_rate_bytes', 4_194_304],
  ]);
  const names = new Set(DOMAIN_METRICS.map((m) => m.name));
  for (const s of migrationSamples(running)) assert.ok(names.has(s.metric), `${s.metric} is registered`);
  assert.deepEqual(migrationSamples({ ...running, phase: 'Succeeded' }), []);
  assert.deepEqual(migrationSamples(undefined), []);
});

test('launchers are read on scrape only, all at once, with node, namespace and name', async () => {
  let reads = 0;
  const targets: DomainStatsTarget[] = ['a', 'b'].map((name) => ({
    namespace: 'ns', name, read: async () => {
      reads++;
      return STATS;
    },
  }));
  const metrics = new HandlerMetrics({ nodeName: 'node01', vmis: () => [], queueDepth: () => 0, domainStats: () => targets });
  assert.equal(reads, 0, 'nothing is read until someone scrapes');
  const text = await metrics.text();
  assert.equal(reads, 2, 'one read per launcher per scrape, shared by every metric');
  assert.match(text, /# TYPE kubevirt_vmi_cpu_usage_seconds_total counter/);
  assert.match(text, /# TYPE kubevirt_vmi_memory_resident_bytes gauge/);
  assert.ok(text.includes('kubevirt_vmi_memory_resident_bytes{node="node01",namespace="ns",name="a"} 67108864\n'), text);
  assert.ok(text.includes('kubevirt_vmi_network_transmit_bytes_total{node="node01",namespace="ns",name="b",interface="default"} 700\n'));
  assert.ok(text.includes('kubevirt_vmi_vcpu_seconds_total{node="node01",namespace="ns",name="a",id="0",state="running"} 1.5\n'));
  targets.pop();
  const again = await metrics.text();
  assert.equal(reads, 3);
  assert.ok(!again.includes('name="b"'), 'a VMI that stopped running disappears from the next scrape');
});

test('a stalled launcher is left out after the bound and counted; the others are reported', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  let aborted = false;
  const registry = new Registry();
  const targets: DomainStatsTarget[] = [
    { namespace: 'ns', name: 'fast', read: () => Promise.resolve(STATS) },
    // Ignores its signal too: the bound must not depend on the launcher honouring it.
    { namespace: 'ns', name: 'stalled', read: (signal) => {
      signal.addEventListener('abort', () => (aborted = true));
      return new Promise<cmd.DomainStats>(() => undefined);
    } },
    { namespace: 'ns', name: 'broken', read: () => Promise.reject(new Error('launcher gone')) },
    { namespace: 'ns', name: 'nolink' },
  ];
  new DomainStatsCollector({ nodeName: 'n', targets: () => targets, timeoutMs: 3_000, registry });
  let done = false;
  const scrape = registry.metrics().then((text) => {
    done = true;
    return text;
  });
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
  assert.equal(done, false, 'the scrape waits for the stalled launcher up to the bound');
  t.mock.timers.tick(2_999);
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
  assert.equal(done, false);
  t.mock.timers.tick(1);
  const text = await scrape;
  assert.equal(aborted, true, 'the stalled read is aborted at the bound');
  assert.ok(text.includes('kubevirt_vmi_cpu_usage_seconds_total{node="n",namespace="ns",name="fast"} 2.5\n'), text);
  assert.ok(!text.includes('name="stalled"') && !text.includes('name="broken"') && !text.includes('name="nolink"'));
  assert.ok(text.includes('podvirt_handler_domain_stats_skipped_total{reason="timeout"} 1\n'));
  assert.ok(text.includes('podvirt_handler_domain_stats_skipped_total{reason="error"} 1\n'));
  assert.ok(text.includes('podvirt_handler_domain_stats_skipped_total{reason="unconnected"} 1\n'));
});

test('with no running VMI a scrape reports no VMI sample and every skip reason at 0', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const registry = new Registry();
  new DomainStatsCollector({ nodeName: 'n', targets: () => [], timeoutMs: 3_000, registry });
  const text = await registry.metrics();
  assert.ok(text.includes('podvirt_handler_domain_stats_skipped_total{reason="timeout"} 0\n'));
  assert.ok(!/^kubevirt_vmi_/m.test(text), 'no sample without a VMI');
});

test('label sets are bounded: node, namespace, name and the vCPU, NIC and drive of the VMI spec, nothing from the VMI or the host', async () => {
  // A launcher's answer also carries host-side names (tap device, image path) and a VMI has labels
  // of its own: none of them may become a label, or each VMI would add series without bound.
  const targets: DomainStatsTarget[] = [{ namespace: 'ns', name: 'a', read: () => Promise.resolve(STATS) }];
  const metrics = new HandlerMetrics({ nodeName: 'node01', vmis: () => [], queueDepth: () => 0, domainStats: () => targets });
  const text = await metrics.text();
  const bounded = new Set(['node', 'namespace', 'name', 'id', 'state', 'interface', 'drive']);
  let samples = 0;
  for (const line of text.split('\n').filter((l) => l.startsWith('kubevirt_vmi_') && !l.startsWith('kubevirt_vmi_phase_count'))) {
    samples++;
    const labels = /\{(.*)\}/.exec(line)?.[1] ?? '';
    for (const [, key] of labels.matchAll(/(\w+)="[^"]*"/g)) assert.ok(bounded.has(key!), `${key} in ${line}`);
  }
  assert.ok(samples >= 30, `the domain stats were scraped: ${samples} samples`);
  assert.ok(!text.includes('tap0') && !text.includes('"/x"') && !text.includes('"vda"'), 'no host-side device name or path as a label value');
});
