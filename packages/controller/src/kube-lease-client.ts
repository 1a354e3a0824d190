// LeaseClient over coordination.k8s.io/v1.

import { CoordinationV1Api, type KubeConfig, type V1Lease } from '@kubernetes/client-node';
import { apiFailure } from './api-failure.js';
import { isNotFound } from './controller-error.js';
import type { LeaseClient, LeaseRecord } from './lease-client.js';

function asDate(value: unknown): Date | undefined {
  if (value instanceof Date) return value;
  if (typeof value === 'string') {
    const date = new Date(value);
    return Number.isNaN(date.getTime()) ? undefined : date;
  }
  return undefined;
}

function toRecord(lease: V1Lease): LeaseRecord {
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
  readonly #api: CoordinationV1Api;

  constructor(
    kubeConfig: KubeConfig,
    private readonly namespace: string,
    private readonly name: string,
  ) {
    this.#api = kubeConfig.makeApiClient(CoordinationV1Api);
  }

  #body(record: LeaseRecord): V1Lease {
    const { resourceVersion, ...spec } = record;
    const clean = Object.fromEntries(Object.entries(spec).filter(([, v]) => v !== undefined));
    return {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: this.name, namespace: this.namespace, ...(resourceVersion === undefined ? {} : { resourceVersion }) },
      spec: clean,
    };
  }

  async get(): Promise<LeaseRecord | undefined> {
    try {
      return toRecord(await this.#api.readNamespacedLease({ name: this.name, namespace: this.namespace }));
    } catch (err) {
      const failure = apiFailure(err, `read lease ${this.namespace}/${this.name}`);
      if (isNotFound(failure)) return undefined;
      throw failure;
    }
  }

  async create(record: LeaseRecord): Promise<LeaseRecord> {
    try {
      return toRecord(await this.#api.createNamespacedLease({ namespace: this.namespace, body: this.#body(record) }));
    } catch (err) {
      throw apiFailure(err, `create lease ${this.namespace}/${this.name}`);
    }
  }

  async update(record: LeaseRecord): Promise<LeaseRecord> {
    try {
      return toRecord(await this.#api.replaceNamespacedLease({ name: this.name, namespace: this.namespace, body: this.#body(record) }));
    } catch (err) {
      throw apiFailure(err, `update lease ${this.namespace}/${this.name}`);
    }
  }
}
