// Condition types and reasons of `status.conditions`, spelled as KubeVirt spells them so that
// tools written for KubeVirt (`kubectl wait --for=condition=Ready`, dashboards) keep working.

export const VmiConditionType = {
  Ready: 'Ready',
  Synchronized: 'Synchronized',
  Paused: 'Paused',
  AgentConnected: 'AgentConnected',
  AgentVersionNotSupported: 'AgentVersionNotSupported',
  AccessCredentialsSynchronized: 'AccessCredentialsSynchronized',
  LiveMigratable: 'LiveMigratable',
  StorageLiveMigratable: 'StorageLiveMigratable',
  Provisioning: 'Provisioning',
} as const;

export type VmiConditionType = (typeof VmiConditionType)[keyof typeof VmiConditionType];

export const ConditionStatus = {
  True: 'True',
  False: 'False',
  Unknown: 'Unknown',
} as const;

export type ConditionStatus = (typeof ConditionStatus)[keyof typeof ConditionStatus];

export const VmiConditionReason = {
  /** Paused: the user asked for it (domain paused with reason User). */
  PausedByUser: 'PausedByUser',
  /** Paused: qemu stopped the guest on a disk I/O error. */
  PausedIOError: 'PausedIOError',
  /** Paused: a migration monitor paused the source to let the migration converge. */
  PausedByMigrationMonitor: 'PausedByMigrationMonitor',
  /** Ready=False: the launcher pod does not exist (yet or any more). */
  PodNotExists: 'PodNotExists',
  /** Ready=False: the launcher pod is being deleted. */
  PodTerminating: 'PodTerminating',
  /** Ready=False: the pod runs but the guest does not. */
  GuestNotRunning: 'GuestNotRunning',
  /** Ready=False: the pod reports no Ready condition. */
  PodConditionMissing: 'PodConditionMissing',
  /** Ready=False: the handler of the VMI's node stopped its heartbeat. */
  NodeUnresponsive: 'NodeUnresponsive',
  /** Synchronized=False: KubeVirt writes this sentence as the reason, verbatim. */
  SynchronizingFailed: 'Synchronizing with the Domain failed.',
  /** LiveMigratable=False reasons podvirt can report. */
  DisksNotLiveMigratable: 'DisksNotLiveMigratable',
  InterfaceNotLiveMigratable: 'InterfaceNotLiveMigratable',
  HotplugNotLiveMigratable: 'HotplugNotLiveMigratable',
} as const;

export type VmiConditionReason = (typeof VmiConditionReason)[keyof typeof VmiConditionReason];

/**
 * Why a VMI cannot move live, read from its LiveMigratable condition (the handler sets it);
 * undefined when it can. The one reading for the migration controller, the evacuation and the
 * eviction webhook.
 */
export function notLiveMigratableReason(vmi: { readonly status?: { readonly conditions?: readonly { readonly type: string; readonly status: string; readonly reason?: string; readonly message?: string }[] } }): string | undefined {
  const c = vmi.status?.conditions?.find((x) => x.type === VmiConditionType.LiveMigratable);
  if (c?.status === ConditionStatus.True) return undefined;
  if (c === undefined) return 'it has no LiveMigratable condition yet';
  return [c.reason !== undefined && c.reason !== '' ? c.reason : 'LiveMigratable=False', c.message].filter((x) => x !== undefined && x !== '').join(': ');
}
