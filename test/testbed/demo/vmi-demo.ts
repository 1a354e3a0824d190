// The main job: a VMI manifest becomes a running VM on the local testbed and goes away again,
// every step through the real interfaces — kubectl for the API, podvirtctl for the node API —
// with controller and handler started as manifests/ starts them. Ends with nothing left behind.
// `--node real` tells the same story on the upstream kubelet on containerd, podvirt as its pods.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import { guestImage } from '../guest/guest-image.js';
import { repoRoot } from '../guest/repo-root.js';
import { waitForConsoleText } from '../guest/wait-for-console-text.js';
import { podman } from '../container/podman.js';
import { KUBELET_ROOT_LABEL } from '../container/start-image-container.js';
import { guestSerialLog } from '../stack/guest-serial-log.js';
import { CONTAINERD_SOCKET } from '../real-node/real-node.js';
import { readTcp } from '../sandbox/read-tcp.js';
import type { PodvirtStack } from '../stack/start-podvirt-stack.js';
import type { DemoOutput } from './boot-guest-demo.js';
import { controlPlaneOption, type ControlPlane, type NodeKind } from './demo-args.js';
import { DemoShell, kubectlOf, type ShowOptions } from './demo-shell.js';
import { onDemoStack, realNodeStack, testbedStack } from './demo-stack.js';
import { until } from './demo-until.js';
import { followFile } from './follow-file.js';
import type { VmiPhaseWatch } from './vmi-phase-watch.js';

export interface VmiDemoOptions {
  readonly out: DemoOutput;
  /** The host environment the kubectl and podvirtctl runs inherit. */
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly node: string;
  readonly signal?: AbortSignal;
  /** The kubelet's runtime: `process` (default) or `image` (the launcher pod from the built images). */
  readonly runtime?: string;
  /** The API server the stack runs on: the in-repo one (default) or the real one (see stack/real-control-plane.ts). */
  readonly controlPlane?: ControlPlane;
  /** The node: the testbed's kubelet (default) or the upstream kubelet on containerd (real-node/); `real` implies the real control plane. */
  readonly nodeKind?: NodeKind;
}

const EXAMPLE = 'manifests/examples/vmi-test-guest.yaml';
const VMI = 'testvm';
// On the real node: the test guest on the pod network (masquerade), answering on its pod IP.
const REAL_NODE_EXAMPLE = 'manifests/examples/vmi-masquerade.yaml';
const REAL_NODE_VMI = 'testvm-net';
const NS = 'default';
// TCG boots share two cores with everything else here: generous bounds, not expectations.
const RUNNING_TIMEOUT_MS = 120_000;
const READY_TIMEOUT_MS = 120_000;
const STOP_TIMEOUT_MS = 90_000;
// The kubelet collects a gone pod's sandbox once a minute.
const GC_TIMEOUT_MS = 90_000;
// qemu logs its command line one option per line: `-device …`, `/usr/bin/qemu-system-x86_64 \`.
const QEMU_ARGV_LINE = /virt-launcher\/qemu\s+(-|\S+=\S+ |\/usr\/bin\/qemu|.*\\$)/;

export async function vmiDemo(o: VmiDemoOptions): Promise<void> {
  if (o.nodeKind === 'real') return realNodeVmiDemo(o);
  const { out, signal } = o;
  const root = repoRoot(import.meta.url);
  await onDemoStack(out, {
    stack: testbedStack({ node: o.node, ...(o.runtime === undefined ? {} : { runtime: o.runtime }), ...controlPlaneOption(o.controlPlane) }),
    namespace: NS,
    starting: o.controlPlane === 'real'
      ? 'starting the real control plane (etcd, kube-apiserver, kube-controller-manager, kube-scheduler), the testbed kubelet, and podvirt-controller + podvirt-handler with the commands of manifests/'
      : 'starting the testbed (API server, scheduler, kubelet) and podvirt-controller + podvirt-handler with the commands of manifests/',
    tearingDown: 'tearing down: handler, controller, testbed (its pods end)',
  }, async ({ stack: s, startMs, watch }) => {
    out.detail(`controller: ${shortArgv(s.controllerCommand.argv, root)}`);
    out.detail(`handler:    ${shortArgv(s.handlerCommand.argv, root)}`);
    out.step(`stack up in ${startMs} ms on node ${s.nodeName}`);

    const shell = new DemoShell({ out, env: o.env, node: o.node, repoRoot: root, kubeconfig: s.kubeconfigPath, ...kubectlOf(s), nodeApiSocket: s.nodeApiSocket });

    if (o.controlPlane === 'real') {
      out.step('the API server is kube-apiserver itself');
      await shell.kubectl(['version']);
    }
    await vmiStory({
      out, shell, watch, signal, example: EXAMPLE, vmi: VMI,
      pod: async () => (await launcherPod(s, VMI)).name,
      guestReady: () => guestReady(s, out, signal),
      ...(o.runtime === 'image' ? { showContainers: () => showImageContainers(s, out) } : {}),
    });
  });
}

/**
 * `scripts/demo --node real`: the same story on the upstream kubelet on containerd, podvirt
 * installed as its pods from manifests/, with the masquerade example so the guest answers on its
 * pod IP; crictl shows the handler and the launcher pod in containerd while they run, and no
 * sandbox of the launcher pod once the kubelet has collected it.
 */
async function realNodeVmiDemo(o: VmiDemoOptions): Promise<void> {
  const { out, signal } = o;
  const root = repoRoot(import.meta.url);
  await onDemoStack(out, {
    stack: realNodeStack(root),
    namespace: NS,
    starting: 'starting the real control plane, the upstream kubelet on containerd on the testbed\'s bridge, and podvirt on it with kubectl apply -f manifests/',
    tearingDown: 'tearing down: the node (its pods stopped and removed), the control plane, the network',
  }, async ({ stack: c, startMs, watch }) => {
    out.step(`real node ${c.node.nodeName} up, podvirt rolled out, in ${startMs} ms`);
    const shell = new DemoShell({ out, env: o.env, node: o.node, repoRoot: root, kubeconfig: c.kubeconfig, kubectl: c.cp.binaries.kubectl, nodeApiSocket: c.nodeApiSocket });
    const crictl = (args: readonly string[], show: ShowOptions = {}): Promise<string> => shell.command('crictl', c.node.binaries.crictl, ['--runtime-endpoint', `unix://${CONTAINERD_SOCKET}`, ...args], show);
    await shell.kubectl(['get', 'nodes', '-o', 'wide']);
    await shell.kubectl(['-n', 'podvirt', 'get', 'pods', '-o', 'wide']);
    out.step('podvirt-handler runs in a containerd container');
    await crictl(['ps', '--name', 'podvirt-handler']);
    let pod = '';
    await vmiStory({
      out, shell, watch, signal, example: REAL_NODE_EXAMPLE, vmi: REAL_NODE_VMI,
      pod: async () => {
        pod = (JSON.parse(await c.admin(['get', 'pods', '-n', NS, '-l', `vm.kubevirt.io/name=${REAL_NODE_VMI}`, '-o', 'json'])) as { items: Array<{ metadata: { name: string } }> }).items[0]?.metadata.name ?? '';
        if (pod === '') throw new Error(`no launcher pod for ${REAL_NODE_VMI}`);
        return pod;
      },
      // The real kubelet serves the guest-console-log container's log (the guest's serial console).
      guestReady: () => until('the guest\'s ready marker in kubectl logs -c guest-console-log', async () => {
        const logs = await c.admin(['logs', '-n', NS, pod, '-c', 'guest-console-log']).catch(() => '');
        return logs.split('\n').find((l) => l.includes(guestImage().readyMarker))?.trim();
      }, READY_TIMEOUT_MS, signal),
      showContainers: async () => {
        out.step("the launcher pod's sandbox and containers in containerd");
        await crictl(['pods', '--name', pod]);
        await crictl(['ps', '--label', `io.kubernetes.pod.name=${pod}`]);
      },
      afterConsole: async () => {
        const ip = (await c.admin(['get', 'pod', '-n', NS, pod, '-o', 'jsonpath={.status.podIP}'])).trim();
        out.step(`the masquerade guest answers on its pod IP ${ip} (TCP 8080: its boot_id), which the VMI reports`);
        const answer = await until(`an answer on ${ip}:8080`, () => readTcp(ip, 8080).then((a) => a.trim() || undefined, () => undefined), READY_TIMEOUT_MS, signal);
        out.detail(`${ip}:8080 → ${answer}`);
        await until(`the VMI's interface at ${ip}`, async () => ((await c.admin(['get', 'vmi', REAL_NODE_VMI, '-o', 'jsonpath={.status.interfaces[0].ipAddress}'])).trim() === ip ? true : undefined), READY_TIMEOUT_MS, signal);
        await shell.kubectl(['get', 'vmi', REAL_NODE_VMI, '-o', 'wide']);
      },
      afterSucceeded: async () => {
        out.step("the launcher pod gone: the kubelet stops its sandbox, and removes it in its garbage collection (once a minute)");
        await until(`the sandbox of ${pod} removed`, async () => ((await c.node.crictl(['pods', '--name', pod, '-q'])).trim() === '' ? true : undefined), GC_TIMEOUT_MS, signal);
        await crictl(['pods']);
      },
    });
  });
}

interface VmiStory {
  readonly out: DemoOutput;
  readonly shell: DemoShell;
  readonly watch: VmiPhaseWatch;
  readonly signal: AbortSignal | undefined;
  readonly example: string;
  readonly vmi: string;
  /** The VMI's launcher pod's name (once Running). */
  pod(): Promise<string>;
  /** Waits for the guest's ready marker; the line that carries it. */
  guestReady(): Promise<string>;
  /** Shows the launcher pod's containers as the runtime lists them. */
  showContainers?(): Promise<void>;
  afterConsole?(): Promise<void>;
  afterSucceeded?(): Promise<void>;
}

/** The main demo's story: apply → Running → guest ready → what kubectl shows → logs → console → pause/unpause → delete → Succeeded. */
async function vmiStory(d: VmiStory): Promise<void> {
  const { out, shell, watch, signal, vmi } = d;
  out.step(`applying ${d.example} (the tiny test guest) with kubectl`);
  const applied = Date.now();
  await shell.kubectl(['apply', '-f', join(repoRoot(import.meta.url), d.example)]);
  await watch.waitFor(vmi, 'Running', RUNNING_TIMEOUT_MS, signal);
  out.step(`Running ${Date.now() - applied} ms after apply; waiting for the guest's ready marker on its serial console`);
  const pod = await d.pod();
  const ready = await d.guestReady();
  out.step(`guest ready ${Date.now() - applied} ms after apply: ${ready}`);

  out.step('what kubectl shows');
  await shell.kubectl(['get', 'vmi', '-o', 'wide']);
  out.step("the launcher pod's log: monitor, launcher, libvirt and qemu as JSON lines (condensed; qemu's command line left out)");
  await shell.kubectl(['logs', pod, '-c', 'compute', '--tail=60'], { condenseJson: true, maxLines: 6, skip: QEMU_ARGV_LINE });
  await d.showContainers?.();
  out.step("the guest's own boot output, as KubeVirt shows it: kubectl logs -c guest-console-log");
  await shell.kubectl(['logs', pod, '-c', 'guest-console-log'], { maxLines: 8, skip: /PODVIRT-GUEST-HEARTBEAT|^\s*$/ });
  out.step(`a command typed into the guest's serial console through ${shell.vmiOpsRoute}`);
  await shell.console(vmi, 'cat /proc/sys/kernel/random/boot_id', /boot_id\s*\r?\n[0-9a-f-]{36}/);
  await d.afterConsole?.();
  out.step("the VMI's Events");
  await shell.kubectl(['get', 'events', '--field-selector', `involvedObject.name=${vmi}`, '--sort-by=.lastTimestamp']);

  out.step(`pausing and unpausing through ${shell.vmiOpsRoute}`);
  await shell.podvirtctl(['pause', 'vmi', vmi]);
  await shell.kubectl(['get', 'vmi', vmi, '-o', 'wide']);
  await shell.podvirtctl(['unpause', 'vmi', vmi]);

  out.step('deleting the VMI: ACPI shutdown of the guest, then the launcher pod ends');
  const deleting = Date.now();
  await shell.kubectl(['delete', 'vmi', vmi, '--wait=false']);
  await watch.waitFor(vmi, 'Succeeded', STOP_TIMEOUT_MS, signal);
  out.step(`Succeeded ${Date.now() - deleting} ms after delete`);
  await shell.kubectl(['get', 'events', '--field-selector', `involvedObject.name=${vmi}`, '--sort-by=.lastTimestamp'], { maxLines: 3 });
  await d.afterSucceeded?.();
}

/** Follows the guest's serial log (in the launcher pod's `private` emptyDir) until the ready marker. */
async function guestReady(stack: PodvirtStack, out: DemoOutput, signal: AbortSignal | undefined): Promise<string> {
  const pod = await launcherPod(stack, VMI);
  const serial = guestSerialLog(stack.testbed.kubeletRoot, pod.podUid, pod.vmiUid);
  const follower = followFile(serial, (line) => out.detail(`console | ${line}`));
  try {
    const match = await waitForConsoleText(serial, guestImage().readyMarker, { timeoutMs: READY_TIMEOUT_MS, ...(signal === undefined ? {} : { signal }) });
    return match.line.trim();
  } finally {
    await follower.close();
  }
}

/** The VMI's launcher pod: its name, its UID (its directory under the kubelet root) and the VMI's UID. */
async function launcherPod(stack: PodvirtStack, vmi: string): Promise<{ name: string; podUid: string; vmiUid: string }> {
  const pods = await stack.kubeConfig.makeApiClient(CoreV1Api).listNamespacedPod({ namespace: NS, labelSelector: `vm.kubevirt.io/name=${vmi}` });
  const meta = pods.items[0]?.metadata;
  const vmiUid = meta?.labels?.['kubevirt.io/created-by'];
  if (meta?.name === undefined || meta.uid === undefined || vmiUid === undefined) throw new Error(`no launcher pod for ${vmi}`);
  return { name: meta.name, podUid: meta.uid, vmiUid };
}

/**
 * With the image runtime: the pod's containers as podman lists them, the processes inside the
 * compute container, and qemu's cgroup and root filesystem, which are the container's.
 */
async function showImageContainers(stack: PodvirtStack, out: DemoOutput): Promise<void> {
  out.step("the launcher pod's containers in podman (runc), and the processes inside the compute container");
  const root = stack.testbed.kubeletRoot;
  const listed = await podman(['ps', '--filter', `label=${KUBELET_ROOT_LABEL}=${root}`, '--format', '{{.Names}}\t{{.Image}}\t{{index .Labels "io.kubernetes.container.name"}}']);
  const lines = listed.split('\n').filter((l) => l !== '');
  for (const line of lines) out.detail(`podman ps | ${line}`);
  const compute = lines.map((l) => l.split('\t')).find((f) => f[2] === 'compute')?.[0];
  if (compute === undefined) throw new Error('no compute container in podman ps');
  const top = await podman(['top', compute, 'pid', 'hpid', 'user', 'args']);
  for (const line of top.split('\n').filter((l) => l !== '')) out.detail(`podman top | ${line.slice(0, 150)}`);
  const qemu = /^\s*\S+\s+(\d+)\s+\S+\s+\/usr\/bin\/qemu-system/m.exec(top)?.[1];
  if (qemu === undefined) throw new Error('no qemu inside the compute container');
  const cgroup = (await readFile(`/proc/${qemu}/cgroup`, 'utf8')).split('\n').find((l) => l.includes(':memory:')) ?? '';
  const rootMount = (await readFile(`/proc/${qemu}/mountinfo`, 'utf8')).split('\n').find((l) => l.split(' ')[4] === '/') ?? '';
  out.detail(`qemu (host pid ${qemu}) cgroup: ${cgroup}`);
  out.detail(`qemu root filesystem: ${rootMount.split(' - ')[1]?.split(',')[0] ?? rootMount}`);
}

/** An argv as a reader wants it: the node binary and the repository prefix left out. */
function shortArgv(argv: readonly string[], root: string): string {
  return argv.slice(1).map((a) => a.replace(`${root}/`, '')).join(' ');
}
