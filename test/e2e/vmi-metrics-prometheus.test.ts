// Per-VM metrics as a platform team sees them: Debian's Prometheus scrapes the handler and the
// controller of the testbed (static targets on 127.0.0.1, a temporary storage dir), and PromQL
// returns a running VMI's CPU and memory, a network counter that grows by the 2 MiB the test
// pushes into the guest, a drive's write counter that grows when the guest writes (a command
// typed on its serial console), and the start-time histogram. PODVIRT_TESTBED_CONTROL_PLANE=real
// runs it on the real kube-apiserver.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import { DemoShell } from '../testbed/demo/demo-shell.js';
import { repoRoot } from '../testbed/guest/repo-root.js';
import { freePort } from '../testbed/free-port.js';
import { readTcp } from '../testbed/index.js';
import { metricsPort } from './handler-node.js';
import { guestVmi, VmiSuite } from './vmi-stack.js';

const PROMETHEUS = '/usr/bin/prometheus';
const NAME = 'vm-metrics';

describe('Prometheus scrapes the handler and the controller', () => {
  const suite = VmiSuite.setUp({
    // Prometheus goes and the VMI is deleted while the stack is still up.
    beforeClose: async () => {
      if (prometheus !== undefined && prometheus.exitCode === null) {
        const exited = new Promise((resolve) => prometheus?.once('exit', resolve));
        prometheus.kill('SIGTERM');
        await exited;
      }
      if (dir !== '') await rm(dir, { recursive: true, force: true });
      await suite.kubectl(['delete', 'vmi', NAME, '--wait=false']);
      await suite.waitForGone(NAME);
    },
  });
  let dir = '';
  let prometheus: ChildProcess | undefined;
  let promLog = '';
  let api = '';
  let podIP = '';

  /** The value of an instant query's first sample, undefined while it returns none. */
  const query = async (promql: string): Promise<number | undefined> => {
    const res = await fetch(`${api}/api/v1/query?query=${encodeURIComponent(promql)}`);
    const body = (await res.json()) as { status: string; data?: { result?: Array<{ value: [number, string] }> } };
    assert.equal(body.status, 'success', `${promql}: ${JSON.stringify(body)}`);
    const v = body.data?.result?.[0]?.value[1];
    return v === undefined ? undefined : Number(v);
  };
  const above = (promql: string, floor: number, what: string): Promise<number> =>
    suite.eventually(what, async () => {
      const v = await query(promql);
      return v !== undefined && v > floor ? v : undefined;
    }, 60_000);

  before(async () => {
    // The guest writes 8 MiB to its second drive (an emptyDisk) with O_DIRECT before it is ready.
    const vmi = guestVmi(suite.guest, NAME, {
      extraKernelArgs: 'podvirt.diskbench=vdb:8:1',
      devices: { interfaces: [{ name: 'default', masquerade: {}, ports: [{ name: 'sink', port: 9000 }] }] },
    });
    const spec = vmi['spec'] as { domain: { devices: { disks: unknown[] } }; volumes: unknown[]; networks?: unknown[] };
    spec.networks = [{ name: 'default', pod: {} }];
    spec.domain.devices.disks.push({ name: 'scratch', disk: { bus: 'virtio' } });
    spec.volumes.push({ name: 'scratch', emptyDisk: { capacity: '32Mi' } });
    await suite.apply(vmi);
    const running = await suite.waitForPhase(NAME, 'Running');
    await suite.waitForGuestReady(running);
    podIP = (await suite.podsOf(running))[0]?.status?.podIP ?? '';
    assert.notEqual(podIP, '');

    const handler = metricsPort(suite.stack.handler);
    const controller = metricsPort(suite.stack.controller);
    assert.ok(handler !== undefined && controller !== undefined, 'both log their /metrics port');
    dir = await mkdtemp(join(tmpdir(), 'podvirt-prometheus-'));
    const config = [
      'global: { scrape_interval: 1s, scrape_timeout: 1s, evaluation_interval: 1s }',
      'scrape_configs:',
      `- job_name: podvirt-handler\n  static_configs: [{ targets: ['127.0.0.1:${handler}'] }]`,
      `- job_name: podvirt-controller\n  static_configs: [{ targets: ['127.0.0.1:${controller}'] }]`,
      '',
    ].join('\n');
    await writeFile(join(dir, 'prometheus.yml'), config);
    const port = await freePort();
    api = `http://127.0.0.1:${port}`;
    prometheus = spawn(PROMETHEUS, [
      `--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn',
    ], { stdio: ['ignore', 'ignore', 'pipe'] });
    prometheus.stderr?.on('data', (d: Buffer) => (promLog = (promLog + d.toString()).slice(-4000)));
    await suite.eventually('Prometheus ready', async () => ((await fetch(`${api}/-/ready`).catch(() => undefined))?.ok === true ? true : undefined), 60_000);
  });


  test('both targets are up', async () => {
    await above('sum(up{job=~"podvirt-handler|podvirt-controller"})', 1, `both targets up (prometheus: ${promLog})`);
  });

  test('the VMI\'s CPU time and resident memory, under KubeVirt\'s names and labels', async () => {
    const cpu = await above(`kubevirt_vmi_cpu_usage_seconds_total{name="${NAME}",namespace="default",node="${suite.stack.nodeName}"}`, 0, 'CPU time');
    assert.ok(cpu < 3600, `CPU seconds of a guest just booted: ${cpu}`);
    const rss = await above(`kubevirt_vmi_memory_resident_bytes{name="${NAME}"}`, 1024 * 1024, 'resident memory');
    assert.ok(rss < 4 * 1024 ** 3, `RSS ${rss}`);
    await above(`kubevirt_vmi_memory_domain_bytes{name="${NAME}"}`, 0, 'domain memory');
    await above(`kubevirt_vmi_vcpu_seconds_total{name="${NAME}",id="0"}`, 0, 'vCPU 0 time');
    // The suite's guest boots from its `data` containerDisk: the drive is named as the VMI names it.
    await above(`kubevirt_vmi_storage_read_traffic_bytes_total{name="${NAME}",drive="data"}`, 0, 'bytes read from the drive at boot');
    assert.equal(await query('sum(podvirt_handler_domain_stats_skipped_total)'), 0, 'no launcher left out');
  });

  test('the drive the guest wrote to counts what it wrote, under the VMI\'s name for it', async () => {
    const written = await above(`kubevirt_vmi_storage_write_traffic_bytes_total{name="${NAME}",drive="scratch"}`, 0, 'bytes written to scratch');
    assert.ok(written >= 8 * 1024 * 1024, `the guest's 8 MiB are counted: ${written}`);
    await above(`kubevirt_vmi_storage_iops_write_total{name="${NAME}",drive="scratch"}`, 0, 'write requests on scratch');
    await above(`kubevirt_vmi_storage_write_times_seconds_total{name="${NAME}",drive="scratch"}`, 0, 'write time on scratch');
  });

  test('the drive\'s write counter grows when the guest writes to it', async () => {
    const metric = `kubevirt_vmi_storage_write_traffic_bytes_total{name="${NAME}",drive="scratch"}`;
    const start = await above(metric, 0, 'bytes written to scratch');
    // 4 MiB past the boot's 8, O_DIRECT, typed on the serial console; the answer's `4` appears
    // only once dd has finished (the typed line shows the arithmetic, not its result).
    const quiet = { step: () => undefined, detail: () => undefined };
    const shell = new DemoShell({
      out: quiet, env: process.env, node: process.execPath, repoRoot: repoRoot(import.meta.url),
      kubeconfig: suite.stack.kubeconfigPath, nodeApiSocket: suite.stack.nodeApiSocket,
    });
    await shell.console(NAME, 'dd if=/dev/zero of=/dev/vdb bs=1M count=4 seek=8 oflag=direct conv=fsync 2>&1; echo dd-done=$((2+2))', /dd-done=4/);
    const grown = await above(metric, start + 4 * 1024 * 1024 - 1, 'the write counter grows by the 4 MiB written');
    assert.ok(grown < start + 8 * 1024 * 1024, `about 4 MiB more, not the boot's writes again: ${start} → ${grown}`);
    await above(`kubevirt_vmi_storage_iops_write_total{name="${NAME}",drive="scratch"}`, 0, 'write requests on scratch');
  });

  test('the received-bytes counter of the guest NIC grows by the 2 MiB the test pushes into the guest', async () => {
    const metric = `kubevirt_vmi_network_receive_bytes_total{name="${NAME}",interface="default"}`;
    const before = await above(metric, 0, 'received bytes');
    // The guest's sink on port 9000 reads until the sender closes and says how much arrived.
    const pushed = 2 * 1024 * 1024;
    assert.equal((await readTcp(podIP, 9000, 30_000, Buffer.alloc(pushed, 0x61))).trim(), `received ${pushed}`);
    // Headers and ACKs add a few per cent; the idle guest's own traffic is a few hundred bytes.
    const grown = await above(metric, before + pushed - 1, 'received bytes grow by what was pushed');
    assert.ok(grown < before + 2 * pushed, `about 2 MiB more: ${before} → ${grown}`);
    await above(`kubevirt_vmi_network_transmit_packets_total{name="${NAME}",interface="default"}`, 0, 'sent packets');
  });

  test('the controller\'s start-time histogram counts the VMI reaching Running', async () => {
    await above('kubevirt_vmi_phase_transition_time_from_creation_seconds_count{phase="Running"}', 0, 'from-creation histogram count');
    await above('kubevirt_vmi_phase_transition_time_seconds_count{phase="Running"}', 0, 'phase-to-phase histogram count');
    await above('kubevirt_virt_controller_leading_status', 0, 'the controller leads');
    await above('sum(kubevirt_workqueue_adds_total{name="virt-controller-vmi"})', 0, 'VMI queue adds');
    // No VM exists here: the VM queue is exported, with nothing added.
    assert.equal(await query('sum(kubevirt_workqueue_adds_total{name="virt-controller-vm"})'), 0, 'the VM queue is exported');
  });
});
