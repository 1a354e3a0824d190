// The command line of scripts/demo, scripts/testbed-up and scripts/testbed-down (test/testbed/demo/main.ts):
// one mode, the options that mode takes, and nothing else. A flag this does not know, or one the
// chosen mode does not take, is refused by name rather than ignored.
import { parseArgs } from 'node:util';

import type { ControlPlane } from '../cli/start-testbed.js';

export type { ControlPlane };
export const CONTROL_PLANES: readonly ControlPlane[] = ['testbed', 'real'];
/** The node: the testbed's own kubelet (default) or the upstream kubelet on containerd (test/testbed/real-node/). */
export type NodeKind = 'testbed' | 'real';
export const NODE_KINDS: readonly NodeKind[] = ['testbed', 'real'];

export type DemoCommand =
  | { readonly mode: 'vmi'; readonly runtime: 'process' | 'image'; readonly controlPlane: ControlPlane; readonly node: NodeKind }
  | { readonly mode: 'network'; readonly controlPlane: ControlPlane }
  | { readonly mode: 'migrate'; readonly controlPlane: ControlPlane }
  | { readonly mode: 'libvirt-only' }
  | { readonly mode: 'up' | 'serve'; readonly nodes: number; readonly controlPlane: ControlPlane; readonly node: NodeKind; readonly controllerArgs: readonly string[] }
  | { readonly mode: 'down' };

export class DemoUsageError extends Error {
  readonly code = 'DEMO_USAGE';
  constructor(message: string) {
    super(`${message}\n${DEMO_USAGE}`);
    this.name = 'DemoUsageError';
  }
}

export const DEMO_USAGE = [
  'usage: scripts/demo [--images | --network | --migrate | --libvirt-only] [--control-plane testbed|real]',
  '       scripts/demo --node real',
  '       scripts/testbed-up [--nodes N] [--control-plane testbed|real] [-- CONTROLLER-FLAGS…]',
  '       scripts/testbed-up --node real',
  '       scripts/testbed-down',
].join('\n');

const MODE_FLAGS = ['images', 'network', 'migrate', 'libvirt-only'] as const;
const COMMANDS = ['up', 'down', 'serve'] as const;

/** Parses what follows `main.js`; throws DemoUsageError naming what it refuses. Flags after `--` go to podvirt-controller (up, serve). */
export function parseDemoArgs(args: readonly string[]): DemoCommand {
  const dashes = args.indexOf('--');
  const own = dashes < 0 ? args : args.slice(0, dashes);
  const controllerArgs = dashes < 0 ? [] : args.slice(dashes + 1);
  let parsed;
  try {
    parsed = parseArgs({
      args: [...own],
      allowPositionals: true,
      strict: true,
      options: {
        images: { type: 'boolean' },
        network: { type: 'boolean' },
        migrate: { type: 'boolean' },
        'libvirt-only': { type: 'boolean' },
        nodes: { type: 'string' },
        'control-plane': { type: 'string' },
        node: { type: 'string' },
      },
    });
  } catch (err) {
    throw new DemoUsageError((err as Error).message);
  }
  const { values, positionals } = parsed;
  if (positionals.length > 1) throw new DemoUsageError(`one command at most, not "${positionals.join(' ')}"`);
  const command = positionals[0];
  if (command !== undefined && !(COMMANDS as readonly string[]).includes(command)) throw new DemoUsageError(`unknown command "${command}" (up, down)`);
  const modes = MODE_FLAGS.filter((m) => values[m] === true);
  if (modes.length > 1 || (modes.length === 1 && command !== undefined)) {
    throw new DemoUsageError(`choose one of ${[...modes.map((m) => `--${m}`), ...(command === undefined ? [] : [command])].join(', ')}`);
  }
  const refuse = (flag: string, by: string): never => {
    throw new DemoUsageError(`--${flag} does not apply to ${by}`);
  };
  const node = nodeKindOf(values.node);
  if (node === 'real') {
    // The real node joins the real control plane, alone (one per machine), podvirt as its pods.
    if (values['control-plane'] === 'testbed') refuse('control-plane testbed', '--node real (it runs on the real control plane)');
    if (values.nodes !== undefined) refuse('nodes', '--node real (one real node per machine)');
    if (dashes >= 0) refuse('node real', 'flags after -- (podvirt is installed from manifests/ as it is)');
    if (modes.length > 0) refuse('node real', `--${modes[0] ?? ''} (scripts/demo --node real runs the main demo)`);
    if (command === 'down') refuse('node', 'down (it stops whatever is up)');
  }
  const controlPlane = node === 'real' ? 'real' : controlPlaneOf(values['control-plane']);
  if (values.nodes !== undefined && command !== 'up' && command !== 'serve') refuse('nodes', command ?? (modes[0] === undefined ? 'the demo' : `--${modes[0]}`));
  if (command === 'up' || command === 'serve') return { mode: command, nodes: nodeCount(values.nodes), controlPlane, node, controllerArgs };
  if (dashes >= 0) throw new DemoUsageError(`flags after -- (for podvirt-controller) apply to up only`);
  if (command === 'down') return values['control-plane'] === undefined && values.node === undefined ? { mode: 'down' } : refuse(values.node === undefined ? 'control-plane' : 'node', 'down (it stops whatever is up)');
  const mode = modes[0];
  if (mode === 'libvirt-only') return values['control-plane'] === undefined && values.node === undefined ? { mode } : refuse(values.node === undefined ? 'control-plane' : 'node', '--libvirt-only (no Kubernetes)');
  if (mode === 'network' || mode === 'migrate') return { mode, controlPlane };
  return { mode: 'vmi', runtime: mode === 'images' ? 'image' : 'process', controlPlane, node };
}

/** The stack option for a control plane: nothing for the default, so a default run is unchanged. */
export function controlPlaneOption(controlPlane: ControlPlane | undefined): { controlPlane?: ControlPlane } {
  return controlPlane === undefined || controlPlane === 'testbed' ? {} : { controlPlane };
}

function controlPlaneOf(value: string | undefined): ControlPlane {
  if (value === undefined) return 'testbed';
  const known = CONTROL_PLANES.find((c) => c === value);
  if (known === undefined) throw new DemoUsageError(`--control-plane is testbed (the in-repo API server, the default) or real (etcd and kube-apiserver built by tools/build-binaries), not "${value}"`);
  return known;
}

function nodeKindOf(value: string | undefined): NodeKind {
  if (value === undefined) return 'testbed';
  const known = NODE_KINDS.find((n) => n === value);
  if (known === undefined) throw new DemoUsageError(`--node is testbed (the testbed's own kubelet, the default) or real (the upstream kubelet on containerd, built by tools/build-binaries), not "${value}"`);
  return known;
}

function nodeCount(value: string | undefined): number {
  if (value === undefined) return 1;
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isInteger(n) || n < 1) throw new DemoUsageError(`--nodes wants a whole number of nodes, not "${value}"`);
  return n;
}
