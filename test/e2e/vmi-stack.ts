// The VMI end-to-end suites' shared pieces: a podvirt stack per suite (testbed + controller +
// handler processes), VMI manifests that boot the test guest from its image, and readers for
// what a user sees: kubectl output, VMI status, Events, the guest's serial log in its pod.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { readdir, readFile } from 'node:fs/promises';
import { after, before } from 'node:test';
import { CoreV1Api, CustomObjectsApi, ListWatch, Watch, type CoreV1Event, type KubernetesListObject, type KubernetesObject, type V1Pod } from '@kubernetes/client-node';
import type { VirtualMachineInstance } from '@podvirt/api';
import { eventually } from '@podvirt/test-support';

/** A VMI as the watch decodes it (client-node's object type; timestamps differ in type only). */
type WatchedVmi = KubernetesObject & { status?: unknown };
import { stringify } from 'yaml';
import { guestImage, guestSerialLog, stackLeftovers, startPodvirtStack, waitForConsoleText, type GuestImage, type PodvirtStack, type PodvirtStackOptions } from '../testbed/index.js';
import { kubectl, type KubectlResult } from './testbed-helpers.js';

const runFile = promisify(execFile);
const PODVIRTCTL = fileURLToPath(new URL('../../../packages/ctl/bin/podvirtctl.js', import.meta.url));

export const NS = 'default';

/** Host pid of the launcher process of a VMI (`podvirt-launcher … --uid <uid>`). */
export async function launcherPid(uid: string): Promise<number | undefined> {
  for (const pid of await readdir('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    const argv = (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).split('\0');
    if (!argv.some((a) => a.endsWith('podvirt-launcher.js'))) continue;
    const at = argv.indexOf('--uid');
    if (at >= 0 && argv[at + 1] === uid) return Number(pid);
  }
  return undefined;
}
const VMI_API = { group: 'kubevirt.io', version: 'v1', namespace: NS, plural: 'virtualmachineinstances' };
/** TCG boots share two cores with everything else: generous, never a timing assertion. */
export const BOOT_TIMEOUT_MS = 120_000;

export interface GuestVmiOptions {
  readonly gracePeriodSeconds?: number;
  /** Appended to the guest's kernel command line (`podvirt.acpi=ignore podvirt.agent=off`). */
  readonly extraKernelArgs?: string;
  /** Extra keys merged into spec.domain.devices (e.g. an unsupported `gpus`). */
  readonly devices?: Record<string, unknown>;
}

/** A VMI that boots the test guest: kernel and initrd from the guest image, its data disk as a containerDisk. */
export function guestVmi(guest: GuestImage, name: string, opts: GuestVmiOptions = {}): Record<string, unknown> {
  return {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachineInstance',
    metadata: { name, namespace: NS },
    spec: {
      terminationGracePeriodSeconds: opts.gracePeriodSeconds ?? 20,
      domain: {
        resources: { requests: { memory: '128Mi' } },
        firmware: {
          kernelBoot: {
            kernelArgs: `${guest.kernelArgs} ${opts.extraKernelArgs ?? ''}`.trim(),
            container: { image: 'podvirt/test-guest:latest', kernelPath: '/boot/vmlinuz', initrdPath: '/boot/initrd.img' },
          },
        },
        devices: {
          autoattachGraphicsDevice: false,
          autoattachMemBalloon: false,
          // No implicit pod network for suites not about networking (a guest NIC adds a DHCP
          // exchange and the network set-up to every boot); vmi-network tests the default one.
          autoattachPodInterface: false,
          disks: [{ name: 'data', disk: { bus: 'virtio' } }],
          ...opts.devices,
        },
      },
      volumes: [{ name: 'data', containerDisk: { image: 'podvirt/test-guest:latest' } }],
    },
  };
}

/** What a test file adds around its suite's stack (`VmiSuite.setUp`); each step is optional. */
export interface VmiSuiteSetUp {
  readonly stack?: PodvirtStackOptions;
  /** Runs first, before the stack starts (host state the stack needs); what it returns is added to `stack`. */
  readonly before?: () => Promise<PodvirtStackOptions | undefined>;
  /** Runs while the stack is still up, before it closes (what can only be read from it). */
  readonly beforeClose?: (suite: VmiSuite) => Promise<void>;
  /** Runs last, after the stack closed, also when an earlier step failed (what `before` made goes). */
  readonly after?: () => Promise<void>;
  /** Off for a suite that leaves on purpose what the leftover check would name. Default on. */
  readonly checkLeftovers?: boolean;
}

interface SeenVmi {
  versions: number;
  /** The phases in the order seen, a run of one phase counted once. */
  readonly phases: string[];
  lastPhase: string;
  /** The first version seen in each phase, when, and its place among the versions. */
  readonly first: Map<string, { readonly vmi: VirtualMachineInstance; readonly at: number; readonly version: number }>;
}

/**
 * PODVIRT_TESTBED_CONTROL_PLANE=real runs a suite on the real control plane (scripts/test's
 * second lane); unset or `testbed`, on the in-repo API server. Any other value is refused.
 */
export function controlPlaneFromEnv(): { controlPlane?: 'real' } {
  const value = process.env['PODVIRT_TESTBED_CONTROL_PLANE'];
  if (value === undefined || value === '' || value === 'testbed') return {};
  if (value === 'real') return { controlPlane: 'real' };
  throw new Error(`PODVIRT_TESTBED_CONTROL_PLANE is testbed or real, not "${value}"`);
}

export class VmiSuite {
  readonly guest = guestImage();
  readonly core: CoreV1Api;
  readonly custom: CustomObjectsApi;

  /**
   * What the watch showed of each VMI name, version by version, so that a phase is never missed
   * between two polls: the first version in each phase is kept, not every version (a benchmark
   * writes a VMI's status thousands of times).
   */
  readonly #seen = new Map<string, SeenVmi>();
  readonly #watch: ListWatch<WatchedVmi>;

  private constructor(readonly stack: PodvirtStack) {
    this.core = stack.kubeConfig.makeApiClient(CoreV1Api);
    this.custom = stack.kubeConfig.makeApiClient(CustomObjectsApi);
    const list = async (): Promise<KubernetesListObject<WatchedVmi>> =>
      (await this.custom.listNamespacedCustomObject(VMI_API)) as KubernetesListObject<WatchedVmi>;
    this.#watch = new ListWatch<WatchedVmi>(`/apis/kubevirt.io/v1/namespaces/${NS}/virtualmachineinstances`, new Watch(stack.kubeConfig), list, false);
    const record = (watched: WatchedVmi): void => {
      const vmi = watched as unknown as VirtualMachineInstance;
      const name = vmi.metadata.name ?? '';
      let seen = this.#seen.get(name);
      if (seen === undefined) {
        seen = { versions: 0, phases: [], lastPhase: '', first: new Map() };
        this.#seen.set(name, seen);
      }
      const phase = vmi.status?.phase ?? '';
      if (phase !== '' && phase !== seen.lastPhase) seen.phases.push(phase);
      seen.lastPhase = phase;
      if (phase !== '' && !seen.first.has(phase)) seen.first.set(phase, { vmi, at: Date.now(), version: seen.versions });
      seen.versions++;
    };
    this.#watch.on('add', record);
    this.#watch.on('update', record);
    this.#watch.on('error', () => {
      // The informer restarts itself; a gap is covered by the re-list.
    });
  }

  /**
   * Starts the stack. PODVIRT_TESTBED_RUNTIME (`process` or `image`) picks the kubelet's
   * runtime for every suite of the run; scripts/test runs the lifecycle again with `image`.
   */
  static async start(options: PodvirtStackOptions = {}): Promise<VmiSuite> {
    const runtime = process.env['PODVIRT_TESTBED_RUNTIME'];
    const stack = await startPodvirtStack({ ...(runtime === undefined || runtime === '' ? {} : { runtime }), ...controlPlaneFromEnv(), ...options });
    try {
      const suite = new VmiSuite(stack);
      await suite.#watch.start();
      return suite;
    } catch (err) {
      // Nobody else holds the stack yet: a start that fails past this point closes it here.
      await stack.close();
      throw err;
    }
  }

  /**
   * The suite set-up every VMI test file shares: registers `before` and `after` hooks on the
   * enclosing `describe` (or the file) that start the stack and close it, then check that nothing
   * of it is left. Returns the suite, whose members work from the `before` on: it forwards to
   * the started `VmiSuite`.
   */
  static setUp(setUp: VmiSuiteSetUp = {}): VmiSuite {
    let started: VmiSuite | undefined;
    const current = (): VmiSuite => started ?? assert.fail('the VMI suite is used before its before hook started it');
    before(async () => {
      const extra = (await setUp.before?.()) ?? {};
      started = await VmiSuite.start({ ...setUp.stack, ...extra });
    });
    after(async () => {
      try {
        const suite = started;
        if (suite === undefined) return;
        try {
          await setUp.beforeClose?.(suite);
        } finally {
          await suite.close();
        }
        if (setUp.checkLeftovers !== false) assert.deepEqual(await stackLeftovers(suite.stack), [], 'nothing of the stack is left');
      } finally {
        await setUp.after?.();
      }
    });
    return new Proxy({} as VmiSuite, {
      get: (_, key) => {
        const suite = current();
        const value: unknown = Reflect.get(suite, key, suite);
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(suite) : value;
      },
    });
  }

  /** When the watch first showed the VMI in `phase` (ms since the epoch), if it did. */
  firstSeen(name: string, phase: string): number | undefined {
    return this.#seen.get(name)?.first.get(phase)?.at;
  }

  /** How many versions of the VMI the watch has delivered: every write to it, status writes included. */
  versionsSeen(name: string): number {
    return this.#seen.get(name)?.versions ?? 0;
  }

  /** Every phase the VMI went through, as seen on the watch (a repeat only after a version without one). */
  phasesSeen(name: string): string[] {
    return [...(this.#seen.get(name)?.phases ?? [])];
  }

  kubectl(args: string[], input?: string): Promise<KubectlResult> {
    return kubectl(this.stack.kubeconfigPath, args, input, this.stack.testbed.controlPlane?.binaries.kubectl);
  }

  /** podvirtctl as a user runs it, against this stack's API server; never throws on a failed command. */
  podvirtctl(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    return this.podvirtctlAs(this.stack.kubeconfigPath, ...args);
  }

  /** podvirtctl with another user's kubeconfig; never throws on a failed command. */
  async podvirtctlAs(kubeconfig: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    try {
      const { stdout, stderr } = await runFile(process.execPath, [PODVIRTCTL, ...args, '--kubeconfig', kubeconfig], { timeout: 60_000 });
      return { code: 0, stdout, stderr };
    } catch (err) {
      const e = err as { code?: number; stdout?: string; stderr?: string };
      return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
    }
  }

  /** `kubectl apply -f -` of the manifests, as a user would. */
  async apply(...manifests: Record<string, unknown>[]): Promise<void> {
    const out = await this.kubectl(['apply', '-f', '-'], manifests.map((m) => stringify(m)).join('---\n'));
    if (out.code !== 0) throw new Error(`kubectl apply failed: ${out.stderr}`);
  }

  async vmi(name: string): Promise<VirtualMachineInstance | undefined> {
    try {
      return (await this.custom.getNamespacedCustomObject({ ...VMI_API, name })) as VirtualMachineInstance;
    } catch (err) {
      if ((err as { code?: number }).code === 404) return undefined;
      throw err;
    }
  }

  /** Waits for the phase; fails at once if the VMI reaches a different final phase. */
  async waitForPhase(name: string, phase: string, timeoutMs = BOOT_TIMEOUT_MS): Promise<VirtualMachineInstance> {
    return this.eventually(`VMI ${name} ${phase}`, () => {
      const first = this.#seen.get(name)?.first;
      const hit = first?.get(phase)?.vmi;
      if (hit !== undefined) return Promise.resolve(hit);
      const final = [first?.get('Succeeded'), first?.get('Failed')]
        .filter((f) => f !== undefined)
        .sort((a, b) => a.version - b.version)[0]?.vmi;
      if (final !== undefined) {
        throw new Error(`VMI ${name} is ${final.status?.phase ?? ''}, not ${phase}: ${JSON.stringify(final.status)}\n${this.diagnostics()}`);
      }
      return Promise.resolve(undefined);
    }, timeoutMs);
  }

  async waitForGone(name: string, timeoutMs = 90_000): Promise<void> {
    await this.eventually(`VMI ${name} gone`, async () => ((await this.vmi(name)) === undefined ? true : undefined), timeoutMs);
  }

  /** The garbage collector removes a deleted VMI's pods after the VMI itself: wait for it. */
  async waitForPodsGone(vmi: VirtualMachineInstance, timeoutMs = 60_000): Promise<void> {
    await this.eventually(`pods of ${vmi.metadata.name ?? ''} gone`, async () => ((await this.podsOf(vmi)).length === 0 ? true : undefined), timeoutMs);
  }

  async podsOf(vmi: VirtualMachineInstance): Promise<V1Pod[]> {
    const selector = `kubevirt.io/created-by=${vmi.metadata.uid ?? ''}`;
    return (await this.core.listNamespacedPod({ namespace: NS, labelSelector: selector })).items;
  }

  async events(name: string): Promise<CoreV1Event[]> {
    return (await this.core.listNamespacedEvent({ namespace: NS })).items.filter((e) => e.involvedObject.name === name && e.involvedObject.kind === 'VirtualMachineInstance');
  }

  /** The guest's serial log inside its pod: the `private` emptyDir under the root of the kubelet that runs the pod. */
  serialLog(vmi: VirtualMachineInstance, podUid: string): string {
    const node = vmi.status?.activePods?.[podUid];
    const root = this.stack.testbed.nodes.find((n) => n.nodeName === node)?.kubeletRoot ?? this.stack.testbed.kubeletRoot;
    return guestSerialLog(root, podUid, vmi.metadata.uid ?? '');
  }

  /** Waits for the guest's ready marker in its pod's serial log; returns the marker line. */
  async waitForGuestReady(vmi: VirtualMachineInstance): Promise<string> {
    const pod = Object.keys(vmi.status?.activePods ?? {})[0] ?? '';
    return (await waitForConsoleText(this.serialLog(vmi, pod), this.guest.readyMarker, { timeoutMs: BOOT_TIMEOUT_MS })).line;
  }

  /** Host pids of qemu processes running a domain of this VMI (`-name guest=<ns>_<name>`). */
  async qemuPids(name: string): Promise<number[]> {
    const pids: number[] = [];
    for (const pid of await readdir('/proc')) {
      if (!/^\d+$/.test(pid)) continue;
      const argv = (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).split('\0');
      if (!(argv[0] ?? '').includes('qemu-system')) continue;
      if (argv.some((a) => a.startsWith(`guest=${NS}_${name},`) || a === `guest=${NS}_${name}`)) pids.push(Number(pid));
    }
    return pids;
  }

  /** The shared `eventually`, every 200 ms; a timeout error carries the processes' last logs. */
  eventually<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
    return eventually(probe, { what, deadlineMs: timeoutMs, stepMs: 200, detail: () => this.diagnostics() });
  }

  diagnostics(): string {
    return [this.stack.controller.tail(15), ...this.stack.nodes.map((n) => n.handler.tail(25))].join('\n');
  }

  async close(): Promise<void> {
    await this.#watch.stop();
    await this.stack.close();
  }
}
