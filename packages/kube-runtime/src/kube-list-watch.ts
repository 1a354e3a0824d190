// A ListWatchSource over the API server: one collection path (`/api/v1/pods`,
// `/apis/kubevirt.io/v1/virtualmachineinstances` …) with an optional label selector.

import type { ListWatchSource, ObjectList } from './informer.js';
import type { KubeClient, KubeQuery, KubeWatchEvent } from './kube-client.js';

export interface KubeListWatchOptions {
  /** The collection, from the server root. */
  readonly path: string;
  readonly labelSelector?: string | undefined;
  readonly fieldSelector?: string | undefined;
}

// The server ends a watch after this long and the informer resumes from the last version; a
// bounded watch also notices a silently dead connection.
export const WATCH_TIMEOUT_SECONDS = 300;
// A watch that sent nothing for longer than the server's own bound has died without a FIN.
const WATCH_IDLE_MS = (WATCH_TIMEOUT_SECONDS + 30) * 1000;

export function kubeListWatch<T>(client: KubeClient, options: KubeListWatchOptions): ListWatchSource<T> {
  const selectors: KubeQuery = { labelSelector: options.labelSelector, fieldSelector: options.fieldSelector };
  return {
    async list(signal: AbortSignal): Promise<ObjectList<T>> {
      const res = await client.request<{ items?: T[]; metadata?: { resourceVersion?: string } }>({ path: options.path, query: selectors, signal });
      return { items: res.items ?? [], resourceVersion: res.metadata?.resourceVersion ?? '' };
    },
    async watch(resourceVersion: string, onEvent: (event: KubeWatchEvent<T>) => void, signal: AbortSignal): Promise<void> {
      const events = client.watch<T>({
        path: options.path,
        query: { ...selectors, resourceVersion, allowWatchBookmarks: true, timeoutSeconds: WATCH_TIMEOUT_SECONDS },
        idleTimeoutMs: WATCH_IDLE_MS,
        signal,
      });
      try {
        for await (const event of events) onEvent(event);
      } catch (err) {
        if (signal.aborted) return;
        throw err;
      }
    },
  };
}
