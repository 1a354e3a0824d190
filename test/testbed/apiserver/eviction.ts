// The pods/eviction subresource (policy/v1 Eviction), as kube-apiserver's EvictionREST: a pod that
// is Pending, finished or already being deleted is deleted at once; otherwise the one
// PodDisruptionBudget that selects it (more than one is a 500) must allow a disruption: while its
// status is behind its generation or its disruptionsAllowed is 0 the answer is 429 TooManyRequests
// with Kubernetes' message and a DisruptionBudget cause, else the budget is decremented (the pod
// recorded in disruptedPods) and the pod gets the DisruptionTarget condition and is deleted with
// the Eviction's deleteOptions. An unready pod is let go without touching the budget when its
// unhealthyPodEvictionPolicy is AlwaysAllow, or (IfHealthyBudget) the budget is met.
import { jsonClone, kubeTime } from '@podvirt/api';
import { ApiError } from './errors.js';
import { arr, isObject, meta, obj, str, type JsonObject, type JsonValue } from './json.js';
import { type DeleteOptions, type ObjectDeleter, parseDeleteOptions } from './object-deleter.js';
import type { ObjectService } from './object-service.js';
import type { ResourceType } from './resource-type.js';
import { podReady, podsOfBudget } from './disruption-controller.js';

const SUCCESS: JsonObject = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 };

function tooManyRequests(message: string, retryAfterSeconds: number, cause: string): ApiError {
  const details: JsonObject = { causes: [{ reason: 'DisruptionBudget', message: cause }] };
  if (retryAfterSeconds > 0) details['retryAfterSeconds'] = retryAfterSeconds;
  return new ApiError(429, 'TooManyRequests', message, details);
}

/** Checks an Eviction body against the URL; returns its deleteOptions with the request's dry-run. */
export function evictionDeleteOptions(name: string, body: JsonValue | undefined, dryRun: boolean): { options: DeleteOptions; dryRun: boolean } {
  if (!isObject(body)) throw ApiError.badRequest('the body of the request must be a JSON object');
  if (body['kind'] !== undefined && body['kind'] !== 'Eviction') throw ApiError.badRequest(`not a Eviction object: ${String(body['kind'])}`);
  if ((str(meta(body)['name']) ?? '') !== name) throw ApiError.badRequest('name in URL does not match name in Eviction object');
  const given = obj(body['deleteOptions']);
  const bodyDryRun = arr(given?.['dryRun']).includes('All');
  return { options: parseDeleteOptions(given ?? {}, new URLSearchParams()), dryRun: dryRun || bodyDryRun };
}

export function evict(service: ObjectService, deleter: ObjectDeleter, pdbType: ResourceType, podType: ResourceType, namespace: string, name: string, options: DeleteOptions, dryRun: boolean): JsonObject {
  const pod = service.getStored(podType, namespace, name);
  const m = meta(pod);
  const phase = str(obj(pod['status'])?.['phase']);
  if (phase === 'Succeeded' || phase === 'Failed' || phase === 'Pending' || m['deletionTimestamp'] !== undefined) {
    const enforce = !(phase === 'Succeeded' || phase === 'Failed' || m['deletionTimestamp'] !== undefined);
    deletePod(service, deleter, podType, pod, enforce ? withResourceVersion(options, str(m['resourceVersion'])) : options, dryRun);
    return SUCCESS;
  }
  const budgets = podsOfBudgets(service, pdbType, namespace, pod);
  if (budgets.length > 1) {
    return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.', code: 500 };
  }
  const pdb = budgets[0];
  if (pdb === undefined) {
    deletePod(service, deleter, podType, pod, options, dryRun);
    return SUCCESS;
  }
  const spec = obj(pdb['spec']) ?? {};
  const status = obj(pdb['status']) ?? {};
  const pdbName = str(meta(pdb)['name']) ?? '';
  const num = (v: JsonValue | undefined): number => (typeof v === 'number' ? v : 0);
  if (!podReady(pod) && (spec['unhealthyPodEvictionPolicy'] === 'AlwaysAllow' || (num(status['currentHealthy']) >= num(status['desiredHealthy']) && num(status['desiredHealthy']) > 0))) {
    deletePod(service, deleter, podType, pod, withResourceVersion(options, str(m['resourceVersion'])), dryRun);
    return SUCCESS;
  }
  if (num(status['observedGeneration']) < num(meta(pdb)['generation'])) {
    throw tooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 10, `The disruption budget ${pdbName} is still being processed by the server.`);
  }
  const allowed = num(status['disruptionsAllowed']);
  if (allowed < 0) throw ApiError.forbidden({ group: 'policy', resource: 'poddisruptionbudget', name: pdbName }, 'pdb disruptions allowed is negative');
  if (allowed === 0) {
    throw tooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 0, `The disruption budget ${pdbName} needs ${num(status['desiredHealthy'])} healthy pods and has ${num(status['currentHealthy'])} currently`);
  }
  if (!dryRun) {
    const next = jsonClone(pdb);
    const nextStatus = obj(next['status']) ?? {};
    nextStatus['disruptionsAllowed'] = allowed - 1;
    nextStatus['disruptedPods'] = { ...(obj(nextStatus['disruptedPods']) ?? {}), [name]: kubeTime(service.now()) };
    if (allowed - 1 === 0) {
      const conditions = arr(nextStatus['conditions']).filter((c) => !(isObject(c) && c['type'] === 'DisruptionAllowed'));
      conditions.push({ type: 'DisruptionAllowed', status: 'False', reason: 'InsufficientPods', message: '', observedGeneration: num(nextStatus['observedGeneration']), lastTransitionTime: kubeTime(service.now()) });
      nextStatus['conditions'] = conditions;
    }
    next['status'] = nextStatus;
    service.update(pdbType, namespace, pdbName, next, 'status');
  }
  deletePod(service, deleter, podType, pod, options, dryRun);
  return SUCCESS;
}

function podsOfBudgets(service: ObjectService, pdbType: ResourceType, namespace: string, pod: JsonObject): JsonObject[] {
  return service.store.list(pdbType.storageKey, namespace).filter((pdb) => podsOfBudget([pod], pdb).length === 1);
}

function withResourceVersion(options: DeleteOptions, resourceVersion: string | undefined): DeleteOptions {
  if (options.preconditions?.resourceVersion !== undefined || resourceVersion === undefined) return options;
  return { ...options, preconditions: { ...options.preconditions, resourceVersion } };
}

/** addConditionAndDeletePod: DisruptionTarget=True on the pod, then its deletion. */
function deletePod(service: ObjectService, deleter: ObjectDeleter, podType: ResourceType, pod: JsonObject, options: DeleteOptions, dryRun: boolean): void {
  const m = meta(pod);
  const namespace = str(m['namespace']) ?? '';
  const name = str(m['name']) ?? '';
  let deleteOptions = options;
  if (!dryRun) {
    const latest = service.getStored(podType, namespace, name);
    const pre = options.preconditions;
    if (pre?.uid !== undefined && pre.uid !== meta(latest)['uid']) {
      throw ApiError.conflict({ group: '', resource: 'Pod', name }, `the UID in the precondition (${pre.uid}) does not match the UID in record (${String(meta(latest)['uid'])}). The object might have been deleted and then recreated`);
    }
    if (pre?.resourceVersion !== undefined && pre.resourceVersion !== meta(latest)['resourceVersion']) {
      throw ApiError.conflict({ group: '', resource: 'Pod', name }, `the ResourceVersion in the precondition (${pre.resourceVersion}) does not match the ResourceVersion in record (${String(meta(latest)['resourceVersion'])}). The object might have been modified`);
    }
    const next = jsonClone(latest);
    const status = obj(next['status']) ?? {};
    const conditions = arr(status['conditions']).filter((c) => !(isObject(c) && c['type'] === 'DisruptionTarget'));
    conditions.push({ type: 'DisruptionTarget', status: 'True', reason: 'EvictionByEvictionAPI', message: 'Eviction API: evicting', lastProbeTime: null, lastTransitionTime: kubeTime(service.now()) });
    status['conditions'] = conditions;
    next['status'] = status;
    const updated = service.update(podType, namespace, name, next, 'status');
    if (pre?.resourceVersion !== undefined) deleteOptions = { ...options, preconditions: { ...pre, resourceVersion: str(meta(updated)['resourceVersion']) ?? pre.resourceVersion } };
  }
  deleter.delete(podType, namespace, name, deleteOptions, { dryRun });
}
