// libvirt's domain stats (the flat typed parameters a launcher's GetDomainStats answers) as
// KubeVirt's kubevirt_vmi_* samples: its names, types and units (seconds, bytes), and its extra
// labels (`id`/`state` per vCPU, `interface` per NIC, `drive` per disk, named as the VMI names
// them). Pure: the collector adds node, namespace and name.

import type { cmd } from '@podvirt/proto';

export type DomainMetricType = 'counter' | 'gauge';

export interface DomainMetricSpec {
  readonly name: string;
  readonly help: string;
  readonly type: DomainMetricType;
  /** Labels beyond node, namespace and name. */
  readonly labels: readonly string[];
}

export interface DomainSample {
  readonly metric: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

const NS = 1e-9;
const KIB = 1024;
const MIB = 1024 * 1024;

interface Scalar { readonly key: string; readonly spec: DomainMetricSpec; readonly scale: number }

const spec = (name: string, type: DomainMetricType, help: string, labels: readonly string[] = []): DomainMetricSpec => ({ name, type, help, labels });

// Whole-domain values: libvirt key, metric, factor to the metric's unit.
const SCALARS: readonly Scalar[] = [
  { key: 'cpu.time', scale: NS, spec: spec('kubevirt_vmi_cpu_usage_seconds_total', 'counter', 'CPU time of the domain in all modes, vCPUs and hypervisor threads together.') },
  { key: 'cpu.user', scale: NS, spec: spec('kubevirt_vmi_cpu_user_usage_seconds_total', 'counter', 'CPU time of the domain in user mode.') },
  { key: 'cpu.system', scale: NS, spec: spec('kubevirt_vmi_cpu_system_usage_seconds_total', 'counter', 'CPU time of the domain in kernel mode.') },
  { key: 'balloon.rss', scale: KIB, spec: spec('kubevirt_vmi_memory_resident_bytes', 'gauge', 'Resident set size of the QEMU process of the domain.') },
  { key: 'balloon.available', scale: KIB, spec: spec('kubevirt_vmi_memory_available_bytes', 'gauge', 'Memory the guest sees as usable in total (balloon driver).') },
  { key: 'balloon.unused', scale: KIB, spec: spec('kubevirt_vmi_memory_unused_bytes', 'gauge', 'Memory the guest leaves entirely unused (caches not counted as free).') },
  { key: 'balloon.disk_caches', scale: KIB, spec: spec('kubevirt_vmi_memory_cached_bytes', 'gauge', 'Guest memory holding I/O caches that can be reclaimed.') },
  { key: 'balloon.usable', scale: KIB, spec: spec('kubevirt_vmi_memory_usable_bytes', 'gauge', 'Guest memory the balloon could reclaim without making the guest swap.') },
  { key: 'balloon.swap_in', scale: KIB, spec: spec('kubevirt_vmi_memory_swap_in_traffic_bytes', 'gauge', 'Data the guest has read from its swap, in bytes.') },
  { key: 'balloon.swap_out', scale: KIB, spec: spec('kubevirt_vmi_memory_swap_out_traffic_bytes', 'gauge', 'Data the guest has written to its swap, in bytes.') },
  { key: 'balloon.major_fault', scale: 1, spec: spec('kubevirt_vmi_memory_pgmajfault_total', 'counter', 'Guest page faults that needed disk I/O.') },
  { key: 'balloon.minor_fault', scale: 1, spec: spec('kubevirt_vmi_memory_pgminfault_total', 'counter', 'Guest page faults served without disk I/O.') },
  { key: 'balloon.current', scale: KIB, spec: spec('kubevirt_vmi_memory_actual_balloon_bytes', 'gauge', 'The balloon\'s current size: memory the guest has now.') },
  { key: 'balloon.current', scale: KIB, spec: spec('kubevirt_vmi_memory_domain_bytes', 'gauge', 'Memory given to the domain, in bytes.') },
  { key: 'dirtyrate.megabytes_per_second', scale: MIB, spec: spec('kubevirt_vmi_dirty_rate_bytes_per_second', 'gauge', 'How fast the guest dirties its memory, in bytes per second (when measured).') },
];

const VCPU: Readonly<Record<string, DomainMetricSpec>> = {
  time: spec('kubevirt_vmi_vcpu_seconds_total', 'counter', 'Time each vCPU has spent in its current state (vCPU time without the hypervisor\'s).', ['id', 'state']),
  wait: spec('kubevirt_vmi_vcpu_wait_seconds_total', 'counter', 'Time each vCPU has spent waiting for I/O.', ['id']),
  delay: spec('kubevirt_vmi_vcpu_delay_seconds_total', 'counter', 'Time each vCPU has spent runnable but waiting for a host CPU.', ['id']),
};

// libvirt's VIR_VCPU_* states, in KubeVirt's lower-case words.
const VCPU_STATES: Readonly<Record<number, string>> = { 0: 'offline', 1: 'running', 2: 'blocked' };

const NET: ReadonlyArray<readonly [string, DomainMetricSpec]> = [
  ['rx.bytes', spec('kubevirt_vmi_network_receive_bytes_total', 'counter', 'Bytes the guest NIC has received.', ['interface'])],
  ['tx.bytes', spec('kubevirt_vmi_network_transmit_bytes_total', 'counter', 'Bytes the guest NIC has sent.', ['interface'])],
  ['rx.pkts', spec('kubevirt_vmi_network_receive_packets_total', 'counter', 'Packets the guest NIC has received.', ['interface'])],
  ['tx.pkts', spec('kubevirt_vmi_network_transmit_packets_total', 'counter', 'Packets the guest NIC has sent.', ['interface'])],
  ['rx.errs', spec('kubevirt_vmi_network_receive_errors_total', 'counter', 'Received packets with errors on the guest NIC.', ['interface'])],
  ['tx.errs', spec('kubevirt_vmi_network_transmit_errors_total', 'counter', 'Sent packets with errors on the guest NIC.', ['interface'])],
  ['rx.drop', spec('kubevirt_vmi_network_receive_packets_dropped_total', 'counter', 'Received packets dropped on the guest NIC.', ['interface'])],
  ['tx.drop', spec('kubevirt_vmi_network_transmit_packets_dropped_total', 'counter', 'Sent packets dropped on the guest NIC.', ['interface'])],
];

const BLOCK: ReadonlyArray<readonly [string, number, DomainMetricSpec]> = [
  ['rd.reqs', 1, spec('kubevirt_vmi_storage_iops_read_total', 'counter', 'Read requests on the drive.', ['drive'])],
  ['wr.reqs', 1, spec('kubevirt_vmi_storage_iops_write_total', 'counter', 'Write requests on the drive.', ['drive'])],
  ['rd.bytes', 1, spec('kubevirt_vmi_storage_read_traffic_bytes_total', 'counter', 'Bytes read from the drive.', ['drive'])],
  ['wr.bytes', 1, spec('kubevirt_vmi_storage_write_traffic_bytes_total', 'counter', 'Bytes written to the drive.', ['drive'])],
  ['rd.times', NS, spec('kubevirt_vmi_storage_read_times_seconds_total', 'counter', 'Time spent on reads from the drive.', ['drive'])],
  ['wr.times', NS, spec('kubevirt_vmi_storage_write_times_seconds_total', 'counter', 'Time spent on writes to the drive.', ['drive'])],
  ['fl.reqs', 1, spec('kubevirt_vmi_storage_flush_requests_total', 'counter', 'Flush requests on the drive.', ['drive'])],
  ['fl.times', NS, spec('kubevirt_vmi_storage_flush_times_seconds_total', 'counter', 'Time spent on flushes of the drive.', ['drive'])],
];

// A live migration's progress, from the Domain the launcher streams (no extra call).
// The launcher reads libvirt's job statistics every second while the migration runs.
type ProgressField = keyof Pick<cmd.MigrationProgress, 'dataTotal' | 'dataProcessed' | 'dataRemaining' | 'memoryDirtyRateBps' | 'memoryTransferBps'>;
const MIGRATION: ReadonlyArray<readonly [ProgressField, DomainMetricSpec]> = [
  ['dataTotal', spec('kubevirt_vmi_migration_data_bytes_total', 'counter', 'Guest data the running migration has to move in all.')],
  ['dataProcessed', spec('kubevirt_vmi_migration_data_processed_bytes', 'gauge', 'Guest data the running migration has moved so far.')],
  ['dataRemaining', spec('kubevirt_vmi_migration_data_remaining_bytes', 'gauge', 'Guest data the running migration still has to move.')],
  ['memoryDirtyRateBps', spec('kubevirt_vmi_migration_dirty_memory_rate_bytes', 'gauge', 'How fast the guest dirties its memory during the running migration, in bytes per second.')],
  ['memoryTransferBps', spec('kubevirt_vmi_migration_memory_transfer_rate_bytes', 'gauge', 'How fast the running migration sends guest memory, in bytes per second.')],
];

/** Every metric the collector may emit, each once. */
export const DOMAIN_METRICS: readonly DomainMetricSpec[] = [
  ...new Map([...SCALARS.map((s) => s.spec), ...Object.values(VCPU), ...NET.map((n) => n[1]), ...BLOCK.map((b) => b[2]), ...MIGRATION.map((m) => m[1])].map((s) => [s.name, s])).values(),
];

/** The indexes N of libvirt's `<group>.N.name` labels, in order. */
function indexes(labels: Readonly<Record<string, string>>, group: string): number[] {
  const re = new RegExp(`^${group}\\.(\\d+)\\.name$`);
  return Object.keys(labels).flatMap((k) => {
    const m = re.exec(k);
    return m === null ? [] : [Number(m[1])];
  }).sort((a, b) => a - b);
}

export function domainStatsSamples(stats: cmd.DomainStats): DomainSample[] {
  const { values, labels } = stats;
  const out: DomainSample[] = [];
  const has = (k: string): boolean => Object.hasOwn(values, k) && Number.isFinite(values[k]);
  for (const s of SCALARS) if (has(s.key)) out.push({ metric: s.spec.name, labels: {}, value: values[s.key]! * s.scale });
  const vcpus = new Set<number>();
  for (const k of Object.keys(values)) {
    const m = /^vcpu\.(\d+)\./.exec(k);
    if (m !== null) vcpus.add(Number(m[1]));
  }
  for (const n of [...vcpus].sort((a, b) => a - b)) {
    const id = String(n);
    const p = `vcpu.${n}.`;
    if (has(`${p}time`)) out.push({ metric: VCPU.time!.name, labels: { id, state: VCPU_STATES[values[`${p}state`] ?? -1] ?? 'unknown' }, value: values[`${p}time`]! * NS });
    if (has(`${p}wait`)) out.push({ metric: VCPU.wait!.name, labels: { id }, value: values[`${p}wait`]! * NS });
    if (has(`${p}delay`)) out.push({ metric: VCPU.delay!.name, labels: { id }, value: values[`${p}delay`]! * NS });
  }
  for (const n of indexes(labels, 'net')) {
    const iface = labels[`net.${n}.alias`] ?? labels[`net.${n}.name`]!;
    for (const [key, s] of NET) if (has(`net.${n}.${key}`)) out.push({ metric: s.name, labels: { interface: iface }, value: values[`net.${n}.${key}`]! });
  }
  for (const n of indexes(labels, 'block')) {
    const drive = labels[`block.${n}.alias`] ?? labels[`block.${n}.name`]!;
    for (const [key, scale, s] of BLOCK) if (has(`block.${n}.${key}`)) out.push({ metric: s.name, labels: { drive }, value: values[`block.${n}.${key}`]! * scale });
  }
  return out;
}

/** Progress samples of a migration that runs now; none before it starts or after it ends. */
export function migrationSamples(progress: cmd.MigrationProgress | undefined): DomainSample[] {
  if (progress?.phase !== 'Running') return [];
  return MIGRATION.map(([field, s]) => ({ metric: s.name, labels: {}, value: Number(progress[field]) }));
}
