// The controller's /metrics: KubeVirt's phase-transition histograms timed by the VMI's own
// phaseTransitionTimestamps, the workqueue metrics of each named queue, the leading status.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { VirtualMachineInstance, VmiPhase } from '@podvirt/api';
import { ControllerMetrics, PHASE_TRANSITION_BUCKETS } from '../src/metrics/controller-metrics.js';

const CREATED = '2026-01-01T00:00:00Z';
const at = (s: number): string => new Date(Date.parse(CREATED) + s * 1000).toISOString().replace('.000', '');

function vmi(uid: string, phase: VmiPhase | undefined, stamps: ReadonlyArray<readonly [VmiPhase, number]>): VirtualMachineInstance {
  return {
    apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance',
    metadata: { name: uid, namespace: 'default', uid, creationTimestamp: CREATED },
    spec: { domain: { devices: {} } },
    status: { ...(phase === undefined ? {} : { phase }), phaseTransitionTimestamps: stamps.map(([p, s]) => ({ phase: p, phaseTransitionTimestamp: at(s) })) },
  } as VirtualMachineInstance;
}

test('a phase change is observed from creation and from the previous phase, in KubeVirt\'s buckets', async () => {
  const m = new ControllerMetrics();
  m.observeVmi(vmi('a', undefined, []), 'ADDED');
  m.observeVmi(vmi('a', 'Pending', [['Pending', 1]]), 'MODIFIED');
  m.observeVmi(vmi('a', 'Pending', [['Pending', 1]]), 'RESYNC');
  m.observeVmi(vmi('a', 'Scheduling', [['Pending', 1], ['Scheduling', 3]]), 'MODIFIED');
  m.observeVmi(vmi('a', 'Running', [['Pending', 1], ['Scheduling', 3], ['Scheduled', 4], ['Running', 7]]), 'MODIFIED');
  // First seen already running (a restarted controller): recorded, not observed.
  m.observeVmi(vmi('b', 'Running', [['Running', 2]]), 'ADDED');
  const text = await m.registry.metrics();
  const from = 'kubevirt_vmi_phase_transition_time_from_creation_seconds';
  assert.ok(text.includes(`# TYPE ${from} histogram`));
  assert.ok(text.includes(`${from}_count{phase="Pending"} 1\n`), text);
  assert.ok(text.includes(`${from}_sum{phase="Running"} 7\n`));
  assert.ok(text.includes(`${from}_bucket{le="5",phase="Running"} 0\n`));
  assert.ok(text.includes(`${from}_bucket{le="10",phase="Running"} 1\n`));
  assert.equal((text.match(new RegExp(`${from}_count`, 'g')) ?? []).length, 3, 'Pending, Scheduling, Running; nothing for b');
  const between = 'kubevirt_vmi_phase_transition_time_seconds';
  assert.ok(text.includes(`${between}_sum{phase="Pending",last_phase=""} 1\n`), 'from creation when there was no phase');
  assert.ok(text.includes(`${between}_sum{phase="Scheduling",last_phase="Pending"} 2\n`));
  assert.ok(text.includes(`${between}_sum{phase="Running",last_phase="Scheduling"} 4\n`), 'from the previous phase seen, not from Scheduled');
  assert.ok(text.includes(`${from}_bucket{le="3600",phase="Running"} 1\n`));
  assert.deepEqual(PHASE_TRANSITION_BUCKETS.slice(0, 3), [0.5, 1, 2]);
  // A deleted VMI is forgotten: the same UID seen again is a first sight.
  m.observeVmi(vmi('a', 'Running', []), 'DELETED');
  m.observeVmi(vmi('a', 'Succeeded', [['Succeeded', 9]]), 'ADDED');
  assert.ok(!(await m.registry.metrics()).includes('phase="Succeeded"'));
});

test('workqueue depth, adds, durations and retries per queue; leading status', async () => {
  const m = new ControllerMetrics();
  let depth = 2;
  const q = m.watchQueue('virt-controller-vmi', () => depth);
  m.watchQueue('virt-controller-migration', () => 0);
  let text = await m.registry.metrics();
  assert.ok(text.includes('kubevirt_workqueue_depth{name="virt-controller-vmi"} 2\n'));
  assert.ok(text.includes('kubevirt_workqueue_retries_total{name="virt-controller-migration"} 0\n'));
  assert.ok(text.includes('kubevirt_virt_controller_leading_status 0\n'));
  q.added();
  q.added();
  q.synced(0.003, true);
  q.synced(0.2, false);
  depth = 0;
  m.setLeading(true);
  text = await m.registry.metrics();
  assert.ok(text.includes('kubevirt_workqueue_depth{name="virt-controller-vmi"} 0\n'));
  assert.ok(text.includes('kubevirt_workqueue_adds_total{name="virt-controller-vmi"} 2\n'));
  assert.ok(text.includes('kubevirt_workqueue_work_duration_seconds_count{name="virt-controller-vmi"} 2\n'));
  assert.ok(text.includes('kubevirt_workqueue_work_duration_seconds_bucket{le="0.005",name="virt-controller-vmi"} 1\n'));
  assert.ok(text.includes('kubevirt_workqueue_retries_total{name="virt-controller-vmi"} 1\n'));
  assert.ok(text.includes('kubevirt_virt_controller_leading_status 1\n'));
  assert.ok(!text.includes('process_resident_memory_bytes'), 'process metrics only when asked for');
});
