import type { DefaultedVmi } from '@podvirt/api';

/**
 * The privileged half of the pod network, done before the launcher's Sync (pod-network-wiring.ts),
 * as the reconcile and a migration's target side call it.
 */
export interface PodNetworkPhase {
  /** `launcherSocket` names the pod when two pods of one VMI run here (a migration's source and target). */
  ensure(vmi: DefaultedVmi, signal?: AbortSignal, launcherSocket?: string): Promise<void>;
  forget(uid: string): void;
}
