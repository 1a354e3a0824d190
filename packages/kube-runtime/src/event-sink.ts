// core/v1 Events as the recorder writes them: created once, then merge-patched with a new count.

import type { ObjectReference } from '@podvirt/api';

export interface CoreEvent {
  apiVersion: 'v1';
  kind: 'Event';
  metadata: { name: string; namespace: string; resourceVersion?: string };
  involvedObject: ObjectReference;
  reason: string;
  message: string;
  type: string;
  source: { component: string; host?: string };
  count: number;
  firstTimestamp: string;
  lastTimestamp: string;
  reportingComponent: string;
  reportingInstance: string;
}

export interface EventCountPatch {
  readonly count: number;
  readonly lastTimestamp: string;
  readonly message: string;
}

/** Where Events go: the API server (`KubeEventSink`) or a test's fake. */
export interface EventSink {
  create(event: CoreEvent, signal: AbortSignal): Promise<CoreEvent>;
  /** Merge-patches an existing Event; rejects with KubeApiError KUBE_ERR_NOT_FOUND when it is gone. */
  patchCount(namespace: string, name: string, patch: EventCountPatch, signal: AbortSignal): Promise<CoreEvent>;
}
