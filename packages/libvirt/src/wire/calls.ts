// Argument and reply layouts (remote_*_args / remote_*_ret) of the procedures we call.
import type { XdrReader } from '../xdr/xdr-reader.js';
import type { XdrWriter } from '../xdr/xdr-writer.js';
import { noArgs, noRet } from './call-spec.js';
import type { CallSpec } from './call-spec.js';
import { readDomainRef, writeDomainRef } from './domain-ref.js';
import type { DomainRef } from './domain-ref.js';
import { QEMU_PROGRAM, REMOTE_PROGRAM, STRING_MAX, UUID_SIZE } from './header.js';
import { Limits, QemuProc, RemoteProc } from './procedures.js';
import { readTypedParam } from './typed-param.js';
import type { TypedParam } from './typed-param.js';

type Proc = (typeof RemoteProc)[keyof typeof RemoteProc];
const remote = <A, R>(proc: Proc, writeArgs: (w: XdrWriter, a: A) => void, readRet: (r: XdrReader) => R): CallSpec<A, R> =>
  ({ prog: REMOTE_PROGRAM, proc, writeArgs, readRet });

export interface DomFlags { readonly dom: DomainRef; readonly flags: number }
const writeDomFlags = (w: XdrWriter, a: DomFlags): void => { writeDomainRef(w, a.dom); w.uint(a.flags); };
const writeDom = (w: XdrWriter, a: { readonly dom: DomainRef }): void => writeDomainRef(w, a.dom);
const readString = (r: XdrReader): string => r.string(STRING_MAX);
const readOptString = (r: XdrReader): string | null => r.optional(readString);

export const AuthList = remote(RemoteProc.AUTH_LIST, noArgs, (r) => r.array(Limits.AUTH_TYPE_LIST_MAX, (x) => x.int()));
export const SupportsFeature = remote(RemoteProc.CONNECT_SUPPORTS_FEATURE,
  (w, a: { feature: number }) => w.int(a.feature), (r) => r.int() !== 0);
export const ConnectOpen = remote(RemoteProc.CONNECT_OPEN,
  (w, a: { uri: string | null; flags: number }) => w.optional(a.uri, (x, s) => x.string(s, STRING_MAX)).uint(a.flags), noRet);
export const ConnectClose = remote(RemoteProc.CONNECT_CLOSE, noArgs, noRet);
export const GetHostname = remote(RemoteProc.CONNECT_GET_HOSTNAME, noArgs, readString);
export const GetVersion = remote(RemoteProc.CONNECT_GET_VERSION, noArgs, (r) => r.uhyper());
export const GetLibVersion = remote(RemoteProc.CONNECT_GET_LIB_VERSION, noArgs, (r) => r.uhyper());
export const GetCapabilities = remote(RemoteProc.CONNECT_GET_CAPABILITIES, noArgs, readString);

export interface DomainCapabilitiesArgs {
  readonly emulator: string | null;
  readonly arch: string | null;
  readonly machine: string | null;
  readonly virtType: string | null;
  readonly flags: number;
}
const writeOptString = (w: XdrWriter, value: string | null): void => { w.optional(value, (x, s) => x.string(s, STRING_MAX)); };
export const GetDomainCapabilities = remote(RemoteProc.CONNECT_GET_DOMAIN_CAPABILITIES,
  (w, a: DomainCapabilitiesArgs) => {
    writeOptString(w, a.emulator);
    writeOptString(w, a.arch);
    writeOptString(w, a.machine);
    writeOptString(w, a.virtType);
    w.uint(a.flags);
  }, readString);

export const ListAllDomains = remote(RemoteProc.CONNECT_LIST_ALL_DOMAINS,
  (w, a: { flags: number }) => w.int(1).uint(a.flags), // need_results = 1: we want the list, not a count
  (r) => {
    const domains = r.array(Limits.DOMAIN_LIST_MAX, readDomainRef);
    r.uint(); // "ret": the count again
    return domains;
  });

export const LookupByName = remote(RemoteProc.DOMAIN_LOOKUP_BY_NAME,
  (w, a: { name: string }) => w.string(a.name, STRING_MAX), readDomainRef);
export const LookupByUuid = remote(RemoteProc.DOMAIN_LOOKUP_BY_UUID,
  (w, a: { uuid: Buffer }) => w.opaqueFixed(a.uuid, UUID_SIZE), readDomainRef);
export const LookupById = remote(RemoteProc.DOMAIN_LOOKUP_BY_ID, (w, a: { id: number }) => w.int(a.id), readDomainRef);
export const DefineXmlFlags = remote(RemoteProc.DOMAIN_DEFINE_XML_FLAGS,
  (w, a: { xml: string; flags: number }) => w.string(a.xml, STRING_MAX).uint(a.flags), readDomainRef);
/** remote_domain_{attach,detach}_device_flags_args: the device's XML and DomainDeviceModifyFlags. */
const writeDeviceXml = (w: XdrWriter, a: { readonly dom: DomainRef; readonly xml: string; readonly flags: number }): void => {
  writeDomainRef(w, a.dom);
  w.string(a.xml, STRING_MAX).uint(a.flags);
};
export const AttachDeviceFlags = remote(RemoteProc.DOMAIN_ATTACH_DEVICE_FLAGS, writeDeviceXml, noRet);
export const DetachDeviceFlags = remote(RemoteProc.DOMAIN_DETACH_DEVICE_FLAGS, writeDeviceXml, noRet);
export const UndefineFlags = remote(RemoteProc.DOMAIN_UNDEFINE_FLAGS, writeDomFlags, noRet);
export const CreateWithFlags = remote(RemoteProc.DOMAIN_CREATE_WITH_FLAGS, writeDomFlags, readDomainRef);
export const Suspend = remote(RemoteProc.DOMAIN_SUSPEND, writeDom, noRet);
export const Resume = remote(RemoteProc.DOMAIN_RESUME, writeDom, noRet);
export const ShutdownFlags = remote(RemoteProc.DOMAIN_SHUTDOWN_FLAGS, writeDomFlags, noRet);
export const Reboot = remote(RemoteProc.DOMAIN_REBOOT, writeDomFlags, noRet);
export const Reset = remote(RemoteProc.DOMAIN_RESET, writeDomFlags, noRet);
export const DestroyFlags = remote(RemoteProc.DOMAIN_DESTROY_FLAGS, writeDomFlags, noRet);
export const GetState = remote(RemoteProc.DOMAIN_GET_STATE, writeDomFlags, (r) => ({ state: r.int(), reason: r.int() }));
export const GetXmlDesc = remote(RemoteProc.DOMAIN_GET_XML_DESC, writeDomFlags, readString);

export interface RawDomainInfo { state: number; maxMem: bigint; memory: bigint; nrVirtCpu: number; cpuTime: bigint }
// unsigned char and unsigned short travel as full 4-byte XDR words.
export const GetInfo = remote(RemoteProc.DOMAIN_GET_INFO, writeDom, (r): RawDomainInfo =>
  ({ state: r.uint(), maxMem: r.uhyper(), memory: r.uhyper(), nrVirtCpu: r.uint(), cpuTime: r.uhyper() }));

export const MemoryStats = remote(RemoteProc.DOMAIN_MEMORY_STATS,
  (w, a: { dom: DomainRef; maxStats: number; flags: number }) => { writeDomainRef(w, a.dom); w.uint(a.maxStats).uint(a.flags); },
  (r) => r.array(Limits.DOMAIN_MEMORY_STATS_MAX, (x) => ({ tag: x.int(), val: x.uhyper() })));

export interface RawStatsRecord { dom: DomainRef; params: TypedParam[] }
export const GetAllDomainStats = remote(RemoteProc.CONNECT_GET_ALL_DOMAIN_STATS,
  (w, a: { doms: readonly DomainRef[]; stats: number; flags: number }) =>
    w.array(a.doms, Limits.DOMAIN_LIST_MAX, writeDomainRef).uint(a.stats).uint(a.flags),
  (r) => r.array(Limits.DOMAIN_LIST_MAX, (x): RawStatsRecord =>
    ({ dom: readDomainRef(x), params: x.array(Limits.CONNECT_GET_ALL_DOMAIN_STATS_MAX, readTypedParam) })));

export interface MountpointArgs { dom: DomainRef; mountpoints: readonly string[]; flags: number }
const writeMountpoints = (w: XdrWriter, a: MountpointArgs): void => {
  writeDomainRef(w, a.dom);
  w.array(a.mountpoints, Limits.DOMAIN_FSFREEZE_MOUNTPOINTS_MAX, (x, s) => x.string(s, STRING_MAX)).uint(a.flags);
};
export const FsFreeze = remote(RemoteProc.DOMAIN_FSFREEZE, writeMountpoints, (r) => r.int());
export const FsThaw = remote(RemoteProc.DOMAIN_FSTHAW, writeMountpoints, (r) => r.int());

export interface FsInfo { mountpoint: string; name: string; fstype: string; devAliases: string[] }
export const GetFsInfo = remote(RemoteProc.DOMAIN_GET_FSINFO, writeDomFlags, (r) => {
  const info = r.array(Limits.DOMAIN_FSINFO_MAX, (x): FsInfo => ({
    mountpoint: readString(x), name: readString(x), fstype: readString(x),
    devAliases: x.array(Limits.DOMAIN_FSINFO_DISKS_MAX, readString),
  }));
  r.uint(); // "ret": the count again
  return info;
});

export const GetGuestInfo = remote(RemoteProc.DOMAIN_GET_GUEST_INFO,
  (w, a: { dom: DomainRef; types: number; flags: number }) => { writeDomainRef(w, a.dom); w.uint(a.types).uint(a.flags); },
  (r) => r.array(Limits.DOMAIN_GUEST_INFO_PARAMS_MAX, readTypedParam));

export const SetTime = remote(RemoteProc.DOMAIN_SET_TIME,
  (w, a: { dom: DomainRef; seconds: bigint; nseconds: number; flags: number }) => {
    writeDomainRef(w, a.dom);
    w.hyper(a.seconds).uint(a.nseconds).uint(a.flags);
  }, noRet);
export const GetTime = remote(RemoteProc.DOMAIN_GET_TIME, writeDomFlags, (r) => ({ seconds: r.hyper(), nseconds: r.uint() }));

export const EventRegisterAny = remote(RemoteProc.CONNECT_DOMAIN_EVENT_CALLBACK_REGISTER_ANY,
  (w, a: { eventId: number; dom: DomainRef | null }) => w.int(a.eventId).optional(a.dom, writeDomainRef), (r) => r.int());
export const EventDeregisterAny = remote(RemoteProc.CONNECT_DOMAIN_EVENT_CALLBACK_DEREGISTER_ANY,
  (w, a: { callbackId: number }) => w.int(a.callbackId), noRet);

export const AgentCommand: CallSpec<{ dom: DomainRef; cmd: string; timeout: number; flags: number }, string | null> = {
  prog: QEMU_PROGRAM,
  proc: QemuProc.DOMAIN_AGENT_COMMAND,
  writeArgs: (w, a) => { writeDomainRef(w, a.dom); w.string(a.cmd, STRING_MAX).int(a.timeout).uint(a.flags); },
  readRet: readOptString,
};
