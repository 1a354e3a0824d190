// An in-memory stand-in for the API server behind the handler's two role interfaces: VMIs with
// resourceVersions, label-selected list + watch with replay and 410, status writes guarded by
// resourceVersion (409), and core/v1 Events with merge-patched counts.

import type { VirtualMachineInstance } from '@podvirt/api';
import { HandlerError } from '../src/handler-error.js';
import { KubeApiError, type CoreEvent, type EventCountPatch, type EventSink } from '@podvirt/kube-runtime';
import type { VmiApi, VmiList, VmiWatchEvent } from '../src/kube/vmi-api.js';
import { objectKey } from '@podvirt/kube-runtime';

interface Watcher {
  readonly selector: string;
  readonly onEvent: (e: VmiWatchEvent) => void;
}

export class FakeKube implements VmiApi {
  readonly #objects = new Map<string, VirtualMachineInstance>();
  readonly #history: Array<{ rv: number; event: VmiWatchEvent }> = [];
  readonly #watchers = new Set<Watcher>();
  readonly #enders = new Set<() => void>();
  #rv = 100;
  #uid = 0;
  /** The next N status writes fail with 409 after someone else bumped the object. */
  conflicts = 0;
  /** The next watch is refused with 410 Gone. */
  expireNextWatch = false;
  statusWrites = 0;
  lists = 0;
  /** Status writes succeed, but their watch events wait for releaseStatusEchoes() (a lagging watch). */
  holdStatusEchoes = false;
  readonly #heldEchoes: Array<() => void> = [];

  create(vmi: VirtualMachineInstance): VirtualMachineInstance {
    const obj = structuredClone(vmi);
    obj.metadata.uid ??= `uid-${++this.#uid}`;
    this.#store('ADDED', obj);
    return obj;
  }

  /** Changes metadata or spec as a user or the controller would. */
  modify(key: string, mutate: (vmi: VirtualMachineInstance) => void): void {
    const obj = structuredClone(this.#must(key));
    mutate(obj);
    this.#store('MODIFIED', obj);
  }

  remove(key: string): void {
    const obj = this.#must(key);
    this.#objects.delete(key);
    this.#emit('DELETED', { ...obj, metadata: { ...obj.metadata, resourceVersion: String(++this.#rv) } });
  }

  current(key: string): VirtualMachineInstance | undefined {
    return this.#objects.get(key);
  }

  list(labelSelector: string, signal: AbortSignal): Promise<VmiList> {
    signal.throwIfAborted();
    this.lists++;
    const items = [...this.#objects.values()].filter((o) => matches(o, labelSelector)).map((o) => structuredClone(o));
    return Promise.resolve({ items, resourceVersion: String(this.#rv) });
  }

  watch(selector: string, resourceVersion: string, onEvent: (e: VmiWatchEvent) => void, signal: AbortSignal): Promise<void> {
    if (this.expireNextWatch) {
      this.expireNextWatch = false;
      return Promise.reject(new HandlerError('HANDLER_ERR_WATCH_EXPIRED', 'too old resource version'));
    }
    const from = Number(resourceVersion);
    for (const h of this.#history) if (h.rv > from && matches(h.event.object, selector)) onEvent(structuredClone(h.event));
    const watcher: Watcher = { selector, onEvent };
    this.#watchers.add(watcher);
    return new Promise((resolve) => {
      const stop = (): void => {
        this.#watchers.delete(watcher);
        this.#enders.delete(stop);
        signal.removeEventListener('abort', stop);
        resolve();
      };
      this.#enders.add(stop);
      if (signal.aborted) stop();
      else signal.addEventListener('abort', stop, { once: true });
    });
  }

  /** The server ends every open watch (as on its watch timeout). */
  dropWatches(): void {
    for (const end of [...this.#enders]) end();
  }

  /** Deletes without a watch event, as if the event had been compacted away. */
  removeQuietly(key: string): void {
    this.#objects.delete(key);
    this.#rv++;
  }

  get openWatches(): number {
    return this.#watchers.size;
  }

  /** How many single-object GETs reached this API. */
  gets = 0;

  get(namespace: string, name: string, signal: AbortSignal): Promise<VirtualMachineInstance | undefined> {
    this.gets++;
    signal.throwIfAborted();
    const obj = this.#objects.get(`${namespace}/${name}`);
    return Promise.resolve(obj === undefined ? undefined : structuredClone(obj));
  }

  updateStatus(vmi: VirtualMachineInstance, signal: AbortSignal): Promise<VirtualMachineInstance> {
    signal.throwIfAborted();
    const key = objectKey(vmi);
    const stored = this.#objects.get(key);
    if (stored === undefined) return Promise.reject(new HandlerError('HANDLER_ERR_KUBE_NOT_FOUND', `${key} not found`));
    if (this.conflicts > 0) {
      this.conflicts--;
      this.modify(key, (o) => (o.metadata.annotations = { ...o.metadata.annotations, touched: String(this.#rv) }));
      return Promise.reject(new HandlerError('HANDLER_ERR_CONFLICT', 'the object has been modified'));
    }
    if (stored.metadata.resourceVersion !== vmi.metadata.resourceVersion) {
      return Promise.reject(new HandlerError('HANDLER_ERR_CONFLICT', 'the object has been modified'));
    }
    this.statusWrites++;
    const next = structuredClone(stored);
    if (vmi.status === undefined) delete next.status;
    else next.status = structuredClone(vmi.status);
    this.#store('MODIFIED', next, this.holdStatusEchoes);
    return Promise.resolve(structuredClone(next));
  }

  /** Delivers the held status-write events, in order. */
  releaseStatusEchoes(): void {
    for (const emit of this.#heldEchoes.splice(0)) emit();
  }

  #must(key: string): VirtualMachineInstance {
    const obj = this.#objects.get(key);
    if (obj === undefined) throw new Error(`no VMI ${key}`);
    return obj;
  }

  #store(type: 'ADDED' | 'MODIFIED', obj: VirtualMachineInstance, hold = false): void {
    obj.metadata.resourceVersion = String(++this.#rv);
    const previous = this.#objects.get(objectKey(obj));
    this.#objects.set(objectKey(obj), obj);
    if (hold) this.#heldEchoes.push(() => this.#emit(type, obj, previous));
    else this.#emit(type, obj, previous);
  }

  /** As the API server's watch cache: an object entering a watch's selector is ADDED there, one leaving it DELETED. */
  #emit(type: VmiWatchEvent['type'], obj: VirtualMachineInstance, previous?: VirtualMachineInstance): void {
    const event = { type, object: structuredClone(obj) };
    this.#history.push({ rv: this.#rv, event });
    for (const w of this.#watchers) {
      const before = previous !== undefined && matches(previous, w.selector);
      if (matches(obj, w.selector)) w.onEvent(structuredClone(type === 'MODIFIED' && previous !== undefined && !before ? { ...event, type: 'ADDED' as const } : event));
      else if (before && type !== 'DELETED') w.onEvent({ type: 'DELETED', object: structuredClone(obj) });
    }
  }
}

export class FakeEvents implements EventSink {
  readonly events: CoreEvent[] = [];

  create(event: CoreEvent, signal: AbortSignal): Promise<CoreEvent> {
    signal.throwIfAborted();
    this.events.push(structuredClone(event));
    return Promise.resolve(structuredClone(event));
  }

  patchCount(namespace: string, name: string, patch: EventCountPatch, signal: AbortSignal): Promise<CoreEvent> {
    signal.throwIfAborted();
    const ev = this.events.find((e) => e.metadata.namespace === namespace && e.metadata.name === name);
    if (ev === undefined) return Promise.reject(new KubeApiError(404, 'NotFound', `events "${name}" not found`));
    Object.assign(ev, patch);
    return Promise.resolve(structuredClone(ev));
  }

  /** `reason` of every event, in order, with a `!` prefix for Warnings. */
  reasons(): string[] {
    return this.events.map((e) => (e.type === 'Warning' ? `!${e.reason}` : e.reason));
  }
}

/** Equality selectors only (`k=v,k2=v2`): all the handler uses. */
function matches(vmi: VirtualMachineInstance, selector: string): boolean {
  if (selector === '') return true;
  return selector.split(',').every((term) => {
    const [k = '', v = ''] = term.split('=');
    return vmi.metadata.labels?.[k] === v;
  });
}
