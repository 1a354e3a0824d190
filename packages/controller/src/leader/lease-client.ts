// The Lease the replicas compete for, reduced to what leader election reads and writes.

export interface LeaseRecord {
  readonly holderIdentity?: string | undefined;
  readonly leaseDurationSeconds?: number | undefined;
  readonly acquireTime?: Date | undefined;
  readonly renewTime?: Date | undefined;
  readonly leaseTransitions?: number | undefined;
  /** Guards an update: it fails with CONTROLLER_ERR_CONFLICT if the Lease changed meanwhile. */
  readonly resourceVersion?: string | undefined;
}

/** One Lease object, bound to its namespace and name. */
export interface LeaseClient {
  get(signal?: AbortSignal): Promise<LeaseRecord | undefined>;
  /** Fails with CONTROLLER_ERR_CONFLICT when another replica created it first. */
  create(record: LeaseRecord, signal?: AbortSignal): Promise<LeaseRecord>;
  update(record: LeaseRecord, signal?: AbortSignal): Promise<LeaseRecord>;
}
