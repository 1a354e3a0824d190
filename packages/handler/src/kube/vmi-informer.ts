// The cache of the VMIs on this node: kube-runtime's informer over the handler's VmiApi, with the
// node's label selector. A 410 from the API surfaces as HANDLER_ERR_WATCH_EXPIRED (see
// kube-error.ts), which is what makes the informer relist.

import type { VirtualMachineInstance } from '@podvirt/api';
import { Informer, type InformerEventType } from '@podvirt/kube-runtime';
import type { Logger } from 'pino';
import { isHandlerError } from '../handler-error.js';
import { objectKey } from '@podvirt/kube-runtime';
import type { VmiApi } from './vmi-api.js';

export type { InformerEventType };

export interface VmiInformerOptions {
  readonly api: VmiApi;
  readonly labelSelector: string;
  readonly resyncPeriodMs: number;
  readonly log: Logger;
  /** Called for every change; for DELETED with the last known object. */
  readonly onEvent: (type: InformerEventType, vmi: VirtualMachineInstance) => void;
  /** First retry delay after a failed list or watch; doubles up to `maxRetryMs`. */
  readonly retryMs?: number;
  readonly maxRetryMs?: number;
}

export class VmiInformer extends Informer<VirtualMachineInstance> {
  constructor(o: VmiInformerOptions) {
    super({
      source: {
        list: (signal) => o.api.list(o.labelSelector, signal),
        watch: (resourceVersion, onEvent, signal) => o.api.watch(o.labelSelector, resourceVersion, onEvent, signal),
      },
      onEvent: o.onEvent,
      log: o.log,
      resyncPeriodMs: o.resyncPeriodMs,
      key: objectKey,
      isExpired: (err) => isHandlerError(err, 'HANDLER_ERR_WATCH_EXPIRED'),
      ...(o.retryMs === undefined ? {} : { retryMs: o.retryMs }),
      ...(o.maxRetryMs === undefined ? {} : { maxRetryMs: o.maxRetryMs }),
    });
  }
}
