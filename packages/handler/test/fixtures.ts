// Builders for the table tests: a VMI on node `node01` and domains in KubeVirt's vocabulary.

import { NODE_NAME_LABEL, type DefaultedVmi, type VirtualMachineInstance, type VmiPhase } from '@podvirt/api';
import { cmd } from '@podvirt/proto';
import { pino, type Logger } from 'pino';
import { DefaultedVmis } from '../src/kube/defaulted-vmis.js';

export const NODE = 'node01';
export const T0 = Date.parse('2025-01-01T00:00:00Z');

export interface VmiShape {
  phase?: VmiPhase;
  grace?: number;
  deleting?: boolean;
  acpi?: boolean;
  uid?: string;
  name?: string;
  podUid?: string;
  memory?: string;
  scheduledAtMs?: number;
  /** Labelled for this node, but status.nodeName not yet written by the controller. */
  nodeNameUnset?: boolean;
}

export function makeVmi(shape: VmiShape = {}): VirtualMachineInstance {
  const name = shape.name ?? 'vm1';
  const uid = shape.uid ?? 'uid-1';
  return {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachineInstance',
    metadata: {
      name,
      namespace: 'default',
      uid,
      resourceVersion: '1',
      labels: { [NODE_NAME_LABEL]: NODE },
      ...(shape.deleting === true ? { deletionTimestamp: '2025-01-01T00:00:00Z' } : {}),
    },
    spec: {
      domain: {
        devices: { disks: [{ name: 'root', disk: { bus: 'virtio' } }] },
        resources: { requests: { memory: shape.memory ?? '128Mi' } },
        ...(shape.acpi === false ? { features: { acpi: { enabled: false } } } : {}),
      },
      volumes: [{ name: 'root', containerDisk: { image: 'guest:1' } }],
      ...(shape.grace === undefined ? {} : { terminationGracePeriodSeconds: shape.grace }),
    },
    status: {
      phase: shape.phase ?? 'Scheduled',
      ...(shape.nodeNameUnset === true ? {} : { nodeName: NODE }),
      activePods: { [shape.podUid ?? 'p1']: NODE },
      ...(shape.scheduledAtMs === undefined
        ? {}
        : { phaseTransitionTimestamps: [{ phase: 'Scheduled', phaseTransitionTimestamp: new Date(shape.scheduledAtMs).toISOString() }] }),
    },
  };
}

export function makeDomain(state: string, reason: string, extra: Partial<cmd.Domain> = {}): cmd.Domain {
  return cmd.Domain.fromPartial({ name: 'default_vm1', vmiUid: 'uid-1', namespace: 'default', vmiName: 'vm1', state, reason, ...extra });
}

export function graceMark(startedAtMs: number, gracePeriodSeconds: number): cmd.GracefulShutdown {
  return { started: true, startedAtMs, gracePeriodSeconds, deadlineMs: startedAtMs + gracePeriodSeconds * 1000 };
}

export function quietLog(): Logger {
  return pino({ level: 'silent' });
}

/** The VMI's spec as the reconciler decodes it for decide() and the status (undefined: gone or invalid). */
export function defaultedOf(vmi: VirtualMachineInstance | undefined): DefaultedVmi | undefined {
  return new DefaultedVmis().get(vmi);
}
