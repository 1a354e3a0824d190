import assert from 'node:assert/strict';
import { test } from 'node:test';
import { eventually } from '@podvirt/test-support';
import { pino } from 'pino';
import { ControllerMetrics, QUEUE_NAMES } from '../src/metrics/controller-metrics.js';
import { PodExpectations } from '../src/reconcile/pod-expectations.js';
import { VmController } from '../src/reconcile/vm-controller.js';
import { FakeVms } from './fake-vms.js';
import { vmFixture } from './vm-fixtures.js';

test('the VM queue is in the workqueue metrics as virt-controller-vm: adds, syncs, depth', async () => {
  // The run's first pass over every VM is not an add; a change is.
  const metrics = new ControllerMetrics();
  const cluster = new FakeVms();
  cluster.addVm(vmFixture());
  const vms: VmController = new VmController({
    log: pino({ level: 'silent' }),
    workers: 1,
    queueObserver: metrics.watchQueue(QUEUE_NAMES.vm, () => vms.queueDepth),
    deps: { vms: cluster, vmis: cluster, vmClient: cluster, events: cluster, expectations: new PodExpectations(), now: () => new Date(), random: () => 0 },
  });
  assert.match(await metrics.registry.metrics(), /^kubevirt_workqueue_adds_total\{name="virt-controller-vm"\} 0$/m);
  const stop = new AbortController();
  const running = vms.run(stop.signal);
  try {
    await eventually(async () => {
      const text = await metrics.registry.metrics();
      return /^kubevirt_workqueue_work_duration_seconds_count\{name="virt-controller-vm"\} [1-9]/m.test(text) ? text : undefined;
    }, { what: 'the VM synced once' });
    vms.vmChanged(cluster.vm());
    const text = await eventually(async () => {
      const t = await metrics.registry.metrics();
      return /^kubevirt_workqueue_adds_total\{name="virt-controller-vm"\} 1$/m.test(t) && /^kubevirt_workqueue_work_duration_seconds_count\{name="virt-controller-vm"\} [2-9]/m.test(t) ? t : undefined;
    }, { what: 'the change added and synced' });
    assert.match(text, /^kubevirt_workqueue_depth\{name="virt-controller-vm"\} 0$/m);
    assert.match(text, /^kubevirt_workqueue_retries_total\{name="virt-controller-vm"\} 0$/m);
  } finally {
    stop.abort();
    await running;
  }
});
