// LeaseClient over coordination.k8s.io/v1.

import { LEASES, ResourceClient, type KubeClient } from '@podvirt/kube-runtime';
import { apiFailure } from '../kube/api-failure.js';
import type { LeaseClient, LeaseRecord } from './lease-client.js';

interface LeaseObject {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string; resourceVersion?: string };
  spec?: {
    holderIdentity?: string;
    leaseDurationSeconds?: number;
    acquireTime?: string;
    renewTime?: string;
    leaseTransitions?: number;
  };
}

function asDate(value: unknown): Date | undefined {
  if (typeof value !== 'string') return undefined;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

/** metav1.MicroTime: RFC 3339 with six fractional digits, the form the API server expects. */
function microTime(date: Date): string {
  return date.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

function toRecord(lease: LeaseObject): LeaseRecord {
  const spec = lease.spec ?? {};
  return {
    holderIdentity: spec.holderIdentity,
    leaseDurationSeconds: spec.leaseDurationSeconds,
    acquireTime: asDate(spec.acquireTime),
    renewTime: asDate(spec.renewTime),
    leaseTransitions: spec.leaseTransitions,
    resourceVersion: lease.metadata?.resourceVersion,
  };
}

export class KubeLeaseClient implements LeaseClient {
  readonly #leases: ResourceClient<LeaseObject>;
  readonly #namespace: string;
  readonly #name: string;

  constructor(client: KubeClient, namespace: string, name: string) {
    this.#leases = new ResourceClient<LeaseObject>(client, LEASES);
    this.#namespace = namespace;
    this.#name = name;
  }

  #body(record: LeaseRecord): LeaseObject {
    const { resourceVersion, acquireTime, renewTime, ...rest } = record;
    const spec = Object.fromEntries(Object.entries({
      ...rest,
      acquireTime: acquireTime === undefined ? undefined : microTime(acquireTime),
      renewTime: renewTime === undefined ? undefined : microTime(renewTime),
    }).filter(([, v]) => v !== undefined));
    return {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: this.#name, namespace: this.#namespace, ...(resourceVersion === undefined ? {} : { resourceVersion }) },
      spec,
    };
  }

  async get(signal?: AbortSignal): Promise<LeaseRecord | undefined> {
    try {
      const lease = await this.#leases.get(this.#namespace, this.#name, signal);
      return lease === undefined ? undefined : toRecord(lease);
    } catch (err) {
      throw apiFailure(err, `read lease ${this.#namespace}/${this.#name}`);
    }
  }

  async create(record: LeaseRecord, signal?: AbortSignal): Promise<LeaseRecord> {
    try {
      return toRecord(await this.#leases.create(this.#namespace, this.#body(record), signal));
    } catch (err) {
      throw apiFailure(err, `create lease ${this.#namespace}/${this.#name}`);
    }
  }

  async update(record: LeaseRecord, signal?: AbortSignal): Promise<LeaseRecord> {
    try {
      return toRecord(await this.#leases.replace(this.#body(record), signal));
    } catch (err) {
      throw apiFailure(err, `update lease ${this.#namespace}/${this.#name}`);
    }
  }
}
