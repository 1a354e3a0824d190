// The source side of a live migration through a client of the source daemon: a managed
// peer-to-peer migration (the source daemon itself talks to the destination daemon at
// `destinationUri`, which is what lets each daemon stay private behind a proxied socket), its
// progress as job statistics, bandwidth, abort and the switch to post-copy.
import type { LibvirtClient } from './client.js';
import type { CallOptions } from './connection.js';
import { enumName } from './enum-name.js';
import { JobType, type JobTypeName } from './gen/constants.js';
import type { DomainRef } from './wire/domain-ref.js';
import { AbortJob, GetJobStats, MigratePerform3Params, MigrateSetMaxSpeed, MigrateStartPostCopy } from './wire/migration-calls.js';
import { typedParamsToRecord, type TypedParam, type TypedParamValue } from './wire/typed-param.js';

export interface MigrateOptions extends CallOptions {
  /** The destination daemon as the source daemon reaches it, e.g. `qemu+unix:///system?socket=/…/sock`. */
  readonly destinationUri: string;
  /** Where the source qemu sends the migration stream (`tcp://host:port`, `unix:///path`); libvirt's choice when unset. */
  readonly migrateUri?: string;
  /** Where the source sends disk contents in a block migration (NBD), e.g. `unix:///path`. */
  readonly disksUri?: string;
  /** The disks (target names such as `vda`) a block migration copies; all writable ones when unset. */
  readonly migrateDisks?: readonly string[];
  /** The domain XML the destination starts (same VM, the destination's paths). */
  readonly destinationXml?: string;
  /** The definition the destination keeps with PERSIST_DEST (the source's inactive one when unset). */
  readonly persistentXml?: string;
  /** Bandwidth limit in MiB/s. */
  readonly bandwidthMiBs?: number;
  /** MigrateFlags ORed; PEER2PEER is always added. */
  readonly flags: number;
}

const PEER2PEER = 2;

/** Resolves when the guest runs at the destination; rejects with the LibvirtError that ended it. */
export async function migrateDomain(client: LibvirtClient, dom: DomainRef, o: MigrateOptions): Promise<void> {
  const params: TypedParam[] = [];
  if (o.migrateUri !== undefined) params.push({ field: 'migrate_uri', type: 'STRING', value: o.migrateUri });
  if (o.disksUri !== undefined) params.push({ field: 'disks_uri', type: 'STRING', value: o.disksUri });
  for (const disk of o.migrateDisks ?? []) params.push({ field: 'migrate_disks', type: 'STRING', value: disk });
  if (o.destinationXml !== undefined) params.push({ field: 'destination_xml', type: 'STRING', value: o.destinationXml });
  if (o.persistentXml !== undefined) params.push({ field: 'persistent_xml', type: 'STRING', value: o.persistentXml });
  if (o.bandwidthMiBs !== undefined) params.push({ field: 'bandwidth', type: 'ULLONG', value: BigInt(o.bandwidthMiBs) });
  await client.call(MigratePerform3Params, { dom, dconnuri: o.destinationUri, params, flags: o.flags | PEER2PEER }, o);
}

/** A job's statistics: the type, and the fields libvirt reports (`data_remaining`, `memory_iteration`, `downtime` …). */
export interface JobStats {
  readonly type: JobTypeName | 'UNKNOWN';
  readonly stats: Readonly<Record<string, TypedParamValue>>;
}

/** flags 1 (VIR_DOMAIN_JOB_STATS_COMPLETED): the statistics of the job that just ended. */
export async function domainJobStats(client: LibvirtClient, dom: DomainRef, flags = 0, o?: CallOptions): Promise<JobStats> {
  const raw = await client.call(GetJobStats, { dom, flags }, o);
  return { type: enumName(JobType, raw.type), stats: typedParamsToRecord(raw.params) };
}

/** A number from job statistics (they arrive as bigint for 64-bit fields). */
export function jobStat(stats: JobStats, field: string): number | undefined {
  const v = stats.stats[field];
  return typeof v === 'bigint' || typeof v === 'number' ? Number(v) : undefined;
}

export function domainAbortJob(client: LibvirtClient, dom: DomainRef, o?: CallOptions): Promise<void> {
  return client.call(AbortJob, { dom }, o);
}

export function domainMigrateSetMaxSpeed(client: LibvirtClient, dom: DomainRef, bandwidthMiBs: number, o?: CallOptions): Promise<void> {
  return client.call(MigrateSetMaxSpeed, { dom, bandwidthMiBs: BigInt(bandwidthMiBs), flags: 0 }, o);
}

export function domainMigrateStartPostCopy(client: LibvirtClient, dom: DomainRef, o?: CallOptions): Promise<void> {
  return client.call(MigrateStartPostCopy, { dom, flags: 0 }, o);
}
