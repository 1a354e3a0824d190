// An error reported by the daemon (remote_error / virNetMessageError), with libvirt's own
// numbers kept: callers decide on `code`, exactly as with the C library.
import { ErrorDomain, ErrorLevel, ErrorNumber } from './gen/constants.js';
import type { ErrorDomainName, ErrorLevelName, ErrorNumberName } from './gen/constants.js';
import { enumName } from './enum-name.js';
import { readDomainRef } from './wire/domain-ref.js';
import { STRING_MAX, UUID_SIZE } from './wire/header.js';
import type { XdrReader } from './xdr/xdr-reader.js';

export interface LibvirtErrorFields {
  readonly code: number;
  readonly domain: number;
  readonly message: string | null;
  readonly level: number;
  readonly str1: string | null;
  readonly str2: string | null;
  readonly str3: string | null;
  readonly int1: number;
  readonly int2: number;
}

export class LibvirtError extends Error {
  override readonly name = 'LibvirtError';
  /** virErrorNumber, e.g. 42 (NO_DOMAIN). */
  readonly code: number;
  /** virErrorDomain: which libvirt subsystem raised it. */
  readonly domain: number;
  /** virErrorLevel: 1 warning, 2 error. */
  readonly level: number;
  readonly str1: string | null;
  readonly str2: string | null;
  readonly str3: string | null;
  readonly int1: number;
  readonly int2: number;

  constructor(fields: LibvirtErrorFields, options?: ErrorOptions) {
    super(fields.message ?? `libvirt error ${fields.code}`, options);
    this.code = fields.code;
    this.domain = fields.domain;
    this.level = fields.level;
    this.str1 = fields.str1;
    this.str2 = fields.str2;
    this.str3 = fields.str3;
    this.int1 = fields.int1;
    this.int2 = fields.int2;
  }

  /** The stable name of `code` (NO_DOMAIN, OPERATION_INVALID …), or UNKNOWN for newer codes. */
  get codeName(): ErrorNumberName | 'UNKNOWN' {
    return enumName(ErrorNumber, this.code);
  }

  get domainName(): ErrorDomainName | 'UNKNOWN' {
    return enumName(ErrorDomain, this.domain);
  }

  get levelName(): ErrorLevelName | 'UNKNOWN' {
    return enumName(ErrorLevel, this.level);
  }
}

/** Decodes the body of a reply whose status is ERROR. */
export function readLibvirtError(r: XdrReader): LibvirtError {
  const readString = (x: XdrReader): string | null => x.optional((y) => y.string(STRING_MAX));
  const code = r.int();
  const domain = r.int();
  const message = readString(r);
  const level = r.int();
  r.optional(readDomainRef); // "dom": unused by libvirt, still on the wire
  const str1 = readString(r);
  const str2 = readString(r);
  const str3 = readString(r);
  const int1 = r.int();
  const int2 = r.int();
  r.optional((x) => [x.string(STRING_MAX), x.opaqueFixed(UUID_SIZE)]); // "net": unused too
  r.done();
  return new LibvirtError({ code, domain, message, level, str1, str2, str3, int1, int2 });
}

const NOT_FOUND: ReadonlySet<number> = new Set([
  ErrorNumber.NO_DOMAIN,
  ErrorNumber.NO_DOMAIN_SNAPSHOT,
  ErrorNumber.NO_DOMAIN_CHECKPOINT,
  ErrorNumber.NO_DOMAIN_BACKUP,
  ErrorNumber.NO_DOMAIN_METADATA,
  ErrorNumber.NO_NETWORK,
  ErrorNumber.NO_NETWORK_PORT,
  ErrorNumber.NO_STORAGE_POOL,
  ErrorNumber.NO_STORAGE_VOL,
  ErrorNumber.NO_NODE_DEVICE,
  ErrorNumber.NO_INTERFACE,
  ErrorNumber.NO_NWFILTER,
  ErrorNumber.NO_NWFILTER_BINDING,
  ErrorNumber.NO_SECRET,
]);

const OPERATION_INVALID: ReadonlySet<number> = new Set([ErrorNumber.OPERATION_INVALID]);
const AGENT_UNRESPONSIVE: ReadonlySet<number> = new Set([ErrorNumber.AGENT_UNRESPONSIVE, ErrorNumber.AGENT_UNSYNCED]);
const OPERATION_TIMEOUT: ReadonlySet<number> = new Set([ErrorNumber.OPERATION_TIMEOUT]);
const UNSUPPORTED: ReadonlySet<number> = new Set([
  ErrorNumber.NO_SUPPORT,
  ErrorNumber.OPERATION_UNSUPPORTED,
  ErrorNumber.ARGUMENT_UNSUPPORTED,
]);
const ALREADY_EXISTS: ReadonlySet<number> = new Set([ErrorNumber.DOM_EXIST]);

const hasCode = (err: unknown, codes: ReadonlySet<number>): boolean =>
  err instanceof LibvirtError && codes.has(err.code);

/** The object named by the call does not exist (NO_DOMAIN and its siblings). */
export const isNotFound = (err: unknown): boolean => hasCode(err, NOT_FOUND);
/** The call does not fit the object's current state (e.g. suspending a stopped domain). */
export const isOperationInvalid = (err: unknown): boolean => hasCode(err, OPERATION_INVALID);
/** The guest agent is not connected or did not answer. */
export const isAgentUnresponsive = (err: unknown): boolean => hasCode(err, AGENT_UNRESPONSIVE);
/** The hypervisor or daemon timed out, e.g. waiting for a job lock. */
export const isOperationTimeout = (err: unknown): boolean => hasCode(err, OPERATION_TIMEOUT);
/** The operation is not supported by the driver, the hypervisor or the arguments. */
export const isUnsupported = (err: unknown): boolean => hasCode(err, UNSUPPORTED);
/** A domain with that name or UUID already exists. */
export const isAlreadyExists = (err: unknown): boolean => hasCode(err, ALREADY_EXISTS);
