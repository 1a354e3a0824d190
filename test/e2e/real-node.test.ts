// The real node (test/testbed/real-node/): the upstream kubelet on containerd 2.x, runc and
// Debian's CNI plugins, joined to the real control plane. A pod from an imported image (nothing
// pulled) gets an address of the testbed's bridge, its log and exec go API server → kubelet over
// the node's own address with the cluster's certificates, crictl lists its sandbox while it runs
// and not after. podvirt installed from manifests/ (install-podvirt.ts) runs as pods: the handler
// in a containerd container with its device plugins registered, podvirt-api's webhooks called by
// kube-apiserver on its pod IP. A VMI runs from podvirt/launcher with the containerDisk init
// containers of podvirt/test-guest and the guest-console-log sidecar; the guest's marker is in
// `kubectl logs -c guest-console-log`; the handler's process killed -9 is restarted by the kubelet
// while the same qemu runs on; podvirtctl in the handler's pod then pauses and unpauses it;
// delete → Succeeded → no sandbox, container, qemu, mount, cgroup or network namespace of its pod.
// Closing the node leaves no process, mount, cgroup, network namespace or iptables chain.
//
// It holds the machine-wide paths of a node (test/testbed/real-node/README.md), so it runs in its
// own pass of scripts/test, the last (PODVIRT_SKIP_REAL_NODE=1 skips that pass, and says so), and
// alone with `PODVIRT_REAL_NODE=1 node scripts/run-tests.mjs e2e/real-node`; without that variable
// the main pass skips it and says why. Missing binaries or images fail it (scripts/setup and
// scripts/images make them).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pino } from 'pino';
import { eventually } from '@podvirt/test-support';
import { kubectlAs } from '../testbed/control-plane/kubectl-as.js';
import { RealControlPlane } from '../testbed/control-plane/real-control-plane.js';
import { repoRoot } from '../testbed/guest/repo-root.js';
import { installPodvirtPods, waitForPodvirtPods } from '../testbed/real-node/install-podvirt.js';
import { realNodeLeftovers, RealNode } from '../testbed/real-node/real-node.js';
import { PodNetwork } from '../testbed/sandbox/pod-network.js';
import { runCommand } from '../testbed/sandbox/run-command.js';

// kubectlAs gives kubectl 120 s: every --timeout here stays below it.
const skip = process.env['PODVIRT_REAL_NODE'] === '1' ? false : 'the real node runs in its own pass of scripts/test (PODVIRT_REAL_NODE=1 runs it)';
const NODE = 'podvirt-real-node';
const VERSION = '0.1.0';

async function kubeChains(): Promise<number> {
  return (await runCommand(['iptables-save'])).stdout.split('\n').filter((l) => /^:KUBE-/.test(l)).length;
}

/** The CNI network namespaces (one per pod sandbox not on the host's network). */
async function cniNetns(): Promise<string[]> {
  return (await readdir('/run/netns').catch(() => [] as string[])).filter((n) => n.startsWith('cni-')).sort();
}

/** qemu processes in a kubepods cgroup (a launcher pod's), as "pid cmdline". */
async function qemuInPods(): Promise<string[]> {
  const found: string[] = [];
  for (const pid of (await readdir('/proc')).filter((n) => /^\d+$/.test(n))) {
    const cmdline = (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).split('\0');
    if (!(cmdline[0] ?? '').includes('qemu-system')) continue;
    if ((await readFile(`/proc/${pid}/cgroup`, 'utf8').catch(() => '')).includes('kubepods')) found.push(`${pid} ${cmdline.join(' ').slice(0, 80)}`);
  }
  return found;
}

/** The cgroup directories of a pod (pod<uid> under kubepods, in every hierarchy). */
async function podCgroups(uid: string): Promise<string[]> {
  const res = await runCommand(['find', '/sys/fs/cgroup', '-type', 'd', '-name', `pod${uid}`]);
  return res.stdout.split('\n').filter((l) => l !== '');
}

/** Every phase a VMI goes through while watched (kubectl get --watch), in order, repeats dropped. */
function watchPhases(kubectl: string, kubeconfig: string, name: string): { seen: string[]; stop: () => Promise<void> } {
  const seen: string[] = [];
  const child = spawn(kubectl, ['--kubeconfig', kubeconfig, 'get', 'vmi', name, '--watch', '-o', 'jsonpath={.status.phase}{"\\n"}'], { stdio: ['ignore', 'pipe', 'ignore'] });
  let rest = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    const lines = (rest + chunk).split('\n');
    rest = lines.pop() ?? '';
    for (const l of lines) if (l !== '' && seen.at(-1) !== l) seen.push(l);
  });
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  return {
    seen,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

describe('the real node: upstream kubelet on containerd', { skip }, () => {
  const log = pino({ level: 'silent' });
  let dir = '';
  let network: PodNetwork | undefined;
  let cp: RealControlPlane | undefined;
  let node: RealNode | undefined;
  let chainsBefore = 0;
  const admin = (args: string[]): Promise<string> => {
    assert.ok(cp !== undefined);
    return kubectlAs(cp, cp.adminKubeconfig, args);
  };

  before(async () => {
    assert.deepEqual(await realNodeLeftovers(), [], 'a real node of an earlier run is still there');
    chainsBefore = await kubeChains();
    dir = await mkdtemp(join(tmpdir(), 'podvirt-real-node-'));
    network = new PodNetwork({ rootDir: join(dir, 'network'), log });
    await network.start();
    cp = await RealControlPlane.start({ dir: join(dir, 'control-plane'), repoRoot: repoRoot(import.meta.url), nodes: [NODE], logger: log, address: network.gateway });
    node = await RealNode.start({
      dir: join(dir, 'node'),
      repoRoot: repoRoot(import.meta.url),
      nodeName: NODE,
      controlPlane: cp,
      network,
      images: [`podvirt/podvirt:${VERSION}`, `podvirt/launcher:${VERSION}`, 'podvirt/test-guest:latest'],
      pauseImage: `podvirt/pause:${VERSION}`,
      logger: log,
    });
  });

  after(async () => {
    await node?.close();
    await cp?.close();
    await network?.close();
    if (dir !== '') await rm(dir, { recursive: true, force: true });
  });

  test('the node registers Ready with its InternalIP on the testbed bridge, on containerd 2', async () => {
    assert.ok(node !== undefined && network !== undefined);
    const got = JSON.parse(await admin(['get', 'node', NODE, '-o', 'json'])) as {
      status: { addresses: Array<{ type: string; address: string }>; nodeInfo: { containerRuntimeVersion: string; kubeletVersion: string } };
    };
    assert.deepEqual(got.status.addresses.find((a) => a.type === 'InternalIP')?.address, network.gateway);
    assert.match(got.status.nodeInfo.containerRuntimeVersion, /^containerd:\/\/v?2\./);
    assert.match(got.status.nodeInfo.kubeletVersion, /^v1\.\d+\.\d+$/);
  });

  test('a pod from an imported image runs: logs and exec through the kubelet, crictl sees it, and nothing after delete', async () => {
    assert.ok(node !== undefined && network !== undefined);
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'hello', namespace: 'default' },
      spec: {
        nodeName: NODE,
        terminationGracePeriodSeconds: 2,
        containers: [{ name: 'main', image: 'podvirt/test-guest:latest', imagePullPolicy: 'Never', command: ['sh', '-c', 'echo REAL-NODE-MARKER; trap "exit 0" TERM; while :; do sleep 1; done'] }],
      },
    };
    const file = join(dir, 'pod.json');
    await writeFile(file, JSON.stringify(pod));
    await admin(['apply', '-f', file]);
    await admin(['wait', '--for=condition=Ready', 'pod/hello', '--timeout=110s']);
    const podIP = (await admin(['get', 'pod', 'hello', '-o', 'jsonpath={.status.podIP}'])).trim();
    assert.equal(podIP.split('.').slice(0, 3).join('.'), network.gateway.split('.').slice(0, 3).join('.'), `pod IP ${podIP} not in the bridge's /24`);
    await eventually(async () => (await admin(['logs', 'hello'])).includes('REAL-NODE-MARKER'), { what: 'the marker in kubectl logs', deadlineMs: 30_000 });
    assert.equal((await admin(['exec', 'hello', '--', 'cat', '/proc/1/cmdline'])).replaceAll('\0', ' ').trim().startsWith('sh -c'), true);
    assert.match(await node.crictl(['pods', '--name', 'hello', '-q']), /^[0-9a-f]{64}$/m);

    await admin(['delete', 'pod', 'hello', '--wait=true', '--timeout=60s']);
    await eventually(async () => (await node?.crictl(['pods', '-q']))?.trim() === '' && (await node?.crictl(['ps', '-a', '-q']))?.trim() === '', { what: 'crictl pods and ps empty', deadlineMs: 60_000 });
  });

  test('podvirt as pods: kubectl apply -f manifests/, the handler in a containerd container, its device plugins registered, podvirt-api\'s webhooks reached on its pod IP', async () => {
    assert.ok(node !== undefined);
    assert.ok(cp !== undefined);
    const root = repoRoot(import.meta.url);
    await installPodvirtPods(cp, cp.adminKubeconfig, root, dir);
    await waitForPodvirtPods(cp, cp.adminKubeconfig);
    // The handler runs inside a containerd container: crictl lists it.
    assert.match(await node.crictl(['ps', '--name', 'podvirt-handler', '-q']), /^[0-9a-f]{64}$/m);

    await eventually(async () => {
      const allocatable = JSON.parse(await admin(['get', 'node', NODE, '-o', 'jsonpath={.status.allocatable}'])) as Record<string, string>;
      // Quantities such as "1k": present and not zero.
      const some = (q: string | undefined): boolean => q !== undefined && !/^0+$/.test(q);
      return some(allocatable['devices.kubevirt.io/kvm']) && some(allocatable['devices.kubevirt.io/tun']);
    }, { what: 'devices.kubevirt.io/kvm and tun allocatable on the node', deadlineMs: 60_000 });

    // failurePolicy Fail: kube-apiserver calls podvirt-api (on an endpoint's pod IP, no kube-proxy)
    // and refuses the unsupported device at apply, by its field. Until podvirt-api has written the
    // caBundle, the call fails on TLS instead: wait for the webhook's own answer.
    let answer = '';
    await eventually(async () => {
      answer = await admin(['apply', '-f', join(root, 'manifests/examples/vmi-unsupported-gpu.yaml')]).then(() => '', (err: unknown) => (err as Error).message);
      if (answer === '') throw new Error('the VMI with a GPU was admitted');
      // Only podvirt-api says this at apply (the CRDs have no such rule; the controller says it in a condition).
      return /"testvm-gpu" is invalid: spec\.domain\.devices\.gpus\[0\]: Unsupported value: podvirt does not support this field/.test(answer) ? true : undefined;
    }, { what: 'podvirt-api refusing the GPU at kubectl apply', deadlineMs: 60_000, stepMs: 1_000, detail: () => `last answer: ${answer}` });
  });

  test('a VMI runs from podvirt/launcher with its containerDisk init containers and console-log sidecar: the marker in kubectl logs, pause/unpause, delete → Succeeded → nothing left', async () => {
    assert.ok(node !== undefined && cp !== undefined);
    const root = repoRoot(import.meta.url);
    const netnsBefore = await cniNetns();
    await admin(['apply', '-f', join(root, 'manifests/examples/vmi-test-guest.yaml')]);
    await admin(['wait', '--for=jsonpath={.status.phase}=Running', 'vmi/testvm', '--timeout=110s']).catch(async (err: unknown) => {
      const events = await admin(['get', 'events', '-o', 'jsonpath={range .items[*]}{.involvedObject.name} {.reason}: {.message}{"\\n"}{end}']).catch((e: unknown) => String(e));
      throw new Error(`${(err as Error).message}\n${events.split('\n').slice(-25).join('\n')}`, { cause: err });
    });
    const pod = JSON.parse(await admin(['get', 'pods', '-l', 'kubevirt.io/created-by', '-o', 'json'])) as {
      items: Array<{ metadata: { name: string; uid: string }; spec: { initContainers?: Array<{ name: string; image: string; restartPolicy?: string }>; containers: Array<{ name: string; image: string }> } }>;
    };
    assert.equal(pod.items.length, 1);
    const launcher = pod.items[0]!;
    const images = (cs: Array<{ image: string }> | undefined): string[] => [...new Set((cs ?? []).map((c) => c.image))].sort();
    assert.deepEqual(images(launcher.spec.containers), [`podvirt/launcher:${VERSION}`]);
    // The containerDisk and kernel-boot init containers, and the guest-console-log sidecar (a restartable init container).
    assert.deepEqual(images(launcher.spec.initContainers), [`podvirt/launcher:${VERSION}`, 'podvirt/test-guest:latest']);
    const sidecar = launcher.spec.initContainers?.find((c) => c.name === 'guest-console-log');
    assert.equal(sidecar?.restartPolicy, 'Always', 'the guest-console-log sidecar');
    assert.match(await node.crictl(['pods', '--name', launcher.metadata.name, '-q']), /^[0-9a-f]{64}$/m);
    assert.ok((await qemuInPods()).length > 0, 'qemu runs in a kubepods cgroup');
    await eventually(async () => (await admin(['logs', launcher.metadata.name, '-c', 'guest-console-log']).catch(() => '')).includes('PODVIRT-GUEST-READY'), { what: 'the guest marker in kubectl logs -c guest-console-log', deadlineMs: 120_000, stepMs: 1_000 });

    // kill -9 the handler's process: the kubelet restarts its container, qemu runs on (same pid),
    // the VMI stays Running; the restarted handler then pauses and unpauses it.
    const handler = (await admin(['-n', 'podvirt', 'get', 'pods', '-l', 'app.kubernetes.io/name=podvirt-handler', '-o', 'jsonpath={.items[0].metadata.name}'])).trim();
    const handlerStatus = async (): Promise<{ restartCount: number; ready: boolean }> =>
      (JSON.parse(await admin(['-n', 'podvirt', 'get', 'pod', handler, '-o', 'json'])) as { status: { containerStatuses: Array<{ restartCount: number; ready: boolean }> } }).status.containerStatuses[0]!;
    const qemuBefore = await qemuInPods();
    const restartsBefore = (await handlerStatus()).restartCount;
    const container = (await node.crictl(['ps', '--name', 'podvirt-handler', '-q'])).trim();
    const handlerPid = (JSON.parse(await node.crictl(['inspect', container])) as { info: { pid: number } }).info.pid;
    assert.ok(handlerPid > 1, `the handler's pid from crictl inspect: ${handlerPid}`);
    process.kill(handlerPid, 'SIGKILL');
    await eventually(async () => {
      const status = await handlerStatus();
      return status.restartCount > restartsBefore && status.ready;
    }, { what: 'the handler container restarted by the kubelet and Ready', deadlineMs: 110_000, stepMs: 1_000 });
    assert.deepEqual(await qemuInPods(), qemuBefore, 'the same qemu runs');
    assert.equal((await admin(['get', 'vmi', 'testvm', '-o', 'jsonpath={.status.phase}'])).trim(), 'Running');

    // pause/unpause with podvirtctl in the handler's pod (its node API socket is there).
    const paused = async (): Promise<string> => (await admin(['get', 'vmi', 'testvm', '-o', 'jsonpath={.status.conditions[?(@.type=="Paused")].reason}'])).trim();
    assert.match(await admin(['-n', 'podvirt', 'exec', handler, '--', 'podvirtctl', 'pause', 'vmi', 'testvm', '-n', 'default']), /paused/);
    await eventually(async () => (await paused()) === 'PausedByUser', { what: 'the Paused condition', deadlineMs: 30_000, stepMs: 500 });
    assert.match(await admin(['-n', 'podvirt', 'exec', handler, '--', 'podvirtctl', 'unpause', 'vmi', 'testvm', '-n', 'default']), /unpaused/);
    await eventually(async () => (await paused()) === '', { what: 'the Paused condition gone', deadlineMs: 30_000, stepMs: 500 });

    const phases = watchPhases(cp.binaries.kubectl, cp.adminKubeconfig, 'testvm');
    try {
      await admin(['delete', 'vmi', 'testvm', '--wait=false']);
      await eventually(async () => (await admin(['get', 'vmi', 'testvm', '--ignore-not-found', '-o', 'name'])).trim() === '', { what: 'the VMI gone', deadlineMs: 120_000, stepMs: 500 });
    } finally {
      await phases.stop();
    }
    assert.equal(phases.seen.at(-1), 'Succeeded', `phases seen: ${phases.seen.join(' → ')}`);
    await eventually(async () => (await admin(['get', 'pods', '-l', 'kubevirt.io/created-by', '-o', 'name'])).trim() === '', { what: 'the launcher pod gone', deadlineMs: 120_000 });
    // Nothing of it on the node: no sandbox or container, no qemu, no mount, cgroup or network namespace.
    await eventually(async () => (await node?.crictl(['pods', '--name', launcher.metadata.name, '-q']))?.trim() === '', { what: `crictl pods without ${launcher.metadata.name}`, deadlineMs: 60_000 });
    const containers = JSON.parse(await node.crictl(['ps', '-a', '-o', 'json'])) as { containers: Array<{ labels: Record<string, string> }> };
    assert.deepEqual(containers.containers.filter((c) => c.labels['io.kubernetes.pod.name'] === launcher.metadata.name), []);
    assert.deepEqual(await qemuInPods(), []);
    assert.deepEqual((await readFile('/proc/self/mountinfo', 'utf8')).split('\n').filter((l) => l.includes(launcher.metadata.uid)), []);
    assert.deepEqual(await podCgroups(launcher.metadata.uid), []);
    assert.deepEqual(await cniNetns(), netnsBefore);
  });

  test('closing the node leaves nothing of it', async () => {
    assert.ok(node !== undefined);
    await node.close();
    assert.deepEqual(await realNodeLeftovers(), []);
    assert.equal(await kubeChains(), chainsBefore);
  });
});
