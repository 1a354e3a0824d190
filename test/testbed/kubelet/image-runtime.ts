// The kubelet's image runtime: containers from real images in podman's local store, run by
// runc (see container/start-image-container.ts). Chosen with `--runtime image`.
//
// Why podman and not containerd's CRI, which is what a real kubelet speaks: in CRI the runtime
// owns the pod sandbox — RunPodSandbox makes the network namespace and runs CNI itself, and
// its NamespaceOption can only ask for the pod's own, the node's or (PID only) another
// container's namespace, never an existing one by path. The testbed's sandbox (netns + CNI,
// test/testbed/sandbox) is the kubelet's and must stay so, which CRI cannot honour; podman joins
// a namespace by path (`--network ns:`).

import { readFile } from 'node:fs/promises';
import { podman } from '../container/podman.js';
import type { DeviceNode } from '../container/private-dev.js';
import { KUBELET_ROOT_LABEL, startImageContainer } from '../container/start-image-container.js';
import { processRuntime, type ContainerRuntime, type ImageLookup } from './container-runtime.js';
import { securityArgs } from './security-context.js';

interface InspectedImage {
  Config?: { Entrypoint?: string[] | null; Cmd?: string[] | null; Env?: string[] | null; User?: string; WorkingDir?: string };
}

/** An image's ENTRYPOINT, CMD, ENV and USER from podman's store; missing: as a pull failure says it. */
export async function inspectImage(ref: string): Promise<ImageLookup & { user?: string }> {
  let text: string;
  try {
    text = await podman(['image', 'inspect', '--format', 'json', ref]);
  } catch (err) {
    return { missing: `failed to resolve reference "${ref}": ${(err as Error).message} (the testbed pulls from no registry: build it with scripts/images)` };
  }
  const config = ((JSON.parse(text) as InspectedImage[])[0] ?? {}).Config ?? {};
  const env = Object.fromEntries((config.Env ?? []).map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]));
  return { image: { entrypoint: config.Entrypoint ?? [], cmd: config.Cmd ?? [], env }, user: config.User ?? '' };
}

/**
 * Device plugin allocations as podman `--device` flags: the host node is found by its numbers
 * (/sys/dev/<char|block>/<major>:<minor>), so the container gets the node the plugin named.
 */
async function deviceArgs(devices: readonly DeviceNode[]): Promise<string[]> {
  const args: string[] = [];
  for (const d of devices) {
    const uevent = await readFile(`/sys/dev/${d.type === 'c' ? 'char' : 'block'}/${d.major}:${d.minor}/uevent`, 'utf8').catch(() => '');
    const name = /^DEVNAME=(.+)$/m.exec(uevent)?.[1];
    if (name === undefined) throw new Error(`device ${d.type} ${d.major}:${d.minor} for ${d.path} is not on this host`);
    args.push('--device', `/dev/${name}:${d.path}:rwm`);
  }
  return args;
}

/** podman's name for one run of a container: the kubelet's run id, as podman allows names. */
function runName(runId: string): string {
  return `k8s_${runId}`.replace(/[^A-Za-z0-9_.-]/g, '_');
}

export interface ImageRuntimeOptions {
  /**
   * Capabilities no container gets, whatever its securityContext adds: a node whose runtime
   * cannot grant them (it runs with a narrower bounding set itself, or a policy strips them).
   * Tests use it to start a compute container without one.
   */
  readonly withheldCapabilities?: readonly string[];
}

/** The security flags with every withheld capability taken out of the adds and dropped. */
function withholding(args: readonly string[], withheld: readonly string[]): string[] {
  const names = new Set(withheld.map((c) => c.toUpperCase().replace(/^CAP_/, '')));
  if (names.size === 0) return [...args];
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--cap-add' && names.has(args[i + 1] ?? '')) i++;
    else out.push(args[i] ?? '');
  }
  return [...out, ...[...names].flatMap((c) => ['--cap-drop', c])];
}

export function imageRuntime(kubeletRoot = '', options: ImageRuntimeOptions = {}): ContainerRuntime {
  const users = new Map<string, string>();
  return {
    name: 'image',
    resolveImage: async (ref) => {
      const found = await inspectImage(ref);
      if ('image' in found) users.set(ref, found.user ?? '');
      return found;
    },
    start: async (spec) => {
      const { pod, container } = spec;
      if (pod === undefined || container === undefined || spec.logPath === undefined || spec.runId === undefined) {
        throw new Error('the image runtime needs the pod, the container, its log path and run id');
      }
      const image = container.image ?? '';
      return startImageContainer({
        name: runName(spec.runId),
        image,
        command: spec.command,
        env: spec.env,
        binds: spec.binds,
        ...(spec.cwd === undefined ? {} : { cwd: spec.cwd }),
        ...(spec.netnsPath === undefined ? {} : { netnsPath: spec.netnsPath }),
        ...(pod.metadata?.name === undefined ? {} : { hostname: pod.metadata.name }),
        ...(spec.podIP === undefined ? {} : { podIP: spec.podIP }),
        ...(spec.memory === undefined ? {} : { memoryLimitBytes: spec.memory.limitBytes }),
        securityArgs: [
          ...withholding(securityArgs(pod, container, { user: users.get(image) ?? '' }), options.withheldCapabilities ?? []),
          ...(await deviceArgs(spec.devices ?? [])),
        ],
        logPath: spec.logPath,
        labels: {
          'io.kubernetes.pod.namespace': pod.metadata?.namespace ?? '',
          'io.kubernetes.pod.name': pod.metadata?.name ?? '',
          'io.kubernetes.pod.uid': pod.metadata?.uid ?? '',
          'io.kubernetes.container.name': container.name,
          [KUBELET_ROOT_LABEL]: kubeletRoot,
        },
      });
    },
  };
}

/** The kubelet's `--runtime` choices. */
export const containerRuntimes: Readonly<Record<string, (kubeletRoot: string, options?: ImageRuntimeOptions) => ContainerRuntime>> = {
  process: () => processRuntime(),
  image: (root, options) => imageRuntime(root, options),
};

/** The runtime for a `--runtime` value; an unknown name is an error listing the choices. */
export function runtimeNamed(name: string, kubeletRoot: string, options: ImageRuntimeOptions = {}): ContainerRuntime {
  const make = containerRuntimes[name];
  if (make === undefined) throw new Error(`--runtime must be one of: ${Object.keys(containerRuntimes).join(', ')} (not "${name}")`);
  return make(kubeletRoot, options);
}
