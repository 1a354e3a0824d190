// The main job: a VMI manifest becomes a running VM on the local testbed and goes away again,
// every step through the real interfaces — kubectl for the API, podvirtctl for the node API —
// with controller and handler started as manifests/ starts them. Ends with nothing left behind.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import { guestImage } from '../guest/guest-image.js';
import { repoRoot } from '../guest/repo-root.js';
import { waitForConsoleText } from '../guest/wait-for-console-text.js';
import { podman } from '../container/podman.js';
import { KUBELET_ROOT_LABEL } from '../container/start-image-container.js';
import { guestSerialLog } from '../stack/guest-serial-log.js';
import type { PodvirtStack } from '../stack/start-podvirt-stack.js';
import type { DemoOutput } from './boot-guest-demo.js';
import { controlPlaneOption, type ControlPlane } from './demo-args.js';
import { DemoShell, kubectlOf } from './demo-shell.js';
import { onDemoStack } from './demo-stack.js';
import { followFile } from './follow-file.js';

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
}

const EXAMPLE = 'manifests/examples/vmi-test-guest.yaml';
const VMI = 'testvm';
const NS = 'default';
// TCG boots share two cores with everything else here: generous bounds, not expectations.
const RUNNING_TIMEOUT_MS = 120_000;
const READY_TIMEOUT_MS = 120_000;
const STOP_TIMEOUT_MS = 90_000;
// qemu logs its command line one option per line: `-device …`, `/usr/bin/qemu-system-x86_64 \`.
const QEMU_ARGV_LINE = /virt-launcher\/qemu\s+(-|\S+=\S+ |\/usr\/bin\/qemu|.*\\$)/;

export async function vmiDemo(o: VmiDemoOptions): Promise<void> {
  const { out, signal } = o;
  const root = repoRoot(import.meta.url);
  await onDemoStack(out, {
    stack: { node: o.node, ...(o.runtime === undefined ? {} : { runtime: o.runtime }), ...controlPlaneOption(o.controlPlane) },
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
    out.step(`applying ${EXAMPLE} (the tiny test guest) with kubectl`);
    const applied = Date.now();
    await shell.kubectl(['apply', '-f', join(root, EXAMPLE)]);
    await watch.waitFor(VMI, 'Running', RUNNING_TIMEOUT_MS, signal);
    out.step(`Running ${Date.now() - applied} ms after apply; waiting for the guest's ready marker on its serial console`);
    const ready = await guestReady(s, out, signal);
    out.step(`guest ready ${Date.now() - applied} ms after apply: ${ready}`);

    out.step('what kubectl shows');
    await shell.kubectl(['get', 'vmi', '-o', 'wide']);
    const pod = (await launcherPod(s)).name;
    out.step("the launcher pod's log: monitor, launcher, libvirt and qemu as JSON lines (condensed; qemu's command line left out)");
    await shell.kubectl(['logs', pod, '-c', 'compute', '--tail=60'], { condenseJson: true, maxLines: 6, skip: QEMU_ARGV_LINE });
    if (o.runtime === 'image') await showImageContainers(s, out);
    out.step("the guest's own boot output, as KubeVirt shows it: kubectl logs -c guest-console-log");
    await shell.kubectl(['logs', pod, '-c', 'guest-console-log'], { maxLines: 8, skip: /PODVIRT-GUEST-HEARTBEAT|^\s*$/ });
    out.step("a command typed into the guest's serial console through the API server (podvirt-api's console websocket)");
    await shell.console(VMI, 'cat /proc/sys/kernel/random/boot_id', /boot_id\s*\r?\n[0-9a-f-]{36}/);
    out.step("the VMI's Events");
    await shell.kubectl(['get', 'events', '--field-selector', `involvedObject.name=${VMI}`, '--sort-by=.lastTimestamp']);

    out.step("pausing and unpausing through the API server: KubeVirt's subresources, served by podvirt-api");
    await shell.podvirtctl(['pause', 'vmi', VMI]);
    await shell.kubectl(['get', 'vmi', VMI, '-o', 'wide']);
    await shell.podvirtctl(['unpause', 'vmi', VMI]);

    out.step('deleting the VMI: ACPI shutdown of the guest, then the launcher pod ends');
    const deleting = Date.now();
    await shell.kubectl(['delete', 'vmi', VMI, '--wait=false']);
    await watch.waitFor(VMI, 'Succeeded', STOP_TIMEOUT_MS, signal);
    out.step(`Succeeded ${Date.now() - deleting} ms after delete`);
    await shell.kubectl(['get', 'events', '--field-selector', `involvedObject.name=${VMI}`, '--sort-by=.lastTimestamp'], { maxLines: 3 });
  });
}

/** Follows the guest's serial log (in the launcher pod's `private` emptyDir) until the ready marker. */
async function guestReady(stack: PodvirtStack, out: DemoOutput, signal: AbortSignal | undefined): Promise<string> {
  const pod = await launcherPod(stack);
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
async function launcherPod(stack: PodvirtStack): Promise<{ name: string; podUid: string; vmiUid: string }> {
  const pods = await stack.kubeConfig.makeApiClient(CoreV1Api).listNamespacedPod({ namespace: NS, labelSelector: `vm.kubevirt.io/name=${VMI}` });
  const meta = pods.items[0]?.metadata;
  const vmiUid = meta?.labels?.['kubevirt.io/created-by'];
  if (meta?.name === undefined || meta.uid === undefined || vmiUid === undefined) throw new Error(`no launcher pod for ${VMI}`);
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
