// The launcher pod's `guest-console-log` container (KubeVirt's name and shape): the launcher
// image's podvirt-tail prints the guest's serial log, which qemu writes into the `private`
// emptyDir, so `kubectl logs <pod> -c guest-console-log [-f]` shows the boot and follows it.
// A native sidecar (an init container with restartPolicy Always), first of the init
// containers as KubeVirt renders it: it starts before the guest does and is stopped after the
// compute container ends. On unless spec.domain.devices.logSerialConsole is false; never
// without a serial console. Pure.
//
// It runs as KubeVirt runs it: as the unprivileged account the launcher gives the log to
// (NON_ROOT_UID), with every capability dropped and no privilege escalation, so a flaw in the
// tail reaches the guest's log and nothing else of the pod.
//
// Resources as KubeVirt renders them: requests 5m / 35M, limits 15m / 60M; for a VMI that wants
// Guaranteed QoS (cpu and memory requests equal to their limits, or a memory limit alone) the
// requests are raised to the limits, because the kubelet counts a native sidecar in the pod's
// QoS class and a sidecar asking less than its limit would make the whole pod Burstable.
// (KubeVirt does the same for dedicated CPUs, which podvirt refuses; its KubeVirt CR knobs for
// these figures, supportContainerResources, have no counterpart in podvirt's configuration.)

import type { V1Container, V1ResourceRequirements } from '@kubernetes/client-node';
import { compareQuantities, isZeroQuantity, NON_ROOT_UID, SERIAL_LOG_FILE, type VirtualMachineInstance } from '@podvirt/api';
import { CONSOLE_LOG_CONTAINER_NAME, KUBEVIRT_PRIVATE_DIR, TAIL_COMMAND } from '../launcher-layout.js';

const TAIL_REQUESTS = { cpu: '5m', memory: '35M' };
const TAIL_LIMITS = { cpu: '15m', memory: '60M' };

type Quantity = string | number | undefined;

function isSet(value: Quantity): value is string | number {
  return value !== undefined && !isZeroQuantity(value);
}

/**
 * KubeVirt's test of a VMI asking for Guaranteed QoS: a cpu request equal to the cpu limit, and
 * a memory request equal to the memory limit or a memory limit with no request.
 */
function wantsGuaranteedQos(vmi: VirtualMachineInstance): boolean {
  const { requests = {}, limits = {} } = vmi.spec.domain.resources ?? {};
  const equal = (request: Quantity, limit: Quantity): boolean => isSet(request) && isSet(limit) && compareQuantities(request, limit) === 0;
  const memory = isSet(requests.memory) ? equal(requests.memory, limits.memory) : isSet(limits.memory);
  return memory && equal(requests.cpu, limits.cpu);
}

function tailResources(vmi: VirtualMachineInstance): V1ResourceRequirements {
  return { requests: { ...(wantsGuaranteedQos(vmi) ? TAIL_LIMITS : TAIL_REQUESTS) }, limits: { ...TAIL_LIMITS } };
}

export function consoleLogEnabled(vmi: VirtualMachineInstance): boolean {
  const devices = vmi.spec.domain.devices;
  return devices.autoattachSerialConsole !== false && devices.logSerialConsole !== false;
}

export function renderConsoleLogContainer(vmi: VirtualMachineInstance, image: string, uid: string): V1Container | undefined {
  if (!consoleLogEnabled(vmi)) return undefined;
  return {
    name: CONSOLE_LOG_CONTAINER_NAME,
    image,
    command: [TAIL_COMMAND],
    args: ['--logfile', `${KUBEVIRT_PRIVATE_DIR}/${uid}/${SERIAL_LOG_FILE}`],
    resources: tailResources(vmi),
    volumeMounts: [{ name: 'private', mountPath: KUBEVIRT_PRIVATE_DIR, readOnly: true }],
    securityContext: {
      runAsUser: NON_ROOT_UID,
      runAsNonRoot: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
    },
    restartPolicy: 'Always',
  };
}
