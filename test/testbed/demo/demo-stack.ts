// The frame every demo on a podvirt stack shares: the stack started, a watch that reports each
// VMI's phases, what the demo opens closed again newest first (the stack last), and the check
// that nothing was left behind. The stack is the testbed's (testbedStack) or the real node's
// (realNodeStack: the upstream kubelet on containerd, podvirt as its pods).
import { KubeConfig } from '@kubernetes/client-node';
import { RealNodeCluster } from '../real-node/real-node-cluster.js';
import type { PodvirtStack, PodvirtStackOptions } from '../stack/start-podvirt-stack.js';
import { stackLeftovers } from '../stack/stack-leftovers.js';
import { startPodvirtStack } from '../stack/start-podvirt-stack.js';
import type { DemoOutput } from './boot-guest-demo.js';
import { VmiPhaseWatch } from './vmi-phase-watch.js';

/** What a demo runs on: how it starts, its API for the watch, and what it left once closed. */
export interface DemoStackKind<S extends { close(): Promise<void> }> {
  start(): Promise<S>;
  kubeConfig(stack: S): KubeConfig;
  leftovers(stack: S): Promise<string[]>;
}

/** The testbed's stack (start-podvirt-stack.ts). */
export function testbedStack(options: PodvirtStackOptions): DemoStackKind<PodvirtStack> {
  return { start: () => startPodvirtStack(options), kubeConfig: (s) => s.kubeConfig, leftovers: (s) => stackLeftovers(s) };
}

/** The real node joined to the real control plane, podvirt installed on it from manifests/ (real-node-cluster.ts). */
export function realNodeStack(root: string): DemoStackKind<RealNodeCluster> {
  return {
    start: async () => {
      const cluster = await RealNodeCluster.start(root);
      try {
        await cluster.install();
      } catch (err) {
        await cluster.close();
        throw err;
      }
      return cluster;
    },
    kubeConfig: (c) => {
      const kc = new KubeConfig();
      kc.loadFromFile(c.kubeconfig);
      return kc;
    },
    leftovers: (c) => c.leftovers(),
  };
}

export interface DemoStack<S = PodvirtStack> {
  readonly stack: S;
  /** How long the stack took to start. */
  readonly startMs: number;
  /** Reports every phase of the namespace's VMIs as `watch: VMI <name> is <phase>`. */
  readonly watch: VmiPhaseWatch;
  /** Closes `close` at the end (also when the demo fails), before what was opened earlier. */
  defer(close: () => Promise<unknown>): void;
}

export interface DemoStackOptions<S extends { close(): Promise<void> }> {
  readonly stack: DemoStackKind<S>;
  /** The namespace the watch follows. */
  readonly namespace: string;
  /** What the start and the teardown say. */
  readonly starting: string;
  readonly tearingDown: string;
}

export async function onDemoStack<S extends { close(): Promise<void> }>(out: DemoOutput, o: DemoStackOptions<S>, demo: (d: DemoStack<S>) => Promise<void>): Promise<void> {
  const cleanups: Array<() => Promise<unknown>> = [];
  const defer = (close: () => Promise<unknown>): void => void cleanups.unshift(close);
  let stack: S | undefined;
  let left: string[] = [];
  try {
    out.step(o.starting);
    const t0 = Date.now();
    stack = await o.stack.start();
    const startMs = Date.now() - t0;
    const s = stack;
    defer(() => s.close());
    const watch = new VmiPhaseWatch(o.stack.kubeConfig(s), o.namespace, (name, phase) => out.detail(`watch: VMI ${name} is ${phase}`));
    await watch.start();
    defer(() => watch.stop());
    await demo({ stack: s, startMs, watch, defer });
  } finally {
    out.step(o.tearingDown);
    for (const cleanup of cleanups) await cleanup();
    left = stack === undefined ? [] : await o.stack.leftovers(stack);
    for (const what of left) out.detail(`LEFT BEHIND: ${what}`);
  }
  if (left.length > 0) throw new Error(`the demo left ${left.length} thing(s) behind`);
  out.step('nothing left behind: no process, mount, socket or state directory');
}
