// The stack of the real-node e2e files: the testbed's pod network, the real control plane on its
// gateway and the real node (test/testbed/real-node/) joined to it, plus what those files read
// on the node: the CNI network namespaces, the qemu processes of launcher pods, a pod's cgroups
// and mounts, the phases a watched VMI goes through. They hold the machine-wide paths of a node,
// so they run only with PODVIRT_REAL_NODE=1 (scripts/test's real-node pass).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { parse } from 'yaml';
import type { VirtualMachineInstance } from '@podvirt/api';
import { eventually } from '@podvirt/test-support';
import { kubectlAs } from '../testbed/control-plane/kubectl-as.js';
import { RealControlPlane } from '../testbed/control-plane/real-control-plane.js';
import { repoRoot } from '../testbed/guest/repo-root.js';
import { installPodvirtPods, waitForPodvirtPods } from '../testbed/real-node/install-podvirt.js';
import { realNodeLeftovers, RealNode } from '../testbed/real-node/real-node.js';
import { PodNetwork } from '../testbed/sandbox/pod-network.js';
import { runCommand } from '../testbed/sandbox/run-command.js';

export const REAL_NODE_SKIP: string | false = process.env['PODVIRT_REAL_NODE'] === '1' ? false : 'the real node runs in its own pass of scripts/test (PODVIRT_REAL_NODE=1 runs it)';
export const NODE = 'podvirt-real-node';
export const VERSION = '0.1.0';

export async function kubeChains(): Promise<number> {
  return (await runCommand(['iptables-save'])).stdout.split('\n').filter((l) => /^:KUBE-/.test(l)).length;
}

/** The CNI network namespaces (one per pod sandbox not on the host's network). */
export async function cniNetns(): Promise<string[]> {
  return (await readdir('/run/netns').catch(() => [] as string[])).filter((n) => n.startsWith('cni-')).sort();
}

/** qemu processes in a kubepods cgroup (a launcher pod's; of the pod with `uid` when given), as "pid cmdline". */
export async function qemuInPods(uid?: string): Promise<string[]> {
  const found: string[] = [];
  for (const pid of (await readdir('/proc')).filter((n) => /^\d+$/.test(n))) {
    const cmdline = (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).split('\0');
    if (!(cmdline[0] ?? '').includes('qemu-system')) continue;
    const cgroup = await readFile(`/proc/${pid}/cgroup`, 'utf8').catch(() => '');
    if (cgroup.includes(uid === undefined ? 'kubepods' : `pod${uid}`)) found.push(`${pid} ${cmdline.join(' ').slice(0, 80)}`);
  }
  return found;
}

/** The cgroup directories of a pod (pod<uid> under kubepods, in every hierarchy). */
export async function podCgroups(uid: string): Promise<string[]> {
  const res = await runCommand(['find', '/sys/fs/cgroup', '-type', 'd', '-name', `pod${uid}`]);
  return res.stdout.split('\n').filter((l) => l !== '');
}

/** The mounts of this mount namespace that name the pod's UID. */
export async function podMounts(uid: string): Promise<string[]> {
  return (await readFile('/proc/self/mountinfo', 'utf8')).split('\n').filter((l) => l.includes(uid));
}

/**
 * Every value a VMI's field (a kubectl jsonpath such as `{.status.phase}`) takes while watched
 * (kubectl get --watch), in order, repeats dropped: a state held for one write shows too.
 */
export function watchVmi(kubectl: string, kubeconfig: string, name: string, jsonpath: string): { seen: string[]; stop: () => Promise<void> } {
  const seen: string[] = [];
  const child = spawn(kubectl, ['--kubeconfig', kubeconfig, 'get', 'vmi', name, '--watch', '-o', `jsonpath=${jsonpath}{"\\n"}`], { stdio: ['ignore', 'pipe', 'ignore'] });
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

export interface LauncherPod {
  readonly metadata: { readonly name: string; readonly uid: string };
  readonly spec: {
    readonly initContainers?: ReadonlyArray<{ readonly name: string; readonly image: string; readonly restartPolicy?: string }>;
    readonly containers: ReadonlyArray<{ readonly name: string; readonly image: string }>;
  };
  readonly status?: {
    readonly phase?: string;
    readonly containerStatuses?: ReadonlyArray<{ readonly name: string; readonly restartCount: number; readonly ready: boolean }>;
  };
}

/**
 * The network, the real control plane on its gateway and the real node, started in a test file's
 * `before` (`start`) and closed in its `after`; `install` puts podvirt on it from manifests/.
 */
export class RealNodeStack {
  readonly dir: string;
  readonly root: string;
  readonly network: PodNetwork;
  readonly cp: RealControlPlane;
  readonly node: RealNode;

  private constructor(dir: string, root: string, network: PodNetwork, cp: RealControlPlane, node: RealNode) {
    this.dir = dir;
    this.root = root;
    this.network = network;
    this.cp = cp;
    this.node = node;
  }

  /** Refuses when a real node of an earlier run is still there; closes what it started when a step fails. */
  static async start(root: string): Promise<RealNodeStack> {
    assert.deepEqual(await realNodeLeftovers(), [], 'a real node of an earlier run is still there');
    const log = pino({ level: 'silent' });
    const dir = await mkdtemp(join(tmpdir(), 'podvirt-real-node-'));
    const network = new PodNetwork({ rootDir: join(dir, 'network'), log });
    let cp: RealControlPlane | undefined;
    try {
      await network.start();
      cp = await RealControlPlane.start({ dir: join(dir, 'control-plane'), repoRoot: root, nodes: [NODE], logger: log, address: network.gateway });
      const node = await RealNode.start({
        dir: join(dir, 'node'),
        repoRoot: root,
        nodeName: NODE,
        controlPlane: cp,
        network,
        images: [`podvirt/podvirt:${VERSION}`, `podvirt/launcher:${VERSION}`, 'podvirt/test-guest:latest'],
        pauseImage: `podvirt/pause:${VERSION}`,
        logger: log,
      });
      return new RealNodeStack(dir, root, network, cp, node);
    } catch (err) {
      await cp?.close();
      await network.close();
      await rm(dir, { recursive: true, force: true });
      throw err;
    }
  }

  /** watchVmi with this control plane's kubectl and admin (stop() it). */
  watch(name: string, jsonpath: string): { seen: string[]; stop: () => Promise<void> } {
    return watchVmi(this.cp.binaries.kubectl, this.cp.adminKubeconfig, name, jsonpath);
  }

  /** kubectl as the cluster's admin. */
  admin(args: readonly string[]): Promise<string> {
    return kubectlAs(this.cp, this.cp.adminKubeconfig, args);
  }

  /** podvirt from manifests/ (install-podvirt.ts), its workloads rolled out. */
  async install(): Promise<void> {
    await installPodvirtPods(this.cp, this.cp.adminKubeconfig, this.root, this.dir);
    await waitForPodvirtPods(this.cp, this.cp.adminKubeconfig);
  }

  /** manifests/examples/vmi-test-guest.yaml under another name, `change` applied, then kubectl apply. */
  async applyTestGuest(name: string, change: (vmi: VirtualMachineInstance) => void = () => undefined): Promise<void> {
    const vmi = parse(await readFile(join(this.root, 'manifests/examples/vmi-test-guest.yaml'), 'utf8')) as VirtualMachineInstance;
    vmi.metadata = { ...vmi.metadata, name };
    change(vmi);
    const file = join(this.dir, `${name}.json`);
    await writeFile(file, JSON.stringify(vmi));
    await this.admin(['apply', '-f', file]);
  }

  /** Waits for the VMI's phase; a timeout fails with the namespace's last Events. */
  async waitForPhase(name: string, phase: string, timeoutSeconds = 110): Promise<void> {
    await this.admin(['wait', `--for=jsonpath={.status.phase}=${phase}`, `vmi/${name}`, `--timeout=${timeoutSeconds}s`]).catch(async (err: unknown) => {
      const events = await this.admin(['get', 'events', '-o', 'jsonpath={range .items[*]}{.involvedObject.name} {.reason}: {.message}{"\\n"}{end}']).catch((e: unknown) => String(e));
      throw new Error(`${(err as Error).message}\n${events.split('\n').slice(-25).join('\n')}`, { cause: err });
    });
  }

  /** The VMI as JSON (undefined when gone). */
  async vmi(name: string): Promise<VirtualMachineInstance | undefined> {
    const out = await this.admin(['get', 'vmi', name, '--ignore-not-found', '-o', 'json']);
    return out.trim() === '' ? undefined : (JSON.parse(out) as VirtualMachineInstance);
  }

  /** The launcher pods of the VMI (label kubevirt.io/created-by=<its uid>). */
  async launcherPods(vmiUid: string): Promise<LauncherPod[]> {
    return (JSON.parse(await this.admin(['get', 'pods', '-l', `kubevirt.io/created-by=${vmiUid}`, '-o', 'json'])) as { items: LauncherPod[] }).items;
  }

  /** Warning Events about the object, as "reason: message". */
  async warnings(name: string): Promise<string[]> {
    const out = await this.admin(['get', 'events', '--field-selector', `involvedObject.name=${name},type=Warning`, '-o', 'jsonpath={range .items[*]}{.reason}: {.message}{"\\n"}{end}']);
    return out.split('\n').filter((l) => l !== '');
  }

  /**
   * Deletes the VMI (when still there), waits for it and its launcher pod to go, then checks that
   * nothing of the pod stays on the node (nothingLeftOf).
   */
  async deleteAndCheckGone(name: string, pod: LauncherPod, netnsBefore: readonly string[]): Promise<void> {
    await this.deleteVmi(name, pod);
    await this.nothingLeftOf(pod, netnsBefore);
  }

  /** Deletes the VMI (when still there) and waits for it, its launcher pod (in the API) and the pod's qemu to go. */
  async deleteVmi(name: string, pod: LauncherPod): Promise<void> {
    await this.admin(['delete', 'vmi', name, '--ignore-not-found', '--wait=false']);
    await eventually(async () => (await this.admin(['get', 'vmi', name, '--ignore-not-found', '-o', 'name'])).trim() === '', { what: `VMI ${name} gone`, deadlineMs: 120_000, stepMs: 500 });
    await eventually(async () => (await this.admin(['get', 'pod', pod.metadata.name, '--ignore-not-found', '-o', 'name'])).trim() === '', { what: `launcher pod ${pod.metadata.name} gone`, deadlineMs: 120_000 });
    assert.deepEqual(await qemuInPods(pod.metadata.uid), []);
  }

  /**
   * Nothing of a deleted launcher pod on the node: no sandbox or container, no qemu, mount,
   * cgroup, or network namespace beyond `netnsBefore`. The kubelet removes a deleted pod's
   * sandbox and exited containers in its garbage collection, once a minute: several pods are
   * best checked together, after one wait.
   */
  async nothingLeftOf(pod: LauncherPod, netnsBefore: readonly string[]): Promise<void> {
    const { name, uid } = pod.metadata;
    await eventually(async () => (await this.node.crictl(['pods', '--name', name, '-q'])).trim() === '', { what: `crictl pods without ${name} (the kubelet's garbage collection)`, deadlineMs: 120_000, stepMs: 1_000 });
    const containers = JSON.parse(await this.node.crictl(['ps', '-a', '-o', 'json'])) as { containers: Array<{ labels: Record<string, string> }> };
    assert.deepEqual(containers.containers.filter((c) => c.labels['io.kubernetes.pod.name'] === name), []);
    assert.deepEqual(await qemuInPods(uid), []);
    let left: string[] = [];
    await eventually(async () => {
      left = [...(await podMounts(uid)), ...(await podCgroups(uid))];
      return left.length === 0;
    }, { what: `no mount or cgroup of pod ${uid}`, deadlineMs: 30_000, detail: () => left.join('\n') });
    assert.deepEqual(await cniNetns(), netnsBefore);
  }

  async close(): Promise<void> {
    try {
      await this.node.close();
    } finally {
      await this.cp.close();
      await this.network.close();
      await rm(this.dir, { recursive: true, force: true });
    }
  }
}

/** The repository root of the test files. */
export const ROOT = repoRoot(import.meta.url);
