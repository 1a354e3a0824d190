// VMI → launcher Pod, in the shape KubeVirt's virt-controller renders: one `compute` container
// running the monitor with the launcher's flags, the emptyDirs at KubeVirt's paths, grace
// periods derived from the VMI's, resources = guest + overhead, owned by the VMI.
// Pure: the only randomness (the qemu-timeout jitter) comes from `config.random`.

import type { V1Container, V1PersistentVolumeClaim, V1Pod, V1ResourceRequirements } from '@kubernetes/client-node';
import {
  APP_LABEL,
  decodeVmi,
  CREATED_BY_LABEL,
  DOMAIN_ANNOTATION,
  formatQuantity,
  LAUNCHER_APP_LABEL_VALUE,
  NODE_NAME_LABEL,
  NODE_SCHEDULABLE_LABEL,
  toBytes,
  VMI_API_VERSION,
  VMI_KIND,
  NANOS_PER_UNIT,
  type DefaultedVmi,
  type VirtualMachineInstance,
} from '@podvirt/api';
import { ControllerError } from '../controller-error.js';
import {
  COMPUTE_CONTAINER_NAME,
  CONTAINER_DISK_DIR,
  EPHEMERAL_DISK_DIR,
  HOOK_SIDECARS,
  HOTPLUG_DISK_DIR,
  KEEP_LAUNCHER_ALIVE_ANNOTATION,
  KUBEVIRT_SHARE_DIR,
  LAUNCHER_GRACE_EXTRA_SECONDS,
  LAUNCHER_MONITOR_COMMAND,
  LAUNCHER_VOLUMES,
  POD_GRACE_EXTRA_SECONDS,
  QEMU_TIMEOUT_BASE_SECONDS,
  QEMU_TIMEOUT_JITTER_SECONDS,
} from '../launcher-layout.js';
import { deviceResources } from './device-resources.js';
import type { HostDiskPolicy } from '../decide/host-disk-policy.js';
import { memoryOverheadBytes } from './memory-overhead.js';
import { renderConsoleLogContainer } from './render-console-log-container.js';
import { renderImageInitContainers } from './render-image-containers.js';
import { renderVolumes, type RenderedVolumes } from './render-volumes.js';

export interface LauncherPodConfig {
  /** Image of the compute container. */
  readonly image: string;
  /** Passes `--allow-emulation`: run under TCG where /dev/kvm is missing. */
  readonly allowEmulation: boolean;
  /** CPU request of a VMI that names none; KubeVirt's cluster default is `100m`. */
  readonly defaultCpuRequest?: string;
  /** The HostDisk gate and allowed directories; every hostDisk is refused when unset. */
  readonly hostDisk?: HostDiskPolicy;
  /** A number in [0, 1) choosing the qemu-timeout jitter; Math.random in production. */
  readonly random: () => number;
}

export const DEFAULT_CPU_REQUEST = '100m';
/**
 * The compute container runs as root with only the capabilities it uses (the launcher checks
 * them at start and names what is missing). The pod network's privileged phase (tap, bridge,
 * NAT, sysctls) is the handler's, from outside the pod, so the container needs no NET_ADMIN and
 * is never privileged. What is kept, each shown needed by starting the launcher without it
 * (test/bench/compute-capabilities.ts): NET_BIND_SERVICE for the launcher's DHCP server on
 * port 67 (as KubeVirt adds it), and for the private libvirt daemon starting qemu: SETGID (it
 * sets qemu's groups), SETUID and SETPCAP (Debian's libvirtd, the fallback, sets qemu's user and
 * drops its capabilities with them; podvirt's virtqemud, built without libcap-ng, does not) and
 * DAC_OVERRIDE (it probes qemu with it, and opens the serial log); CHOWN for the launcher to
 * give the serial log to the unprivileged guest-console-log container. FOWNER, KILL and
 * SYS_NICE are not needed here: qemu runs as root with no file relabelling, and podvirt pins no
 * CPUs.
 */
export const COMPUTE_CAPABILITIES: readonly string[] = ['NET_BIND_SERVICE', 'CHOWN', 'DAC_OVERRIDE', 'SETGID', 'SETUID', 'SETPCAP'];
const COMPUTE_SECURITY_CONTEXT = { capabilities: { drop: ['ALL'], add: [...COMPUTE_CAPABILITIES] } };
/**
 * Every container of the pod runs under the container runtime's default seccomp profile
 * (Kubernetes' RuntimeDefault; without it the kubelet runs a pod Unconfined unless the node
 * enables SeccompDefault). The launcher's daemon uses no namespaces and relabels nothing, and
 * the guest boots under it (test/bench/compute-capabilities.ts, packages/launcher/README.md).
 */
const POD_SECURITY_CONTEXT = { seccompProfile: { type: 'RuntimeDefault' } };
/** On the pod: the VMI name, so kubectl users see which VM a pod runs without the UID. */
export const VM_NAME_LABEL = 'vm.kubevirt.io/name';

/**
 * Launcher pods are named after their VMI; the API server appends a random suffix. The API
 * server keeps only the first 58 characters of a generateName (and kube-apiserver refuses one
 * that is not a valid name prefix, e.g. longer than 253), so a long VMI name is cut here, and
 * never so that the prefix ends in a dot.
 */
export function launcherPodPrefix(vmiName: string): string {
  return `${`virt-launcher-${vmiName}`.slice(0, GENERATE_NAME_BASE - 1).replace(/[-.]+$/, '')}-`;
}
/** What Kubernetes' name generator keeps of a generateName: 58 characters + a 5-character suffix = a DNS label. */
const GENERATE_NAME_BASE = 58;

function bytesQuantity(bytes: bigint): string {
  return formatQuantity({ nanos: bytes * NANOS_PER_UNIT, format: 'BinarySI' });
}

function requireIdentity(vmi: VirtualMachineInstance): { name: string; namespace: string; uid: string } {
  const { name, namespace, uid } = vmi.metadata;
  if (!name || !namespace || !uid) {
    throw new ControllerError('CONTROLLER_ERR_INVALID_VMI', 'a launcher pod needs the VMI name, namespace and uid');
  }
  return { name, namespace, uid };
}

function resources(vmi: DefaultedVmi, config: LauncherPodConfig): V1ResourceRequirements {
  const domain = vmi.spec.domain;
  const guest = domain.memory.guest;
  const { cpu } = domain;
  const overhead = memoryOverheadBytes({
    guestMemoryBytes: toBytes(guest),
    vcpus: cpu.sockets * cpu.cores * cpu.threads,
    graphics: domain.devices.autoattachGraphicsDevice,
    allowEmulation: config.allowEmulation,
  });
  const requestMemory = domain.resources?.requests?.memory ?? guest;
  const requests: Record<string, string> = {
    memory: bytesQuantity(toBytes(requestMemory) + overhead),
    cpu: String(domain.resources?.requests?.cpu ?? config.defaultCpuRequest ?? DEFAULT_CPU_REQUEST),
  };
  const limits: Record<string, string> = {};
  const limitMemory = domain.resources?.limits?.memory;
  if (limitMemory !== undefined) limits['memory'] = bytesQuantity(toBytes(limitMemory) + overhead);
  const limitCpu = domain.resources?.limits?.cpu;
  if (limitCpu !== undefined) limits['cpu'] = String(limitCpu);
  const devices = deviceResources(vmi, config.allowEmulation);
  Object.assign(requests, devices);
  Object.assign(limits, devices);
  return Object.keys(limits).length > 0 ? { requests, limits } : { requests };
}

function launcherArgs(vmi: VirtualMachineInstance, id: { name: string; namespace: string; uid: string }, config: LauncherPodConfig, grace: number): string[] {
  const jitter = Math.floor(Math.min(Math.max(config.random(), 0), 0.999999) * QEMU_TIMEOUT_JITTER_SECONDS);
  const args = [
    '--qemu-timeout', `${QEMU_TIMEOUT_BASE_SECONDS + jitter}s`,
    '--name', id.name,
    '--uid', id.uid,
    '--namespace', id.namespace,
    '--kubevirt-share-dir', KUBEVIRT_SHARE_DIR,
    '--ephemeral-disk-dir', EPHEMERAL_DISK_DIR,
    '--container-disk-dir', CONTAINER_DISK_DIR,
    '--grace-period-seconds', String(grace + LAUNCHER_GRACE_EXTRA_SECONDS),
    '--hook-sidecars', String(HOOK_SIDECARS),
  ];
  if (config.allowEmulation) args.push('--allow-emulation');
  if (vmi.metadata.annotations?.[KEEP_LAUNCHER_ALIVE_ANNOTATION] === 'true') args.push('--keep-after-failure');
  return args;
}

function computeContainer(
  vmi: DefaultedVmi,
  id: { name: string; namespace: string; uid: string },
  config: LauncherPodConfig,
  grace: number,
  storage: RenderedVolumes,
): V1Container {
  return {
    name: COMPUTE_CONTAINER_NAME,
    image: config.image,
    command: [LAUNCHER_MONITOR_COMMAND],
    args: launcherArgs(vmi, id, config, grace),
    env: [{ name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }],
    resources: resources(vmi, config),
    securityContext: COMPUTE_SECURITY_CONTEXT,
    // hotplug-disks: podvirt-handler mounts hotplugged disks into it on the node while the pod runs.
    volumeMounts: [...LAUNCHER_VOLUMES.map((v) => ({ name: v.name, mountPath: v.mountPath, ...(v.mountPath === HOTPLUG_DISK_DIR ? { mountPropagation: 'HostToContainer' } : {}) })), ...storage.mounts],
    ...(storage.devices.length > 0 ? { volumeDevices: storage.devices } : {}),
  };
}

function podLabels(vmi: VirtualMachineInstance, id: { name: string; uid: string }): Record<string, string> {
  // The VMI's own labels come along (Services select VMs by them), except the node label,
  // which describes the VMI's placement, not the pod's.
  const inherited = Object.entries(vmi.metadata.labels ?? {}).filter(([key]) => key !== NODE_NAME_LABEL);
  return {
    ...Object.fromEntries(inherited),
    [APP_LABEL]: LAUNCHER_APP_LABEL_VALUE,
    [CREATED_BY_LABEL]: id.uid,
    [VM_NAME_LABEL]: vmNameLabelValue(id.name),
  };
}

/**
 * KubeVirt's value for vm.kubevirt.io/name: the name's first DNS label, cut to 63 characters
 * (a label value's limit), so a VMI name of up to 253 characters still gives a valid pod.
 */
export function vmNameLabelValue(name: string): string {
  const first = name.split('.')[0] ?? '';
  return first.length > 63 ? first.slice(0, 63).replace(/[-_.]+$/, '') : first;
}

function initContainers(vmi: VirtualMachineInstance, image: string, uid: string, compute: V1Container): { initContainers?: V1Container[] } {
  const consoleLog = renderConsoleLogContainer(vmi, image, uid);
  const containers = [...(consoleLog === undefined ? [] : [consoleLog]), ...renderImageInitContainers(vmi, compute.resources ?? {})];
  return containers.length === 0 ? {} : { initContainers: containers };
}

/**
 * Renders the launcher pod for `vmi`. Throws ControllerError `CONTROLLER_ERR_INVALID_VMI` when
 * the VMI lacks what a pod needs (identity, a memory size).
 */
export function renderLauncherPod(raw: VirtualMachineInstance, config: LauncherPodConfig, claims?: ReadonlyMap<string, V1PersistentVolumeClaim>): V1Pod {
  const id = requireIdentity(raw);
  // Render from the decoded VMI (what virt-api would have defaulted), so grace and CPU counts
  // are explicit; decideVmi has refused an invalid one before a pod is wanted.
  const vmi = decodeVmi(raw);
  const storage = renderVolumes(vmi, claims, config.hostDisk);
  const grace = vmi.spec.terminationGracePeriodSeconds ?? 0;
  const compute = computeContainer(vmi, id, config, grace, storage);
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      generateName: launcherPodPrefix(id.name),
      namespace: id.namespace,
      labels: podLabels(vmi, id),
      annotations: { [DOMAIN_ANNOTATION]: id.name },
      ownerReferences: [
        { apiVersion: VMI_API_VERSION, kind: VMI_KIND, name: id.name, uid: id.uid, controller: true, blockOwnerDeletion: true },
      ],
    },
    spec: {
      restartPolicy: 'Never',
      terminationGracePeriodSeconds: grace + POD_GRACE_EXTRA_SECONDS,
      automountServiceAccountToken: false,
      securityContext: POD_SECURITY_CONTEXT,
      nodeSelector: { ...vmi.spec.nodeSelector, [NODE_SCHEDULABLE_LABEL]: 'true' },
      ...initContainers(vmi, config.image, id.uid, compute),
      containers: [compute],
      volumes: [...LAUNCHER_VOLUMES.map((v) => ({ name: v.name, emptyDir: {} })), ...storage.volumes],
    },
  };
}
