// kube-controller-manager's disruption controller, for the testbed: each PodDisruptionBudget's
// status from the pods its selector matches (an empty selector matches every pod of the
// namespace, none matches nothing): expectedPods, desiredHealthy (minAvailable as an integer, or
// minAvailable/maxUnavailable scaled on the replicas of the pods' controllers), currentHealthy
// (Ready pods not being deleted and not evicted in the last 2 minutes), disruptionsAllowed,
// disruptedPods, observedGeneration and the DisruptionAllowed condition. A pod in disruptedPods
// that is still there 2 minutes after its eviction counts again, as there.
import { jsonClone, jsonEqual, kubeTime } from '@podvirt/api';
import type { V1LabelSelector } from '@kubernetes/client-node';
import { ApiError } from './errors.js';
import { arr, isObject, meta, obj, str, type JsonObject, type JsonValue } from './json.js';
import type { ObjectService } from './object-service.js';
import type { ResourceType } from './resource-type.js';
import type { StoreEvent } from './store.js';
import { selectorMatches } from '../scheduler/pod-anti-affinity.js';

export const DISRUPTION_DELETION_TIMEOUT_MS = 2 * 60 * 1000;

/** A pod is healthy for a budget when its Ready condition is True (podutil.IsPodReady). */
export function podReady(pod: JsonObject): boolean {
  return arr(obj(pod['status'])?.['conditions']).some((c) => isObject(c) && c['type'] === 'Ready' && c['status'] === 'True');
}

/** The pods of `namespace` that `pdb` selects (metav1.LabelSelectorAsSelector: nil matches nothing). */
export function podsOfBudget(pods: readonly JsonObject[], pdb: JsonObject): JsonObject[] {
  const selector = obj(obj(pdb['spec'])?.['selector']) as V1LabelSelector | undefined;
  return pods.filter((p) => selectorMatches(selector, (obj(meta(p)['labels']) ?? {}) as Record<string, string>));
}

export class DisruptionController {
  readonly #pending = new Set<string>();
  #scheduled: NodeJS.Immediate | undefined;
  readonly #rechecks = new Map<string, NodeJS.Timeout>();
  #unsubscribe: (() => void) | undefined;

  constructor(
    private readonly service: ObjectService,
    private readonly pdbType: ResourceType,
  ) {}

  start(): void {
    this.#unsubscribe = this.service.store.subscribe((e) => this.#onEvent(e));
  }

  close(): void {
    this.#unsubscribe?.();
    if (this.#scheduled !== undefined) clearImmediate(this.#scheduled);
    for (const t of this.#rechecks.values()) clearTimeout(t);
    this.#rechecks.clear();
  }

  #onEvent(e: StoreEvent): void {
    if (e.storageKey !== 'pods' && e.storageKey !== this.pdbType.storageKey && e.storageKey !== 'namespaces') return;
    if (e.namespace === '') return;
    this.#pending.add(e.namespace);
    this.#scheduled ??= setImmediate(() => {
      this.#scheduled = undefined;
      const namespaces = [...this.#pending];
      this.#pending.clear();
      for (const ns of namespaces) this.#syncNamespace(ns);
    });
  }

  #syncNamespace(namespace: string): void {
    const pods = this.service.store.list('pods', namespace);
    for (const pdb of this.service.store.list(this.pdbType.storageKey, namespace)) {
      try {
        this.#sync(pdb, pods);
      } catch (err) {
        // A concurrent write (an eviction's decrement) or a deleted budget: the next event syncs again.
        if (!(err instanceof ApiError && (err.reason === 'Conflict' || err.reason === 'NotFound'))) throw err;
      }
    }
  }

  #sync(pdb: JsonObject, allPods: readonly JsonObject[]): void {
    const m = meta(pdb);
    if (m['deletionTimestamp'] !== undefined) return;
    const pods = podsOfBudget(allPods, pdb);
    const now = this.service.now();
    const status = obj(pdb['status']) ?? {};
    const generation = typeof m['generation'] === 'number' ? m['generation'] : 0;
    let next: JsonObject;
    try {
      const { expected, desired } = this.#expected(pdb, pods);
      const disrupted = this.#disruptedPods(pdb, pods, now);
      const healthy = pods.filter((p) => meta(p)['deletionTimestamp'] === undefined && !((str(meta(p)['name']) ?? '') in disrupted) && podReady(p)).length;
      const allowed = expected <= 0 || healthy - desired <= 0 ? 0 : healthy - desired;
      next = { ...status, currentHealthy: healthy, desiredHealthy: desired, expectedPods: expected, disruptionsAllowed: allowed, observedGeneration: generation };
      if (Object.keys(disrupted).length > 0) next['disruptedPods'] = disrupted;
      else delete next['disruptedPods'];
      next['conditions'] = withCondition(status, allowed > 0 ? 'True' : 'False', allowed > 0 ? 'SufficientPods' : 'InsufficientPods', '', generation, now);
    } catch (err) {
      if (!(err instanceof BudgetError)) throw err;
      // failSafe: no disruption while the budget cannot be computed.
      next = { ...status, disruptionsAllowed: 0 };
      next['conditions'] = withCondition(status, 'False', 'SyncFailed', err.message, typeof status['observedGeneration'] === 'number' ? status['observedGeneration'] : 0, now);
    }
    if (jsonEqual(next, status)) return;
    const updated = jsonClone(pdb);
    updated['status'] = next;
    this.service.update(this.pdbType, str(m['namespace']) ?? '', str(m['name']) ?? '', updated, 'status');
  }

  #expected(pdb: JsonObject, pods: readonly JsonObject[]): { expected: number; desired: number } {
    const spec = obj(pdb['spec']) ?? {};
    const maxUnavailable = spec['maxUnavailable'];
    const minAvailable = spec['minAvailable'];
    if (maxUnavailable !== undefined && maxUnavailable !== null) {
      const expected = this.#scale(pods);
      return { expected, desired: Math.max(0, expected - scaled(maxUnavailable, expected)) };
    }
    if (typeof minAvailable === 'number') return { expected: pods.length, desired: minAvailable };
    if (typeof minAvailable === 'string') {
      const expected = this.#scale(pods);
      return { expected, desired: scaled(minAvailable, expected) };
    }
    return { expected: 0, desired: 0 };
  }

  /** The summed replicas of the pods' controllers; pods without one are left out (UnmanagedPods). */
  #scale(pods: readonly JsonObject[]): number {
    const scales = new Map<string, number>();
    for (const pod of pods) {
      const ref = arr(meta(pod)['ownerReferences']).find((r) => isObject(r) && r['controller'] === true) as JsonObject | undefined;
      if (ref === undefined) continue;
      const uid = str(ref['uid']) ?? '';
      if (scales.has(uid)) continue;
      const [group = ''] = (str(ref['apiVersion']) ?? '').includes('/') ? (str(ref['apiVersion']) ?? '').split('/') : [''];
      const rt = this.service.registry.all().find((t) => t.group === group && t.kind === ref['kind']);
      const owner = rt === undefined ? undefined : this.service.store.get(rt.storageKey, str(meta(pod)['namespace']) ?? '', str(ref['name']) ?? '');
      const replicas = owner === undefined ? undefined : obj(owner['spec'])?.['replicas'];
      if (typeof replicas !== 'number' || rt?.kind === 'DaemonSet') throw new BudgetError(`found no controllers for pod "${str(meta(pod)['name']) ?? ''}"`);
      scales.set(uid, replicas);
    }
    return [...scales.values()].reduce((a, b) => a + b, 0);
  }

  #disruptedPods(pdb: JsonObject, pods: readonly JsonObject[], now: Date): JsonObject {
    const recorded = obj(obj(pdb['status'])?.['disruptedPods']) ?? {};
    const result: JsonObject = {};
    let recheck: number | undefined;
    for (const pod of pods) {
      const name = str(meta(pod)['name']) ?? '';
      const at = str(recorded[name]);
      if (meta(pod)['deletionTimestamp'] !== undefined || at === undefined) continue;
      const expectedDeletion = Date.parse(at) + DISRUPTION_DELETION_TIMEOUT_MS;
      if (expectedDeletion < now.getTime()) continue;
      result[name] = at;
      recheck = Math.min(recheck ?? expectedDeletion, expectedDeletion);
    }
    const key = `${str(meta(pdb)['namespace']) ?? ''}/${str(meta(pdb)['name']) ?? ''}`;
    clearTimeout(this.#rechecks.get(key));
    this.#rechecks.delete(key);
    if (recheck !== undefined) {
      const ns = str(meta(pdb)['namespace']) ?? '';
      const timer = setTimeout(() => {
        this.#rechecks.delete(key);
        this.#syncNamespace(ns);
      }, recheck - now.getTime() + 1);
      timer.unref();
      this.#rechecks.set(key, timer);
    }
    return result;
  }
}

class BudgetError extends Error {
  override readonly name = 'BudgetError';
  readonly code = 'TESTBED_PDB_SYNC_FAILED';
}

/** intstr.GetScaledValueFromIntOrPercent, rounding up. */
function scaled(value: JsonValue, total: number): number {
  if (typeof value === 'number') return value;
  const percent = Number(String(value).replace(/%$/, ''));
  return Math.ceil((percent * total) / 100);
}

/** meta.SetStatusCondition of DisruptionAllowed: the transition time moves only when the status does. */
function withCondition(status: JsonObject, value: 'True' | 'False', reason: string, message: string, observedGeneration: number, now: Date): JsonValue[] {
  const others = arr(status['conditions']).filter((c) => !(isObject(c) && c['type'] === 'DisruptionAllowed'));
  const previous = arr(status['conditions']).find((c) => isObject(c) && c['type'] === 'DisruptionAllowed') as JsonObject | undefined;
  const lastTransitionTime = previous !== undefined && previous['status'] === value ? (previous['lastTransitionTime'] ?? kubeTime(now)) : kubeTime(now);
  return [...others, { type: 'DisruptionAllowed', status: value, reason, message, observedGeneration, lastTransitionTime }];
}
