// The real node (test/testbed/real-node/): the upstream kubelet on containerd 2.x, runc and
// Debian's CNI plugins, joined to the real control plane. A pod from an imported image (nothing
// pulled) gets an address of the testbed's bridge, its log and exec go API server → kubelet over
// the node's own address with the cluster's certificates, crictl lists its sandbox while it runs
// and not after. podvirt installed from manifests/ (install-podvirt.ts) runs as pods: the handler
// in a containerd container with its device plugins registered, podvirt-api's webhooks called by
// kube-apiserver on its pod IP. In a namespace enforcing the baseline Pod Security Standard, a
// masquerade VMI runs from podvirt/launcher with the containerDisk init containers of
// podvirt/test-guest and the guest-console-log sidecar; the guest's marker is in `kubectl logs -c
// guest-console-log`, `kubectl exec` reaches the compute container, the guest answers on the pod
// IP, `podvirtctl console` through kube-apiserver (podvirt-api's subresource, then the handler's
// node API over the mutual TLS podvirt-api made) reads its boot_id; the handler's process killed
// -9 is restarted by the kubelet while the same qemu runs on; podvirtctl through kube-apiserver
// then pauses and unpauses it; delete → Succeeded → no running sandbox or container, qemu, mount,
// cgroup or network namespace of its pod. Then the faults of real-node-faults.ts on the same
// stack. At the end, crictl lists no sandbox or container of a pod that went (the kubelet's
// garbage collection, once a minute: checked once for every pod), and closing the node leaves no
// process, mount, cgroup, network namespace, iptables chain or node API socket.
//
// It holds the machine-wide paths of a node (test/testbed/real-node/README.md), so it runs in its
// own pass of scripts/test, the last (PODVIRT_SKIP_REAL_NODE=1 skips that pass, and says so), and
// alone with `PODVIRT_REAL_NODE=1 node scripts/run-tests.mjs e2e/real-node`; without that
// variable the main pass skips it and says why (real-node-stack.ts). Missing binaries or images
// fail it (scripts/setup and scripts/images make them).
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { eventually } from '@podvirt/test-support';
import { DemoShell } from '../testbed/demo/demo-shell.js';
import { readTcp } from '../testbed/index.js';
import { NODE_API_SOCKET, realNodeLeftovers } from '../testbed/real-node/real-node.js';
import { consoleLogTail, UNPRIVILEGED_TAIL } from './console-log-process.js';
import { realNodeFaultTests } from './real-node-faults.js';
import { cniNetns, kubeChains, NODE, qemuInPods, REAL_NODE_SKIP, RealNodeStack, ROOT, VERSION, type LauncherPod } from './real-node-stack.js';

const VMI = 'testvm-net';
/** The test guest prints its boot_id on its console as `boot_id=…`, and `cat` of it prints the bare UUID. */
const BOOT_ID = /boot_id=(\S+)/;
const CONSOLE_BOOT_ID = /([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})/;

describe('the real node: upstream kubelet on containerd', { skip: REAL_NODE_SKIP }, () => {
  let stack: RealNodeStack | undefined;
  let chainsBefore = 0;
  const s = (): RealNodeStack => stack ?? assert.fail('the stack did not start');
  const admin = (args: string[]): Promise<string> => s().admin(args);

  before(async () => {
    chainsBefore = await kubeChains();
    stack = await RealNodeStack.start(ROOT);
  });

  after(async () => {
    await stack?.close();
  });

  test('the node registers Ready with its InternalIP on the testbed bridge, on containerd 2', async () => {
    const { network } = s();
    const got = JSON.parse(await admin(['get', 'node', NODE, '-o', 'json'])) as {
      status: { addresses: Array<{ type: string; address: string }>; nodeInfo: { containerRuntimeVersion: string; kubeletVersion: string } };
    };
    assert.deepEqual(got.status.addresses.find((a) => a.type === 'InternalIP')?.address, network.gateway);
    assert.match(got.status.nodeInfo.containerRuntimeVersion, /^containerd:\/\/v?2\./);
    assert.match(got.status.nodeInfo.kubeletVersion, /^v1\.\d+\.\d+$/);
  });

  test('a pod from an imported image runs: logs and exec through the kubelet, crictl sees it, and nothing runs after delete', async () => {
    const { node, network, dir } = s();
    const netnsBefore = await cniNetns();
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
    const uid = (await admin(['get', 'pod', 'hello', '-o', 'jsonpath={.metadata.uid}'])).trim();

    await admin(['delete', 'pod', 'hello', '--wait=true', '--timeout=60s']);
    // Its sandbox and container are removed by the kubelet's garbage collection: the last test checks that.
    await s().nothingLeftOf({ metadata: { name: 'hello', uid } }, netnsBefore);
  });

  test('podvirt as pods: kubectl apply -f manifests/, the handler in a containerd container, its device plugins registered, podvirt-api\'s webhooks reached on its pod IP', async () => {
    const { node, root } = s();
    await s().install();
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

  test('a VMI runs from podvirt/launcher in a namespace enforcing the baseline Pod Security Standard: the marker in kubectl logs, exec, the guest on its pod IP, console, pause/unpause, delete → Succeeded → nothing left', async () => {
    const { node, root } = s();
    const netnsBefore = await cniNetns();
    // kube-apiserver runs Pod Security Admission by default: with the namespace enforcing
    // baseline it refuses a privileged pod (dry run), and admits the launcher pod below.
    await admin(['label', 'namespace', 'default', 'pod-security.kubernetes.io/enforce=baseline', '--overwrite']);
    const privileged = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'privileged', namespace: 'default' }, spec: { containers: [{ name: 'c', image: 'podvirt/test-guest:latest', securityContext: { privileged: true } }] } };
    await writeFile(join(s().dir, 'privileged.json'), JSON.stringify(privileged));
    const refused = await admin(['apply', '--dry-run=server', '-f', join(s().dir, 'privileged.json')]).then(() => '', (err: unknown) => (err as Error).message);
    assert.match(refused, /violates PodSecurity "baseline:latest": privileged/);
    // The masquerade example: the test guest with a pod network interface forwarding TCP 8080.
    await admin(['apply', '-f', join(root, 'manifests/examples/vmi-masquerade.yaml')]);
    await s().waitForPhase(VMI, 'Running');
    const vmiUid = (await s().vmi(VMI))?.metadata.uid ?? assert.fail(`${VMI} vanished`);
    const pods = await s().launcherPods(vmiUid);
    assert.equal(pods.length, 1);
    const launcher: LauncherPod = pods[0]!;
    const images = (cs: ReadonlyArray<{ image: string }> | undefined): string[] => [...new Set((cs ?? []).map((c) => c.image))].sort();
    assert.deepEqual(images(launcher.spec.containers), [`podvirt/launcher:${VERSION}`]);
    // The containerDisk and kernel-boot init containers, and the guest-console-log sidecar (a restartable init container).
    assert.deepEqual(images(launcher.spec.initContainers), [`podvirt/launcher:${VERSION}`, 'podvirt/test-guest:latest']);
    const sidecar = launcher.spec.initContainers?.find((c) => c.name === 'guest-console-log');
    assert.equal(sidecar?.restartPolicy, 'Always', 'the guest-console-log sidecar');
    assert.match(await node.crictl(['pods', '--name', launcher.metadata.name, '-q']), /^[0-9a-f]{64}$/m);
    assert.ok((await qemuInPods()).length > 0, 'qemu runs in a kubepods cgroup');
    const consoleLog = await eventually(async () => {
      const logs = await admin(['logs', launcher.metadata.name, '-c', 'guest-console-log']).catch(() => '');
      return logs.includes('PODVIRT-GUEST-READY') && BOOT_ID.test(logs) ? logs : undefined;
    }, { what: 'the guest marker and boot_id in kubectl logs -c guest-console-log', deadlineMs: 120_000, stepMs: 1_000 });
    const bootId = BOOT_ID.exec(consoleLog)?.[1] ?? '';
    // containerd ran the sidecar as rendered: uid 107, no capability, no_new_privs.
    assert.deepEqual(await consoleLogTail(vmiUid), UNPRIVILEGED_TAIL, 'the guest-console-log process runs, unprivileged');

    // kubectl exec into the compute container (API server → kubelet → containerd).
    assert.equal((await admin(['exec', launcher.metadata.name, '-c', 'compute', '--', 'cat', '/etc/hostname'])).trim(), launcher.metadata.name);
    // The masquerade guest answers on the pod IP, which the VMI reports.
    const podIP = (await admin(['get', 'pod', launcher.metadata.name, '-o', 'jsonpath={.status.podIP}'])).trim();
    await eventually(async () => (await s().vmi(VMI))?.status?.interfaces?.[0]?.ipAddress === podIP, { what: `the VMI's interface at the pod IP ${podIP}`, deadlineMs: 60_000, stepMs: 1_000 });
    assert.equal((await eventually(() => readTcp(podIP, 8080).catch(() => undefined), { what: `boot_id on ${podIP}:8080`, deadlineMs: 60_000, stepMs: 1_000 })).trim(), bootId);
    // podvirtctl console through the API server: kube-apiserver's aggregation → podvirt-api's
    // console subresource → the handler's node API over mutual TLS on its pod IP, with the
    // certificates podvirt-api made (Secrets podvirt-node-api-ca, podvirt-handler-certs) and the
    // kubelet mounted into the handler.
    const shell = new DemoShell({ out: { step: () => undefined, detail: () => undefined }, env: process.env, node: process.execPath, repoRoot: root, kubeconfig: s().cp.adminKubeconfig, nodeApiSocket: NODE_API_SOCKET });
    assert.equal(CONSOLE_BOOT_ID.exec(await shell.console(VMI, 'cat /proc/sys/kernel/random/boot_id', CONSOLE_BOOT_ID))?.[1], bootId);
    const handlerSecret = JSON.parse(await admin(['-n', 'podvirt', 'get', 'secret', 'podvirt-handler-certs', '-o', 'json'])) as { data: Record<string, string> };
    assert.deepEqual(Object.keys(handlerSecret.data).sort(), ['ca.crt', 'tls.crt', 'tls.key'], 'no CA key in what the handlers mount');

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
    assert.equal((await admin(['get', 'vmi', VMI, '-o', 'jsonpath={.status.phase}'])).trim(), 'Running');

    // pause/unpause through the API server (the pause and unpause subresources), reaching the
    // restarted handler's TLS port.
    const paused = async (): Promise<string> => (await admin(['get', 'vmi', VMI, '-o', 'jsonpath={.status.conditions[?(@.type=="Paused")].reason}'])).trim();
    assert.match(await shell.podvirtctl(['pause', 'vmi', VMI, '-n', 'default']), /paused/);
    await eventually(async () => (await paused()) === 'PausedByUser', { what: 'the Paused condition', deadlineMs: 30_000, stepMs: 500 });
    assert.match(await shell.podvirtctl(['unpause', 'vmi', VMI, '-n', 'default']), /unpaused/);
    await eventually(async () => (await paused()) === '', { what: 'the Paused condition gone', deadlineMs: 30_000, stepMs: 500 });

    const phases = s().watch(VMI, '{.status.phase}');
    try {
      // Nothing of it on the node: no sandbox or container, no qemu, no mount, cgroup or network namespace.
      await s().deleteAndCheckGone(VMI, launcher, netnsBefore);
    } finally {
      await phases.stop();
    }
    assert.equal(phases.seen.at(-1), 'Succeeded', `phases seen: ${phases.seen.join(' → ')}`);
  });

  realNodeFaultTests(s);

  test('the kubelet removed the sandbox and containers of every pod that went; closing the node leaves nothing of it', async () => {
    await s().removedByKubelet();
    await s().node.close();
    assert.deepEqual(await realNodeLeftovers(), []);
    assert.equal(await kubeChains(), chainsBefore);
  });
});
