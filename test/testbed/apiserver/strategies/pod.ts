import { jsonClone, jsonEqual, podQosClass, QuantityError, type PodQosShape } from '@podvirt/api';
import { ApiError, type StatusCause } from '../errors.js';
import { ageOf } from '../human-duration.js';
import { arr, isObject, meta, obj, str, type JsonObject, type JsonValue } from '../json.js';
import { validateObjectMeta } from '../object-meta.js';
import type { Strategy } from '../resource-type.js';
import { validatePodSpec } from './pod-spec-validation.js';

const immutableMessage =
  'pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)';

export const podStrategy: Strategy = {
  defaults(pod) {
    const spec = obj(pod['spec']);
    if (spec === undefined) return;
    spec['restartPolicy'] ??= 'Always';
    spec['terminationGracePeriodSeconds'] ??= 30;
    spec['dnsPolicy'] ??= 'ClusterFirst';
    spec['schedulerName'] ??= 'default-scheduler';
    spec['securityContext'] ??= {};
    spec['enableServiceLinks'] ??= true;
    for (const c of [...arr(spec['containers']), ...arr(spec['initContainers'])]) {
      if (!isObject(c)) continue;
      c['terminationMessagePath'] ??= '/dev/termination-log';
      c['terminationMessagePolicy'] ??= 'File';
      const image = str(c['image']) ?? '';
      c['imagePullPolicy'] ??= image.endsWith(':latest') || !/:[^/]+$/.test(image) ? 'Always' : 'IfNotPresent';
      c['resources'] ??= {};
    }
  },
  prepareForCreate(pod) {
    // The kubelet's rule, init containers included (a real API server sets it the same way).
    // A quantity that does not parse is refused as kube-apiserver refuses it when it decodes the pod.
    let qosClass: string;
    try {
      const spec = obj(pod['spec']);
      // Validation comes after: a spec of the wrong shape is named there, not here.
      qosClass = podQosClass({ containers: arr(spec?.['containers']).filter(isObject), initContainers: arr(spec?.['initContainers']).filter(isObject) } as PodQosShape);
    } catch (err) {
      if (err instanceof QuantityError) throw ApiError.badRequest(`Pod in version "v1" cannot be handled as a Pod: ${err.message}`);
      throw err;
    }
    pod['status'] = { phase: 'Pending', qosClass };
  },
  validate(pod, old) {
    const causes: StatusCause[] = [...validateObjectMeta(pod, 'subdomain'), ...validatePodSpec(obj(pod['spec']))];
    if (old !== undefined && !jsonEqual(mutableView(pod['spec']), mutableView(old['spec']))) {
      causes.push({ reason: 'FieldValueForbidden', message: `Forbidden: ${immutableMessage}`, field: 'spec' });
    }
    return causes;
  },
  fields(pod) {
    const spec = obj(pod['spec']) ?? {};
    const status = obj(pod['status']) ?? {};
    return {
      'spec.nodeName': str(spec['nodeName']) ?? '',
      'spec.restartPolicy': str(spec['restartPolicy']) ?? '',
      'spec.schedulerName': str(spec['schedulerName']) ?? '',
      'spec.serviceAccountName': str(spec['serviceAccountName']) ?? '',
      'spec.hostNetwork': String(spec['hostNetwork'] === true),
      'status.phase': str(status['phase']) ?? '',
      'status.podIP': str(status['podIP']) ?? '',
      'status.nominatedNodeName': str(status['nominatedNodeName']) ?? '',
    };
  },
  deleteGrace(pod, requested) {
    const spec = obj(pod['spec']) ?? {};
    const phase = str(obj(pod['status'])?.['phase']);
    // An unbound pod has no kubelet to confirm its end, and a finished one has nothing to stop.
    if (str(spec['nodeName']) === undefined || phase === 'Succeeded' || phase === 'Failed') return 0;
    if (requested !== undefined) return requested;
    const fromSpec = spec['terminationGracePeriodSeconds'];
    return typeof fromSpec === 'number' ? fromSpec : 30;
  },
  table: {
    columns: [
      col('Name', 'string', 'name', 0),
      col('Ready', 'string', '', 0),
      col('Status', 'string', '', 0),
      col('Restarts', 'string', '', 0),
      col('Age', 'string', '', 0),
      col('IP', 'string', '', 1),
      col('Node', 'string', '', 1),
      col('Nominated Node', 'string', '', 1),
      col('Readiness Gates', 'string', '', 1),
    ],
    cells(pod, now) {
      const spec = obj(pod['spec']) ?? {};
      const status = obj(pod['status']) ?? {};
      const statuses = arr(status['containerStatuses']).filter(isObject);
      const ready = statuses.filter((s) => s['ready'] === true).length;
      const restarts = statuses.reduce((n, s) => n + (typeof s['restartCount'] === 'number' ? s['restartCount'] : 0), 0);
      const gates = arr(spec['readinessGates']).filter(isObject);
      const conditions = arr(status['conditions']).filter(isObject);
      const gatesTrue = gates.filter((g) => conditions.some((c) => c['type'] === g['conditionType'] && c['status'] === 'True'));
      return [
        str(meta(pod)['name']) ?? '',
        `${ready}/${arr(spec['containers']).length}`,
        podStatusText(pod, statuses),
        restarts,
        ageOf(meta(pod)['creationTimestamp'], now),
        str(status['podIP']) ?? '<none>',
        str(spec['nodeName']) ?? '<none>',
        str(status['nominatedNodeName']) ?? '<none>',
        gates.length === 0 ? '<none>' : `${gatesTrue.length}/${gates.length}`,
      ];
    },
  },
};

function col(name: string, type: string, format: string, priority: number): Strategy['table']['columns'][number] {
  return { name, type, format, description: name, priority };
}

/** The STATUS column: the most telling container state, as kubectl's pod printer picks it. */
function podStatusText(pod: JsonObject, statuses: JsonObject[]): string {
  const status = obj(pod['status']) ?? {};
  let reason = str(status['reason']) ?? str(status['phase']) ?? 'Unknown';
  let hasRunning = false;
  for (const s of [...statuses].reverse()) {
    const state = obj(s['state']) ?? {};
    const waiting = obj(state['waiting']);
    const terminated = obj(state['terminated']);
    if (waiting !== undefined && str(waiting['reason']) !== undefined) reason = str(waiting['reason']) ?? reason;
    else if (terminated !== undefined) {
      reason = str(terminated['reason']) ?? (typeof terminated['signal'] === 'number' ? `Signal:${terminated['signal']}` : `ExitCode:${String(terminated['exitCode'])}`);
    } else if (state['running'] !== undefined && s['ready'] === true) hasRunning = true;
  }
  if (reason === 'Completed' && hasRunning) reason = 'Running';
  if (meta(pod)['deletionTimestamp'] !== undefined) reason = 'Terminating';
  return reason;
}

/** The spec with the fields an update may change blanked out. */
function mutableView(spec: JsonValue | undefined): JsonValue {
  if (!isObject(spec)) return null;
  const view = jsonClone(spec);
  delete view['activeDeadlineSeconds'];
  delete view['tolerations'];
  delete view['terminationGracePeriodSeconds'];
  for (const field of ['containers', 'initContainers']) {
    for (const c of arr(view[field])) if (isObject(c)) delete c['image'];
  }
  return view;
}

