// The launcher pod's `guest-console-log` container (KubeVirt's name and shape): the launcher
// image's podvirt-tail prints the guest's serial log, which qemu writes into the `private`
// emptyDir, so `kubectl logs <pod> -c guest-console-log [-f]` shows the boot and follows it.
// A native sidecar (an init container with restartPolicy Always), first of the init
// containers as KubeVirt renders it: it starts before the guest does and is stopped after the
// compute container ends. On unless spec.domain.devices.logSerialConsole is false; never
// without a serial console. Pure.

import type { V1Container } from '@kubernetes/client-node';
import type { VirtualMachineInstance } from '@podvirt/api';
import { CONSOLE_LOG_CONTAINER_NAME, KUBEVIRT_PRIVATE_DIR, TAIL_COMMAND } from '../launcher-layout.js';

// KubeVirt's defaults for this container: requests 5m / 35M, limits 15m / 60M.
const TAIL_RESOURCES = { requests: { cpu: '5m', memory: '35M' }, limits: { cpu: '15m', memory: '60M' } };

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
    args: ['--logfile', `${KUBEVIRT_PRIVATE_DIR}/${uid}/virt-serial0-log`],
    resources: structuredClone(TAIL_RESOURCES),
    volumeMounts: [{ name: 'private', mountPath: KUBEVIRT_PRIVATE_DIR, readOnly: true }],
    restartPolicy: 'Always',
  };
}
