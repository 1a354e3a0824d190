// `scripts/demo --migrate`: live migration on the two-node testbed, through the interfaces a user
// has — kubectl apply of the masquerade example VMI, `podvirtctl migrate vmi testvm-net`,
// `kubectl get vmim` and `kubectl get vmi -o wide` — and the guest's boot_id read over its serial
// console and from the VMI's IP on port 8080 before and after the move: the same boot, on another
// node, answering on the target pod's IP. Ends with nothing left behind.
import { join } from 'node:path';
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { guestImage } from '../guest/guest-image.js';
import { repoRoot } from '../guest/repo-root.js';
import { waitForConsoleText } from '../guest/wait-for-console-text.js';
import { readTcp } from '../sandbox/read-tcp.js';
import { guestSerialLog } from '../stack/guest-serial-log.js';
import type { PodvirtStack } from '../stack/start-podvirt-stack.js';
import type { DemoOutput } from './boot-guest-demo.js';
import { controlPlaneOption, type ControlPlane } from './demo-args.js';
import { DemoShell, kubectlOf } from './demo-shell.js';
import { onDemoStack, testbedStack } from './demo-stack.js';
import { until } from './demo-until.js';

export interface MigrateDemoOptions {
  readonly out: DemoOutput;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly node: string;
  readonly signal?: AbortSignal;
  readonly controlPlane?: ControlPlane;
}

// Masquerade, because a VMI that names no interface gets a bridge on the pod network, which holds
// the pod's own address and cannot move (LiveMigratable False, InterfaceNotLiveMigratable).
const EXAMPLE = 'manifests/examples/vmi-masquerade.yaml';
const VMI = 'testvm-net';
const NS = 'default';
// TCG on two shared cores: generous bounds, never expectations.
const RUNNING_TIMEOUT_MS = 120_000;
const MIGRATION_TIMEOUT_MS = 180_000;
const STOP_TIMEOUT_MS = 90_000;
const BOOT_ID = /boot_id\s*\r?\n([0-9a-f-]{36})/;

interface Vmi {
  metadata?: { uid?: string };
  status?: { nodeName?: string; conditions?: Array<{ type: string; status: string }>; interfaces?: Array<{ ipAddress?: string }> };
}

export async function migrateDemo(o: MigrateDemoOptions): Promise<void> {
  const { out, signal } = o;
  const root = repoRoot(import.meta.url);
  await onDemoStack(out, {
    stack: testbedStack({ node: o.node, nodes: 2, ...controlPlaneOption(o.controlPlane) }),
    namespace: NS,
    starting: 'starting the two-node testbed (two kubelets, two handlers) and podvirt-controller',
    tearingDown: 'tearing down: handlers, controller, testbed',
  }, async ({ stack: s, watch }) => {
    const shells = new Map(s.nodes.map((n) => [n.nodeName, new DemoShell({ out, env: o.env, node: o.node, repoRoot: root, kubeconfig: s.kubeconfigPath, ...kubectlOf(s), nodeApiSocket: n.nodeApiSocket })]));
    const shellOn = (nodeName: string): DemoShell => {
      const shell = shells.get(nodeName);
      if (shell === undefined) throw new Error(`no node ${nodeName}`);
      return shell;
    };
    const any = shellOn(s.nodeName);
    out.step(`nodes: ${s.nodes.map((n) => n.nodeName).join(', ')}`);

    out.step(`applying ${EXAMPLE} with kubectl`);
    await any.kubectl(['apply', '-f', join(root, EXAMPLE)]);
    await watch.waitFor(VMI, 'Running', RUNNING_TIMEOUT_MS, signal);
    const before = await until('the VMI LiveMigratable and the guest up', async () => {
      const v = await readVmi(s);
      return v.status?.conditions?.some((c) => c.type === 'LiveMigratable' && c.status === 'True') === true ? v : undefined;
    }, RUNNING_TIMEOUT_MS, signal);
    const source = before.status?.nodeName ?? '';
    await guestReady(s, source, before.metadata?.uid ?? '', signal);
    await any.kubectl(['get', 'vmi', '-o', 'wide']);
    out.step(`the guest's boot_id on ${source}, over its serial console`);
    const bootBefore = BOOT_ID.exec(await shellOn(source).console(VMI, 'cat /proc/sys/kernel/random/boot_id', BOOT_ID))?.[1];
    const ipBefore = await overNetwork(s, undefined, signal);
    out.step(`from the host: the VMI's IP ${ipBefore.ip}:8080 answers ${ipBefore.answer}`);

    out.step(`podvirtctl migrate vmi ${VMI}: a VirtualMachineInstanceMigration, the controller and both handlers do the rest`);
    const name = (await any.podvirtctl(['migrate', 'vmi', VMI])).trim();
    const done = await until(`migration ${name} ended`, async () => {
      const phase = await migrationPhase(s, name);
      return phase === 'Succeeded' || phase === 'Failed' ? phase : undefined;
    }, MIGRATION_TIMEOUT_MS, signal);
    await any.kubectl(['get', 'vmim']);
    await any.kubectl(['get', 'vmim', name, '-o', 'jsonpath={range .status.phaseTransitionTimestamps[*]}{.phase}{" "}{end}']);
    if (done !== 'Succeeded') throw new Error(`the migration ended ${done}; kubectl describe vmim ${name} says why`);
    await any.kubectl(['get', 'vmi', '-o', 'wide']);
    await any.kubectl(['get', 'pods', '-o', 'wide']);
    const target = (await readVmi(s)).status?.nodeName ?? '';
    out.step(`the guest's boot_id on ${target}: the same boot, moved`);
    const bootAfter = BOOT_ID.exec(await shellOn(target).console(VMI, 'cat /proc/sys/kernel/random/boot_id', BOOT_ID))?.[1];
    if (bootBefore === undefined || bootBefore !== bootAfter || target === source) {
      throw new Error(`expected the same boot_id on another node: ${source} ${bootBefore ?? '?'} → ${target} ${bootAfter ?? '?'}`);
    }
    out.step(`boot_id ${bootAfter} before and after; ${source} → ${target}`);
    const ipAfter = await overNetwork(s, ipBefore.ip, signal);
    out.step(`from the host: the VMI's IP is now the target pod's, ${ipAfter.ip}:8080, and answers ${ipAfter.answer}`);
    if (ipAfter.answer !== bootAfter) throw new Error(`${ipAfter.ip}:8080 answered ${ipAfter.answer}, not the guest's boot_id ${bootAfter}`);
    out.step("the VMI's and the migration's Events");
    await any.kubectl(['get', 'events', '--field-selector', `involvedObject.name=${VMI}`, '--sort-by=.lastTimestamp'], { maxLines: 8 });
    await any.kubectl(['get', 'events', '--field-selector', `involvedObject.name=${name}`, '--sort-by=.lastTimestamp']);

    out.step(`deleting the VMI: the guest shuts down on ${target}`);
    await any.kubectl(['delete', 'vmi', VMI, '--wait=false']);
    await watch.waitFor(VMI, 'Succeeded', STOP_TIMEOUT_MS, signal);
  });
}

/** The VMI's IP from its status (another than `not`), and what port 8080 there answers: the guest's boot_id. */
async function overNetwork(stack: PodvirtStack, not: string | undefined, signal: AbortSignal | undefined): Promise<{ ip: string; answer: string }> {
  const ip = await until('the VMI IP in status', async () => {
    const found = (await readVmi(stack)).status?.interfaces?.[0]?.ipAddress;
    return found !== undefined && found !== not ? found : undefined;
  }, RUNNING_TIMEOUT_MS, signal);
  const answer = await until(`${ip}:8080 answering`, () => readTcp(ip, 8080), RUNNING_TIMEOUT_MS, signal);
  return { ip, answer: answer.trim() };
}

async function readVmi(stack: PodvirtStack): Promise<Vmi> {
  const custom = stack.kubeConfig.makeApiClient(CustomObjectsApi);
  return (await custom.getNamespacedCustomObject({ group: 'kubevirt.io', version: 'v1', plural: 'virtualmachineinstances', namespace: NS, name: VMI })) as Vmi;
}

async function migrationPhase(stack: PodvirtStack, name: string): Promise<string | undefined> {
  const custom = stack.kubeConfig.makeApiClient(CustomObjectsApi);
  const m = (await custom.getNamespacedCustomObject({ group: 'kubevirt.io', version: 'v1', plural: 'virtualmachineinstancemigrations', namespace: NS, name })) as { status?: { phase?: string } };
  return m.status?.phase;
}

/** The guest's ready marker in its serial log, in the launcher pod on `nodeName`. */
async function guestReady(stack: PodvirtStack, nodeName: string, vmiUid: string, signal: AbortSignal | undefined): Promise<void> {
  const pods = await stack.kubeConfig.makeApiClient(CoreV1Api).listNamespacedPod({ namespace: NS, labelSelector: `kubevirt.io/created-by=${vmiUid}` });
  const pod = pods.items.find((p) => p.spec?.nodeName === nodeName);
  const node = stack.testbed.nodes.find((n) => n.nodeName === nodeName);
  if (pod?.metadata?.uid === undefined || node === undefined) throw new Error(`no launcher pod of ${VMI} on ${nodeName}`);
  const serial = guestSerialLog(node.kubeletRoot, pod.metadata.uid, vmiUid);
  await waitForConsoleText(serial, guestImage().readyMarker, { timeoutMs: RUNNING_TIMEOUT_MS, ...(signal === undefined ? {} : { signal }) });
}
