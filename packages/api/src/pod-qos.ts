// The QoS class a pod gets (status.qosClass), by the kubelet's rule, so the controller's pods can
// be checked against what the node will make of them. Init containers count: a native sidecar
// whose requests differ from its limits makes the whole pod Burstable. Pure.

import { parseQuantityValue } from './quantity.js';
import type { QosClass } from './types/status.js';

type Quantities = Readonly<Record<string, string | number>>;

/** The parts of a pod spec the class depends on (a V1PodSpec fits). */
export interface PodQosShape {
  readonly containers?: readonly { readonly resources?: { readonly requests?: Quantities; readonly limits?: Quantities } }[];
  readonly initContainers?: readonly { readonly resources?: { readonly requests?: Quantities; readonly limits?: Quantities } }[];
}

const QOS_RESOURCES = ['cpu', 'memory'] as const;

/**
 * Guaranteed when every container, init ones included, limits both cpu and memory and the
 * pod's summed requests equal its summed limits (a request left out defaults to its limit);
 * BestEffort when nothing requests or limits cpu or memory; Burstable otherwise.
 */
export function podQosClass(spec: PodQosShape): QosClass {
  const requests = new Map<string, bigint>();
  const limits = new Map<string, bigint>();
  let guaranteed = true;
  for (const container of [...(spec.containers ?? []), ...(spec.initContainers ?? [])]) {
    const own = container.resources ?? {};
    for (const name of QOS_RESOURCES) {
      const limit = own.limits?.[name] === undefined ? 0n : parseQuantityValue(own.limits[name]).nanos;
      const requested = own.requests?.[name];
      const request = requested === undefined ? limit : parseQuantityValue(requested).nanos;
      if (request > 0n) requests.set(name, (requests.get(name) ?? 0n) + request);
      if (limit > 0n) limits.set(name, (limits.get(name) ?? 0n) + limit);
      else guaranteed = false;
    }
  }
  if (requests.size === 0 && limits.size === 0) return 'BestEffort';
  const equal = QOS_RESOURCES.every((name) => requests.get(name) === limits.get(name));
  return guaranteed && equal ? 'Guaranteed' : 'Burstable';
}
