// VmiApi over the real API server: list and status writes through CustomObjectsApi, watches
// through client-node's Watch (a streaming GET), errors through the one kube error table.

import { CustomObjectsApi, Watch, type KubeConfig } from '@kubernetes/client-node';
import { VMI_GROUP, VMI_PLURAL, VMI_VERSION, type VirtualMachineInstance } from '@podvirt/api';
import { HandlerError, isHandlerError } from '../handler-error.js';
import { fromKubeError } from './kube-error.js';
import type { VmiApi, VmiList, VmiWatchEvent, WatchEventType } from './vmi-api.js';

// The server ends a watch after this long and the informer resumes from the last version; a
// bounded watch also notices a silently dead connection.
const WATCH_TIMEOUT_SECONDS = 300;
const WATCH_TYPES = new Set<string>(['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK']);

export class KubeVmiApi implements VmiApi {
  readonly #kc: KubeConfig;
  readonly #custom: CustomObjectsApi;

  constructor(kc: KubeConfig) {
    this.#kc = kc;
    this.#custom = kc.makeApiClient(CustomObjectsApi);
  }

  async list(labelSelector: string, signal: AbortSignal): Promise<VmiList> {
    signal.throwIfAborted();
    try {
      const res = (await this.#custom.listClusterCustomObject({ group: VMI_GROUP, version: VMI_VERSION, plural: VMI_PLURAL, labelSelector })) as {
        items?: VirtualMachineInstance[];
        metadata?: { resourceVersion?: string };
      };
      return { items: res.items ?? [], resourceVersion: res.metadata?.resourceVersion ?? '' };
    } catch (err) {
      throw fromKubeError(err, 'list VMIs');
    }
  }

  watch(labelSelector: string, resourceVersion: string, onEvent: (event: VmiWatchEvent) => void, signal: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let controller: AbortController | undefined;
      let settled = false;
      const finish = (err?: unknown): void => {
        if (settled) return;
        settled = true;
        signal.removeEventListener('abort', onAbort);
        controller?.abort();
        if (err === undefined || err === null) resolve();
        else reject(fromKubeError(err, 'watch VMIs'));
      };
      const onAbort = (): void => finish();
      if (signal.aborted) return resolve();
      signal.addEventListener('abort', onAbort, { once: true });
      const query = { labelSelector, resourceVersion, allowWatchBookmarks: true, timeoutSeconds: WATCH_TIMEOUT_SECONDS };
      new Watch(this.#kc)
        .watch(`/apis/${VMI_GROUP}/${VMI_VERSION}/${VMI_PLURAL}`, query, (type: string, object: unknown) => {
          if (type === 'ERROR') {
            const status = object as { code?: number; message?: string };
            finish(new HandlerError(status.code === 410 ? 'HANDLER_ERR_WATCH_EXPIRED' : 'HANDLER_ERR_KUBE', `watch VMIs: ${status.message ?? 'error'}`));
          } else if (WATCH_TYPES.has(type) && !settled) {
            onEvent({ type: type as WatchEventType, object: object as VirtualMachineInstance });
          }
        }, (err: unknown) => finish(err))
        .then((c) => {
          controller = c;
          if (settled) c.abort();
        }, finish);
    });
  }

  async get(namespace: string, name: string, signal: AbortSignal): Promise<VirtualMachineInstance | undefined> {
    signal.throwIfAborted();
    try {
      return (await this.#custom.getNamespacedCustomObject({ group: VMI_GROUP, version: VMI_VERSION, plural: VMI_PLURAL, namespace, name })) as VirtualMachineInstance;
    } catch (err) {
      const e = fromKubeError(err, `get VMI ${namespace}/${name}`);
      if (isHandlerError(e, 'HANDLER_ERR_KUBE_NOT_FOUND')) return undefined;
      throw e;
    }
  }

  async updateStatus(vmi: VirtualMachineInstance, signal: AbortSignal): Promise<VirtualMachineInstance> {
    signal.throwIfAborted();
    const namespace = vmi.metadata.namespace ?? '';
    const name = vmi.metadata.name ?? '';
    try {
      return (await this.#custom.replaceNamespacedCustomObjectStatus({
        group: VMI_GROUP, version: VMI_VERSION, plural: VMI_PLURAL, namespace, name, body: vmi,
      })) as VirtualMachineInstance;
    } catch (err) {
      throw fromKubeError(err, `update status of VMI ${namespace}/${name}`);
    }
  }
}
