// The metrics text: KubeVirt's phase count with its full label set, computed at scrape time,
// the workqueue metrics, and launcher call latency by method and code; own registry each.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { register as globalRegistry } from 'prom-client';
import { HandlerMetrics } from '../src/metrics/handler-metrics.js';
import { phaseCountLabels } from '../src/metrics/vmi-phase-labels.js';
import { makeVmi } from './fixtures.js';

test('kubevirt_vmi_phase_count follows the informer cache at scrape time', async () => {
  const vmis = [makeVmi({ phase: 'Running', name: 'a' }), makeVmi({ phase: 'Running', name: 'b' }), makeVmi({ phase: 'Scheduled', name: 'c' })];
  const templated = makeVmi({ phase: 'Running', name: 'd' });
  templated.metadata.annotations = {
    'vm.kubevirt.io/os': 'fedora', 'vm.kubevirt.io/workload': 'server', 'vm.kubevirt.io/flavor': 'small',
    'kubevirt.io/cluster-instancetype-name': 'u1.small', 'kubevirt.io/preference-name': 'fedora',
  };
  vmis.push(templated);
  let depth = 3;
  const metrics = new HandlerMetrics({ nodeName: 'node01', vmis: () => vmis, queueDepth: () => depth });
  const none = 'os="<none>",workload="<none>",flavor="<none>",instance_type="<none>",preference="<none>"';
  let text = await metrics.text();
  assert.match(text, /# TYPE kubevirt_vmi_phase_count gauge/);
  assert.ok(text.includes(`kubevirt_vmi_phase_count{node="node01",phase="running",${none}} 2\n`), text);
  assert.ok(text.includes(`kubevirt_vmi_phase_count{node="node01",phase="scheduled",${none}} 1\n`));
  assert.ok(text.includes('kubevirt_vmi_phase_count{node="node01",phase="running",os="fedora",workload="server",flavor="small",instance_type="u1.small",preference="fedora"} 1\n'));
  assert.ok(text.includes('kubevirt_workqueue_depth{name="virt-handler-vm"} 3\n'));

  vmis.splice(0, 3);
  depth = 0;
  text = await metrics.text();
  assert.ok(!text.includes(`phase="scheduled"`), 'a phase nobody is in any more disappears');
  assert.ok(!text.includes(`phase="running",${none}`));
  assert.ok(text.includes('kubevirt_workqueue_depth{name="virt-handler-vm"} 0\n'));
});

test('reconcile durations, retries, launcher call latency and node API requests', async () => {
  const metrics = new HandlerMetrics({ nodeName: 'n', vmis: () => [], queueDepth: () => 0 });
  metrics.observeReconcile(0.003, true);
  metrics.observeReconcile(0.2, false);
  metrics.observeLauncherCall('Sync', 'OK', 0.004);
  metrics.observeLauncherCall('Pause', 'FAILED_PRECONDITION', 0.0008);
  metrics.observeNodeApiCall('Pause', 'NOT_FOUND');
  const text = await metrics.text();
  assert.ok(text.includes('kubevirt_workqueue_work_duration_seconds_count{name="virt-handler-vm"} 2\n'));
  assert.ok(text.includes('kubevirt_workqueue_work_duration_seconds_bucket{le="0.005",name="virt-handler-vm"} 1\n'), text);
  assert.ok(text.includes('kubevirt_workqueue_retries_total{name="virt-handler-vm"} 1\n'));
  assert.ok(text.includes('podvirt_handler_reconciles_total{result="ok"} 1\n'));
  assert.ok(text.includes('podvirt_handler_reconciles_total{result="error"} 1\n'));
  assert.ok(text.includes('podvirt_handler_launcher_call_duration_seconds_bucket{le="0.005",method="Sync",code="OK"} 1\n'));
  assert.ok(text.includes('podvirt_handler_launcher_call_duration_seconds_count{method="Pause",code="FAILED_PRECONDITION"} 1\n'));
  assert.ok(text.includes('podvirt_handler_node_api_requests_total{method="Pause",code="NOT_FOUND"} 1\n'));
  assert.ok(!text.includes('process_resident_memory_bytes'), 'process metrics only when asked for');
});

test('two instances never share a registry, and the global one stays empty', async () => {
  const a = new HandlerMetrics({ nodeName: 'a', vmis: () => [makeVmi({ phase: 'Running' })], queueDepth: () => 0, processMetrics: true });
  const b = new HandlerMetrics({ nodeName: 'b', vmis: () => [], queueDepth: () => 0, processMetrics: true });
  assert.match(await a.text(), /process_resident_memory_bytes \d+/);
  assert.ok(!(await b.text()).includes('node="a"'));
  assert.equal((await globalRegistry.metrics()).trim(), '');
});

test('phase labels: a VMI without a phase yet is counted with an empty phase', () => {
  const vmi = makeVmi();
  delete vmi.status;
  assert.equal(phaseCountLabels(vmi, 'n').phase, '');
});
