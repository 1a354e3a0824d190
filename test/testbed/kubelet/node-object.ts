import { cpus, release, totalmem } from 'node:os';
import type { V1Node, V1NodeStatus } from '@kubernetes/client-node';

/** The Node this kubelet registers: hostname label, capacity, addresses, kubelet endpoint. */
export function nodeObject(name: string): V1Node {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      labels: { 'kubernetes.io/hostname': name, 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64', 'beta.kubernetes.io/os': 'linux', 'beta.kubernetes.io/arch': 'amd64' },
    },
    spec: {},
  };
}

export function nodeStatus(name: string, hostIP: string, kubeletPort: number, now: Date, readySince: Date): V1NodeStatus {
  const capacity = { cpu: String(cpus().length), memory: `${Math.floor(totalmem() / 1024)}Ki`, pods: '110', 'ephemeral-storage': '10Gi' };
  const condition = (type: string, status: string, reason: string, message: string, since: Date) => ({
    type, status, reason, message, lastHeartbeatTime: now, lastTransitionTime: since,
  });
  return {
    capacity,
    allocatable: capacity,
    conditions: [
      condition('MemoryPressure', 'False', 'KubeletHasSufficientMemory', 'kubelet has sufficient memory available', readySince),
      condition('DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure', readySince),
      condition('PIDPressure', 'False', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available', readySince),
      condition('Ready', 'True', 'KubeletReady', 'kubelet is posting ready status', readySince),
    ],
    addresses: [{ type: 'InternalIP', address: hostIP }, { type: 'Hostname', address: name }],
    daemonEndpoints: { kubeletEndpoint: { Port: kubeletPort } },
    nodeInfo: {
      machineID: name,
      systemUUID: name,
      bootID: name,
      kernelVersion: release(),
      osImage: 'podvirt testbed',
      containerRuntimeVersion: 'testbed://1.0.0',
      kubeletVersion: 'v1.32.0-podvirt-testbed',
      kubeProxyVersion: '',
      operatingSystem: 'linux',
      architecture: 'amd64',
    },
  };
}
