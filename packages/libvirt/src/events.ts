// Decoding of domain event messages (remote_domain_event_callback_*_msg) into named values.
import {
  AgentLifecycleReason, AgentLifecycleState, CrashedDetail, DefinedDetail, DomainEventType, IoErrorAction,
  PMSuspendedDetail, ResumedDetail, ShutdownDetail, StartedDetail, StoppedDetail, SuspendedDetail, UndefinedDetail,
  WatchdogAction,
} from './gen/constants.js';
import type {
  AgentLifecycleReasonName, AgentLifecycleStateName, CrashedDetailName, DefinedDetailName, DomainEventTypeName,
  IoErrorActionName, PMSuspendedDetailName, ResumedDetailName, ShutdownDetailName, StartedDetailName,
  StoppedDetailName, SuspendedDetailName, UndefinedDetailName, WatchdogActionName,
} from './gen/constants.js';
import { enumName } from './enum-name.js';
import { readDomainRef } from './wire/domain-ref.js';
import type { DomainRef } from './wire/domain-ref.js';
import { STRING_MAX } from './wire/header.js';
import { Limits, RemoteProc } from './wire/procedures.js';
import { readTypedParam, typedParamsToRecord } from './wire/typed-param.js';
import type { TypedParamValue } from './wire/typed-param.js';
import { XdrReader } from './xdr/xdr-reader.js';

export type LifecycleDetailName =
  | DefinedDetailName | UndefinedDetailName | StartedDetailName | SuspendedDetailName | ResumedDetailName
  | StoppedDetailName | ShutdownDetailName | PMSuspendedDetailName | CrashedDetailName;

interface EventBase { readonly callbackId: number; readonly domain: DomainRef }

/** A domain event; `kind` is the name of the event id it was registered with. */
export type DomainEvent =
  | (EventBase & {
    readonly kind: 'LIFECYCLE';
    readonly event: DomainEventTypeName | 'UNKNOWN';
    readonly detail: LifecycleDetailName | 'UNKNOWN';
    readonly eventCode: number;
    readonly detailCode: number;
  })
  | (EventBase & { readonly kind: 'REBOOT' })
  | (EventBase & { readonly kind: 'WATCHDOG'; readonly action: WatchdogActionName | 'UNKNOWN'; readonly actionCode: number })
  | (EventBase & {
    readonly kind: 'IO_ERROR' | 'IO_ERROR_REASON';
    readonly srcPath: string;
    readonly devAlias: string;
    readonly action: IoErrorActionName | 'UNKNOWN';
    readonly actionCode: number;
    /** Only with IO_ERROR_REASON, e.g. "enospc". */
    readonly reason: string | null;
  })
  | (EventBase & { readonly kind: 'DEVICE_ADDED' | 'DEVICE_REMOVED'; readonly devAlias: string })
  | (EventBase & {
    readonly kind: 'AGENT_LIFECYCLE';
    readonly state: AgentLifecycleStateName | 'UNKNOWN';
    readonly reason: AgentLifecycleReasonName | 'UNKNOWN';
    readonly stateCode: number;
    readonly reasonCode: number;
  })
  | (EventBase & { readonly kind: 'JOB_COMPLETED'; readonly stats: Readonly<Record<string, TypedParamValue>> })
  /** A migration's pre-copy pass ended; `iteration` counts them from 1. */
  | (EventBase & { readonly kind: 'MIGRATION_ITERATION'; readonly iteration: number });

const DETAILS: Readonly<Record<DomainEventTypeName, Readonly<Record<string, number>>>> = {
  DEFINED: DefinedDetail,
  UNDEFINED: UndefinedDetail,
  STARTED: StartedDetail,
  SUSPENDED: SuspendedDetail,
  RESUMED: ResumedDetail,
  STOPPED: StoppedDetail,
  SHUTDOWN: ShutdownDetail,
  PMSUSPENDED: PMSuspendedDetail,
  CRASHED: CrashedDetail,
};

const readString = (r: XdrReader): string => r.string(STRING_MAX);

function readLifecycle(callbackId: number, r: XdrReader): DomainEvent {
  const domain = readDomainRef(r);
  const eventCode = r.int();
  const detailCode = r.int();
  const event = enumName(DomainEventType, eventCode);
  const detail = event === 'UNKNOWN' ? 'UNKNOWN' : enumName(DETAILS[event], detailCode);
  return { kind: 'LIFECYCLE', callbackId, domain, event, detail: detail as LifecycleDetailName, eventCode, detailCode };
}

function readIoError(callbackId: number, r: XdrReader, withReason: boolean): DomainEvent {
  const domain = readDomainRef(r);
  const srcPath = readString(r);
  const devAlias = readString(r);
  const actionCode = r.int();
  const reason = withReason ? readString(r) : null;
  const action = enumName(IoErrorAction, actionCode);
  return { kind: withReason ? 'IO_ERROR_REASON' : 'IO_ERROR', callbackId, domain, srcPath, devAlias, action, actionCode, reason };
}

function readAgentLifecycle(callbackId: number, r: XdrReader): DomainEvent {
  const domain = readDomainRef(r);
  const stateCode = r.int();
  const reasonCode = r.int();
  return {
    kind: 'AGENT_LIFECYCLE', callbackId, domain, stateCode, reasonCode,
    state: enumName(AgentLifecycleState, stateCode), reason: enumName(AgentLifecycleReason, reasonCode),
  };
}

const DECODERS: ReadonlyMap<number, (callbackId: number, r: XdrReader) => DomainEvent> = new Map([
  [RemoteProc.DOMAIN_EVENT_CALLBACK_LIFECYCLE, readLifecycle],
  [RemoteProc.DOMAIN_EVENT_CALLBACK_REBOOT, (callbackId, r) => ({ kind: 'REBOOT', callbackId, domain: readDomainRef(r) })],
  [RemoteProc.DOMAIN_EVENT_CALLBACK_WATCHDOG, (callbackId, r) => {
    const domain = readDomainRef(r);
    const actionCode = r.int();
    return { kind: 'WATCHDOG', callbackId, domain, actionCode, action: enumName(WatchdogAction, actionCode) };
  }],
  [RemoteProc.DOMAIN_EVENT_CALLBACK_IO_ERROR, (callbackId, r) => readIoError(callbackId, r, false)],
  [RemoteProc.DOMAIN_EVENT_CALLBACK_IO_ERROR_REASON, (callbackId, r) => readIoError(callbackId, r, true)],
  [RemoteProc.DOMAIN_EVENT_CALLBACK_DEVICE_ADDED,
    (callbackId, r) => ({ kind: 'DEVICE_ADDED', callbackId, domain: readDomainRef(r), devAlias: readString(r) })],
  [RemoteProc.DOMAIN_EVENT_CALLBACK_DEVICE_REMOVED,
    (callbackId, r) => ({ kind: 'DEVICE_REMOVED', callbackId, domain: readDomainRef(r), devAlias: readString(r) })],
  [RemoteProc.DOMAIN_EVENT_CALLBACK_AGENT_LIFECYCLE, readAgentLifecycle],
  [RemoteProc.DOMAIN_EVENT_CALLBACK_JOB_COMPLETED, (callbackId, r) => ({
    kind: 'JOB_COMPLETED', callbackId, domain: readDomainRef(r),
    stats: typedParamsToRecord(r.array(Limits.DOMAIN_JOB_STATS_MAX, readTypedParam)),
  })],
  [RemoteProc.DOMAIN_EVENT_CALLBACK_MIGRATION_ITERATION,
    (callbackId, r) => ({ kind: 'MIGRATION_ITERATION', callbackId, domain: readDomainRef(r), iteration: r.int() })],
]);

/**
 * Decodes one event body of a remote-program MESSAGE. Returns undefined for event procedures
 * this package does not decode. Throws XdrError when the body does not match the layout.
 */
export function decodeDomainEvent(proc: number, body: Buffer): DomainEvent | undefined {
  const decode = DECODERS.get(proc);
  if (!decode) return undefined;
  const r = new XdrReader(body);
  const event = decode(r.int(), r);
  r.done();
  return event;
}
