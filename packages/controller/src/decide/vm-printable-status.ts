// `status.printableStatus` of a VirtualMachine, the STATUS column of `kubectl get vm`, as KubeVirt
// derives it: the first of these that holds wins, in this order (a VM can be Running and
// Migrating at once; Migrating is printed). Provisioning (a DataVolume being imported) never
// holds here: podvirt has no DataVolumes.

import { isFinalPhase, type RunStrategy, type VirtualMachine, type VirtualMachineInstance, type VmiCondition, type VmPrintableStatus } from '@podvirt/api';

export interface PendingWork {
  /** A VMI was created and has not reached the cache yet. */
  readonly startPending: boolean;
  /** The VMI was asked to go (deleted) in this sync. */
  readonly stopPending: boolean;
}

function condition(vmi: VirtualMachineInstance | undefined, type: string): VmiCondition | undefined {
  return vmi?.status?.conditions?.find((c) => c.type === type);
}

function hasCondition(vmi: VirtualMachineInstance | undefined, type: string, status: string, reason?: string): boolean {
  const c = condition(vmi, type);
  return c !== undefined && c.status === status && (reason === undefined || c.reason === reason);
}

function migrating(vmi: VirtualMachineInstance): boolean {
  const state = vmi.status?.migrationState;
  return state?.startTimestamp !== undefined && state.endTimestamp === undefined && state.completed !== true && state.failed !== true;
}

const RESTARTING: ReadonlySet<RunStrategy> = new Set(['Always', 'RerunOnFailure', 'Once']);

type Check = readonly [VmPrintableStatus, (vm: VirtualMachine, vmi: VirtualMachineInstance | undefined, strategy: RunStrategy, pending: PendingWork) => boolean];

const CHECKS: readonly Check[] = [
  ['Terminating', (vm) => vm.metadata.deletionTimestamp !== undefined],
  ['Stopping', (_vm, vmi, _s, p) => vmi !== undefined && !isFinalPhase(vmi.status?.phase) && (vmi.metadata.deletionTimestamp !== undefined || p.stopPending)],
  ['Migrating', (_vm, vmi) => vmi !== undefined && migrating(vmi)],
  ['Paused', (_vm, vmi) => vmi?.status?.phase === 'Running' && hasCondition(vmi, 'Paused', 'True')],
  ['Running', (_vm, vmi) => vmi?.status?.phase === 'Running' && !hasCondition(vmi, 'Paused', 'True')],
  ['ErrorPvcNotFound', (_vm, vmi) => hasCondition(vmi, 'Synchronized', 'False', 'FailedPvcNotFound')],
  ['ErrorUnschedulable', (_vm, vmi) => hasCondition(vmi, 'PodScheduled', 'False', 'Unschedulable')],
  ['ErrImagePull', (_vm, vmi) => hasCondition(vmi, 'Synchronized', 'False', 'ErrImagePull')],
  ['ImagePullBackOff', (_vm, vmi) => hasCondition(vmi, 'Synchronized', 'False', 'ImagePullBackOff')],
  ['Starting', (_vm, vmi, _s, p) => (vmi === undefined ? p.startPending : ['', 'Pending', 'Scheduling', 'Scheduled'].includes(vmi.status?.phase ?? ''))],
  [
    'CrashLoopBackOff',
    (vm, vmi, strategy, p) =>
      (vmi === undefined || isFinalPhase(vmi.status?.phase)) && !p.startPending && (vm.status?.startFailure?.consecutiveFailCount ?? 0) > 0 && RESTARTING.has(strategy),
  ],
  ['Stopped', (_vm, vmi, _s, p) => (vmi === undefined ? !p.startPending : isFinalPhase(vmi.status?.phase))],
];

export function printableStatus(vm: VirtualMachine, vmi: VirtualMachineInstance | undefined, strategy: RunStrategy, pending: PendingWork): VmPrintableStatus {
  for (const [status, holds] of CHECKS) if (holds(vm, vmi, strategy, pending)) return status;
  return 'Unknown';
}
