// The stack of the real-node e2e file: the real-node cluster (test/testbed/real-node/: the
// testbed's pod network, the real control plane on its gateway, the real node), plus what it reads
// on the node: the CNI network namespaces, the qemu processes of launcher pods, a pod's cgroups
// and mounts, the phases a watched VMI goes through. They hold the machine-wide paths of a node,
// so they run only with PODVIRT_REAL_NODE=1 (scripts/test's real-node pass).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'yaml';
import type { VirtualMachineInstance } from '@podvirt/api';
import { eventually } from '@podvirt/test-support';
import { repoRoot } from '../testbed/guest/repo-root.js';
import { PODVIRT_IMAGE_TAG, REAL_NODE_NAME, RealNodeCluster } from '../testbed/real-node/real-node-cluster.js';
import { realNodeLeftovers } from '../testbed/real-node/real-node.js';
import { runCommand } from '../testbed/sandbox/run-command.js';

export const REAL_NODE_SKIP: string | false = process.env['PODVIRT_REAL_NODE'] === '1' ? false : 'the real node runs in its own pass of scripts/test (PODVIRT_REAL_NODE=1 runs it)';
export const NODE = REAL_NODE_NAME;
export const VERSION = PODVIRT_IMAGE_TAG;

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
 * The real-node cluster (test/testbed/real-node/real-node-cluster.ts), started in a test file's
 * `before` (`start`) and closed in its `after`, with what the e2e files ask of it.
 */
export class RealNodeStack extends RealNodeCluster {
  /** Refuses when a real node of an earlier run is still there; closes what it started when a step fails. */
  static override async start(root: string): Promise<RealNodeStack> {
    assert.deepEqual(await realNodeLeftovers(), [], 'a real node of an earlier run is still there');
    return new RealNodeStack(await RealNodeCluster.start(root));
  }

  /** watchVmi with this control plane's kubectl and admin (stop() it). */
  watch(name: string, jsonpath: string): { seen: string[]; stop: () => Promise<void> } {
    return watchVmi(this.cp.binaries.kubectl, this.cp.adminKubeconfig, name, jsonpath);
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
   * Nothing of a deleted pod runs or stays mounted on the node: its sandbox stopped and no
   * container of it running (stoppedOnNode), no qemu, mount, cgroup, or network namespace beyond
   * `netnsBefore`. The sandbox and the exited containers themselves the kubelet removes later, in
   * its garbage collection (removedByKubelet).
   */
  async nothingLeftOf(pod: { readonly metadata: { readonly name: string; readonly uid: string } }, netnsBefore: readonly string[]): Promise<void> {
    const { name, uid } = pod.metadata;
    await this.stoppedOnNode(name);
    assert.deepEqual(await qemuInPods(uid), []);
    let left: string[] = [];
    await eventually(async () => {
      left = [...(await podMounts(uid)), ...(await podCgroups(uid))];
      return left.length === 0;
    }, { what: `no mount or cgroup of pod ${uid}`, deadlineMs: 30_000, detail: () => left.join('\n') });
    let netns: string[] = [];
    await eventually(async () => {
      netns = await cniNetns();
      return netns.join(' ') === netnsBefore.join(' ');
    }, { what: `the network namespaces of before pod ${name} (CNI DEL when its sandbox stopped)`, deadlineMs: 30_000, detail: () => `before: ${netnsBefore.join(' ')}; now: ${netns.join(' ')}` });
  }

  /** The pod's sandbox no longer ready and no container of it running (the kubelet stopped them). */
  async stoppedOnNode(name: string): Promise<void> {
    await eventually(async () => (await this.node.crictl(['pods', '--name', name, '--state', 'ready', '-q'])).trim() === ''
      && (await this.node.crictl(['ps', '--state', 'running', '--label', `io.kubernetes.pod.name=${name}`, '-q'])).trim() === '',
    { what: `no ready sandbox or running container of ${name} (crictl)`, deadlineMs: 60_000, stepMs: 500 });
  }

  /**
   * The kubelet removed the sandbox and the containers of every pod that went: each one crictl
   * lists belongs to a pod the API server has. The kubelet does it in its garbage collection, once
   * a minute (a period it does not let one set), so a test file checks it once, at its end, for
   * every pod it deleted, rather than waiting for a collection after each.
   */
  async removedByKubelet(): Promise<void> {
    let stale: string[] = [];
    await eventually(async () => {
      const live = new Set((await this.admin(['get', 'pods', '-A', '-o', 'jsonpath={.items[*].metadata.uid}'])).split(' ').filter((u) => u !== ''));
      const pods = (JSON.parse(await this.node.crictl(['pods', '-o', 'json'])) as { items: Array<{ metadata: { name: string; uid: string } }> }).items;
      const containers = (JSON.parse(await this.node.crictl(['ps', '-a', '-o', 'json'])) as { containers: Array<{ metadata: { name: string }; labels: Record<string, string> }> }).containers;
      stale = [
        ...pods.filter((p) => !live.has(p.metadata.uid)).map((p) => `sandbox of ${p.metadata.name}`),
        ...containers.filter((c) => !live.has(c.labels['io.kubernetes.pod.uid'] ?? '')).map((c) => `container ${c.metadata.name} of ${c.labels['io.kubernetes.pod.name'] ?? '?'}`),
      ];
      return stale.length === 0;
    }, { what: 'crictl listing only sandboxes and containers of pods the API server has (the kubelet\'s garbage collection)', deadlineMs: 120_000, stepMs: 1_000, detail: () => stale.join('\n') });
  }
}

/** The repository root of the test files. */
export const ROOT = repoRoot(import.meta.url);
