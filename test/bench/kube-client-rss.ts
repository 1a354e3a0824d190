// The memory a Kubernetes client stack costs each podvirt process: the RSS of podvirt-controller
// and podvirt-handler idle and with 100 VMIs, built on @podvirt/kube-runtime (this tree) and, when
// given, the same processes built on @kubernetes/client-node (an older build). Each process runs
// alone against its own testbed API server:
//  - controller: 100 VMIs, each given its launcher pod (no kubelet: the pods stay Pending and
//    the VMIs Scheduling), so both informers hold 100 objects;
//  - handler: 100 VMIs labelled for its node, Running, each with an in-process fake launcher
//    (handler-fake-launchers.ts), so the informer, the work queue and 100 domain streams are live.
// Asserts nothing.
//
//   node test/dist/bench/kube-client-rss.js [vmis]      (default 100)
//   PODVIRT_BASELINE_CONTROLLER_BIN=<old tree>/packages/controller/bin/podvirt-controller.js
//   PODVIRT_BASELINE_HANDLER_BIN=<old tree>/packages/handler/bin/podvirt-handler.js
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { eventually } from '@podvirt/test-support';
import { startTestApiServer, type TestApiServer } from '../e2e/testbed-helpers.js';
import { repoRoot, StackProcess } from '../testbed/index.js';
import { BenchLauncher } from './handler-fake-launchers.js';

const NODE = 'bench-node';
const VMI_API = { group: 'kubevirt.io', version: 'v1', namespace: 'default', plural: 'virtualmachineinstances' };
const ROOT = repoRoot(import.meta.url);
const SETTLE_MS = 3_000;

async function rssMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1] ?? NaN) / 1024;
}

const vmiBody = (name: string): object => ({
  apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance',
  metadata: { name, namespace: 'default' },
  spec: { domain: { devices: {}, resources: { requests: { memory: '128Mi' } } } },
});

interface Figures {
  readonly idle: number;
  readonly loaded: number;
}

async function measureController(bin: string, n: number): Promise<Figures> {
  const api = await startTestApiServer();
  let proc: StackProcess | undefined;
  try {
    const core = api.kubeConfig.makeApiClient(CoreV1Api);
    const custom = api.kubeConfig.makeApiClient(CustomObjectsApi);
    proc = new StackProcess({ name: 'controller', argv: [process.execPath, bin, '--kubeconfig', api.kubeconfigPath, '--allow-emulation'], env: { ...process.env } });
    const p = proc;
    await eventually(() => p.lines.some((l) => l.msg === 'controller started'), { what: 'controller started', deadlineMs: 60_000 });
    await sleep(SETTLE_MS);
    const idle = await rssMiB(p.pid);
    for (let i = 0; i < n; i++) await custom.createNamespacedCustomObject({ ...VMI_API, body: vmiBody(`rss-${i}`) });
    await eventually(async () => (await core.listNamespacedPod({ namespace: 'default' })).items.length >= n, { what: `${n} launcher pods`, deadlineMs: 300_000 });
    await sleep(SETTLE_MS);
    return { idle, loaded: await rssMiB(p.pid) };
  } finally {
    await proc?.stop(10_000);
    await api.close();
  }
}

async function createScheduledVmi(custom: CustomObjectsApi, i: number): Promise<void> {
  const name = `rss-${i}`;
  const created = (await custom.createNamespacedCustomObject({ ...VMI_API, body: vmiBody(name) })) as Record<string, unknown>;
  const status = { phase: 'Scheduled', nodeName: NODE, activePods: { [`p${i}`]: NODE } };
  await custom.replaceNamespacedCustomObjectStatus({ ...VMI_API, name, body: { ...created, status } });
  await custom.patchNamespacedCustomObject(
    { ...VMI_API, name, body: { metadata: { labels: { 'kubevirt.io/nodeName': NODE } } } },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
}

async function measureHandler(bin: string, n: number): Promise<Figures> {
  const dir = await mkdtemp(join(tmpdir(), 'pvb-rss-'));
  const podsDir = join(dir, 'p');
  const api: TestApiServer = await startTestApiServer();
  const launchers: BenchLauncher[] = [];
  let proc: StackProcess | undefined;
  try {
    await api.kubeConfig.makeApiClient(CoreV1Api).createNode({ body: { metadata: { name: NODE } } });
    const custom = api.kubeConfig.makeApiClient(CustomObjectsApi);
    proc = new StackProcess({
      name: 'handler',
      argv: [process.execPath, bin, '--kubeconfig', api.kubeconfigPath, '--node-name', NODE, '--pods-dir', podsDir,
        '--ghost-record-dir', join(dir, 'records'), '--node-api-socket', join(dir, 'node.sock'), '--metrics-port', '0', '--health-port', '0'],
      env: { ...process.env },
    });
    const p = proc;
    await eventually(() => p.lines.some((l) => l.msg === 'handler ready'), { what: 'handler ready', deadlineMs: 60_000 });
    await sleep(SETTLE_MS);
    const idle = await rssMiB(p.pid);
    for (let i = 0; i < n; i++) launchers.push(await BenchLauncher.start(podsDir, `p${i}`));
    for (let i = 0; i < n; i++) await createScheduledVmi(custom, i);
    await eventually(async () => {
      const list = (await custom.listNamespacedCustomObject(VMI_API)) as { items: Array<{ status?: { phase?: string } }> };
      return list.items.filter((v) => v.status?.phase === 'Running').length === n;
    }, { what: `${n} Running`, deadlineMs: 300_000 });
    await sleep(SETTLE_MS);
    return { idle, loaded: await rssMiB(p.pid) };
  } finally {
    await proc?.stop(10_000);
    await Promise.all(launchers.map((l) => l.close()));
    await api.close();
    await rm(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const n = Number(process.argv[2] ?? 100);
  const rows: Array<[string, Figures]> = [];
  const baselineController = process.env['PODVIRT_BASELINE_CONTROLLER_BIN'];
  const baselineHandler = process.env['PODVIRT_BASELINE_HANDLER_BIN'];
  rows.push(['podvirt-controller, @podvirt/kube-runtime', await measureController(join(ROOT, 'packages/controller/bin/podvirt-controller.js'), n)]);
  if (baselineController) rows.push(['podvirt-controller, @kubernetes/client-node', await measureController(baselineController, n)]);
  rows.push(['podvirt-handler, @podvirt/kube-runtime', await measureHandler(join(ROOT, 'packages/handler/bin/podvirt-handler.js'), n)]);
  if (baselineHandler) rows.push(['podvirt-handler, @kubernetes/client-node', await measureHandler(baselineHandler, n)]);
  console.log(`RSS (MiB), each process alone against its own testbed API server; Node ${process.version}`);
  console.log(`  ${'process, client'.padEnd(46)} ${'idle'.padStart(7)} ${`${n} VMIs`.padStart(9)}`);
  for (const [label, f] of rows) console.log(`  ${label.padEnd(46)} ${f.idle.toFixed(1).padStart(7)} ${f.loaded.toFixed(1).padStart(9)}`);
}

await main();
