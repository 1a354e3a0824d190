export { LibvirtClient } from './client.js';
export type { ClientEvents, ConnectOptions, DomainInfo, FlagsOptions, TypedParams } from './client.js';
export { Connection } from './connection.js';
export type { CallOptions, ConnectionEvents, ConnectionOptions } from './connection.js';
export { nameDomainState } from './domain-state.js';
export type { DomainStateInfo, StateReasonName } from './domain-state.js';
export { enumName } from './enum-name.js';
export { AbortError, ConnectionClosedError, ProtocolError, TimeoutError, XdrError } from './errors.js';
export { decodeDomainEvent } from './events.js';
export type { DomainEvent, LifecycleDetailName } from './events.js';
export * from './gen/constants.js';
export { Keepalive } from './keepalive.js';
export type { KeepaliveOptions } from './keepalive.js';
export {
  LibvirtError, isAgentUnresponsive, isAlreadyExists, isNotFound, isOperationInvalid, isOperationTimeout, isUnsupported,
  readLibvirtError,
} from './libvirt-error.js';
export type { LibvirtErrorFields } from './libvirt-error.js';
export type { CallSpec } from './wire/call-spec.js';
export type { FsInfo } from './wire/calls.js';
export { readDomainRef, uuidFromString, uuidToString, writeDomainRef } from './wire/domain-ref.js';
export type { DomainRef } from './wire/domain-ref.js';
export { FrameDecoder } from './wire/frame-decoder.js';
export {
  HEADER_SIZE, KEEPALIVE_PROGRAM, MESSAGE_MAX, MessageStatus, MessageType, PROTOCOL_VERSION, QEMU_PROGRAM, REMOTE_PROGRAM,
  STRING_MAX, decodeMessage, encodeMessage,
} from './wire/header.js';
export type { Message, MessageHeader } from './wire/header.js';
export { AuthType, DrvFeature, KeepaliveProc, Limits, QemuProc, RemoteProc } from './wire/procedures.js';
export { readTypedParam, typedParamsToRecord, writeTypedParam } from './wire/typed-param.js';
export type { TypedParam, TypedParamValue } from './wire/typed-param.js';
export { XdrReader } from './xdr/xdr-reader.js';
export { XdrWriter } from './xdr/xdr-writer.js';
export {
  domainAbortJob, domainJobStats, domainMigrateSetMaxSpeed, domainMigrateStartPostCopy, jobStat, migrateDomain,
} from './domain-migration.js';
export type { JobStats, MigrateOptions } from './domain-migration.js';
