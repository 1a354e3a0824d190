// The small slice of the Kubernetes API the handler needs for VMIs, as a role interface: the
// real implementation speaks HTTP through the thin client of @podvirt/kube-runtime, tests use an
// in-memory one.

import type { VirtualMachineInstance } from '@podvirt/api';

export interface VmiList {
  readonly items: VirtualMachineInstance[];
  readonly resourceVersion: string;
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK';

export interface VmiWatchEvent {
  readonly type: WatchEventType;
  readonly object: VirtualMachineInstance;
}

export interface VmiApi {
  /** Every VMI matching `labelSelector`, across namespaces. */
  list(labelSelector: string, signal: AbortSignal): Promise<VmiList>;
  /**
   * Streams changes after `resourceVersion` into `onEvent` until the server ends the watch
   * (resolves) or `signal` aborts (resolves). Rejects with HANDLER_ERR_WATCH_EXPIRED when the
   * version is too old, so the informer relists.
   */
  watch(
    labelSelector: string,
    resourceVersion: string,
    onEvent: (event: VmiWatchEvent) => void,
    signal: AbortSignal,
  ): Promise<void>;
  /** The current object, or undefined when it no longer exists. */
  get(namespace: string, name: string, signal: AbortSignal): Promise<VirtualMachineInstance | undefined>;
  /**
   * Replaces the status subresource; `vmi.metadata.resourceVersion` guards it, a stale one
   * rejects with HANDLER_ERR_CONFLICT.
   */
  updateStatus(vmi: VirtualMachineInstance, signal: AbortSignal): Promise<VirtualMachineInstance>;
}
