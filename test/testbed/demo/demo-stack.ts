// The frame every demo on a podvirt stack shares: the stack started, a watch that reports each
// VMI's phases, what the demo opens closed again newest first (the stack last), and the check
// that nothing was left behind.
import type { PodvirtStack, PodvirtStackOptions } from '../stack/start-podvirt-stack.js';
import { stackLeftovers } from '../stack/stack-leftovers.js';
import { startPodvirtStack } from '../stack/start-podvirt-stack.js';
import type { DemoOutput } from './boot-guest-demo.js';
import { VmiPhaseWatch } from './vmi-phase-watch.js';

export interface DemoStack {
  readonly stack: PodvirtStack;
  /** How long the stack took to start. */
  readonly startMs: number;
  /** Reports every phase of the namespace's VMIs as `watch: VMI <name> is <phase>`. */
  readonly watch: VmiPhaseWatch;
  /** Closes `close` at the end (also when the demo fails), before what was opened earlier. */
  defer(close: () => Promise<unknown>): void;
}

export interface DemoStackOptions {
  readonly stack: PodvirtStackOptions;
  /** The namespace the watch follows. */
  readonly namespace: string;
  /** What the start and the teardown say. */
  readonly starting: string;
  readonly tearingDown: string;
}

export async function onDemoStack(out: DemoOutput, o: DemoStackOptions, demo: (d: DemoStack) => Promise<void>): Promise<void> {
  const cleanups: Array<() => Promise<unknown>> = [];
  const defer = (close: () => Promise<unknown>): void => void cleanups.unshift(close);
  let stack: PodvirtStack | undefined;
  let left: string[] = [];
  try {
    out.step(o.starting);
    const t0 = Date.now();
    stack = await startPodvirtStack(o.stack);
    const startMs = Date.now() - t0;
    const s = stack;
    defer(() => s.close());
    const watch = new VmiPhaseWatch(s.kubeConfig, o.namespace, (name, phase) => out.detail(`watch: VMI ${name} is ${phase}`));
    await watch.start();
    defer(() => watch.stop());
    await demo({ stack: s, startMs, watch, defer });
  } finally {
    out.step(o.tearingDown);
    for (const cleanup of cleanups) await cleanup();
    left = stack === undefined ? [] : await stackLeftovers(stack);
    for (const what of left) out.detail(`LEFT BEHIND: ${what}`);
  }
  if (left.length > 0) throw new Error(`the demo left ${left.length} thing(s) behind`);
  out.step('nothing left behind: no process, mount, socket or state directory');
}
