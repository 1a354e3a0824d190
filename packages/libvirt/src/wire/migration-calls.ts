// Argument and reply layouts of the migration procedures (remote_protocol.x, libvirt 9.0):
// the source side of a managed peer-to-peer migration, its job statistics, bandwidth, abort
// and the switch to post-copy.
import type { XdrReader } from '../xdr/xdr-reader.js';
import type { XdrWriter } from '../xdr/xdr-writer.js';
import { noRet, type CallSpec } from './call-spec.js';
import { writeDomainRef, type DomainRef } from './domain-ref.js';
import { REMOTE_PROGRAM, STRING_MAX } from './header.js';
import { Limits, RemoteProc } from './procedures.js';
import { readTypedParam, writeTypedParam, type TypedParam } from './typed-param.js';

const remote = <A, R>(proc: number, writeArgs: (w: XdrWriter, a: A) => void, readRet: (r: XdrReader) => R): CallSpec<A, R> =>
  ({ prog: REMOTE_PROGRAM, proc, writeArgs, readRet });

export interface MigratePerformArgs {
  readonly dom: DomainRef;
  /** The destination daemon as the source daemon reaches it (peer-to-peer), e.g. `qemu+unix:///system?socket=…`. */
  readonly dconnuri: string | null;
  readonly params: readonly TypedParam[];
  readonly flags: number;
}

/** remote_domain_migrate_perform3_params: returns the cookie, which a peer-to-peer caller ignores. */
export const MigratePerform3Params = remote(RemoteProc.DOMAIN_MIGRATE_PERFORM3_PARAMS,
  (w, a: MigratePerformArgs) => {
    writeDomainRef(w, a.dom);
    w.optional(a.dconnuri, (x, s) => x.string(s, STRING_MAX));
    w.array(a.params, Limits.DOMAIN_MIGRATE_PARAM_LIST_MAX, writeTypedParam);
    w.opaque(Buffer.alloc(0), Limits.MIGRATE_COOKIE_MAX);
    w.uint(a.flags);
  },
  (r) => r.opaque(Limits.MIGRATE_COOKIE_MAX));

export const GetJobStats = remote(RemoteProc.DOMAIN_GET_JOB_STATS,
  (w, a: { dom: DomainRef; flags: number }) => { writeDomainRef(w, a.dom); w.uint(a.flags); },
  (r) => ({ type: r.int(), params: r.array(Limits.DOMAIN_JOB_STATS_MAX, readTypedParam) }));

export const AbortJob = remote(RemoteProc.DOMAIN_ABORT_JOB, (w, a: { dom: DomainRef }) => writeDomainRef(w, a.dom), noRet);

export const MigrateSetMaxSpeed = remote(RemoteProc.DOMAIN_MIGRATE_SET_MAX_SPEED,
  (w, a: { dom: DomainRef; bandwidthMiBs: bigint; flags: number }) => { writeDomainRef(w, a.dom); w.uhyper(a.bandwidthMiBs).uint(a.flags); },
  noRet);

export const MigrateStartPostCopy = remote(RemoteProc.DOMAIN_MIGRATE_START_POST_COPY,
  (w, a: { dom: DomainRef; flags: number }) => { writeDomainRef(w, a.dom); w.uint(a.flags); },
  noRet);
