import type { V1Container, V1Pod } from '@kubernetes/client-node';
import type { BindMount } from '../container/container-state-paths.js';
import type { DeviceNode } from '../container/private-dev.js';
import { startContainer, type Container } from '../container/start-container.js';
import type { ImageCommand } from './image-map.js';

/** One container to start inside a pod sandbox the kubelet has already made. */
export interface RuntimeContainerSpec {
  readonly command: readonly string[];
  /** The container's private state (its image's /etc/libvirt, /run/libvirt, … for the process runtime). */
  readonly stateDir: string;
  readonly binds: readonly BindMount[];
  readonly env: Readonly<Record<string, string>>;
  readonly cwd?: string;
  /** The sandbox's network namespace, which every container of the pod joins (none: the host's, for hostNetwork pods). */
  readonly netnsPath?: string;
  /** resources.limits.memory: the container's processes run under it (a memory cgroup named `cgroupName`). */
  readonly memory?: { readonly cgroupName: string; readonly limitBytes: number };
  /** Device plugin allocations: a private /dev with exactly these nodes (unset: the host's /dev). */
  readonly devices?: readonly DeviceNode[];
  /** The pod and the container's spec (image, securityContext), for runtimes that apply them. */
  readonly pod?: V1Pod;
  readonly container?: V1Container;
  /** The kubelet's log file for the container, for runtimes that write it themselves. */
  readonly logPath?: string;
  /** The pod's IP (the sandbox's), which the pod's hostname resolves to inside the container. */
  readonly podIP?: string;
  /** Unique per run of a container of a pod (`<pod uid>-<container>-<restart count>`). */
  readonly runId?: string;
  /** The image as the runtime resolved it (resolveImage), for runtimes that have one. */
  readonly image?: ImageCommand;
}

/** An image found (its ENTRYPOINT, CMD, ENV), or why it cannot be pulled. */
export type ImageLookup = { readonly image: ImageCommand } | { readonly missing: string };

/**
 * How the kubelet starts a container; the sandbox (network namespace, volumes) stays the
 * kubelet's whichever runtime this is.
 */
export interface ContainerRuntime {
  readonly name: string;
  /** Finds an image in the runtime's store; without it, the kubelet's image map decides. */
  resolveImage?(image: string): Promise<ImageLookup>;
  start(spec: RuntimeContainerSpec): Promise<Container>;
}

/** Containers as process trees in their own mount and PID namespaces (`unshare`), in the pod's netns. */
export function processRuntime(): ContainerRuntime {
  return {
    name: 'process',
    start: (spec) =>
      startContainer({
        command: spec.command,
        stateDir: spec.stateDir,
        binds: spec.binds,
        pidNamespace: true,
        env: spec.env,
        ...(spec.netnsPath === undefined ? {} : { netnsPath: spec.netnsPath }),
        ...(spec.cwd === undefined ? {} : { cwd: spec.cwd }),
        ...(spec.memory === undefined ? {} : { memory: spec.memory }),
        ...(spec.devices === undefined ? {} : { devices: spec.devices }),
      }),
  };
}
