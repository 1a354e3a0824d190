// Generates src/gen/constants.ts from libvirt's API description (libvirt-api.xml, shipped by
// libvirt-dev). `--check` regenerates into a temp file and fails when it differs from the
// committed copy, so a libvirt upgrade that renumbers nothing passes and one that adds names
// shows up as a reviewable diff.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const target = join(here, '..', 'src', 'gen', 'constants.ts');
const apiXml = process.env.LIBVIRT_API_XML ?? '/usr/share/libvirt/api/libvirt-api.xml';

// [exported name, libvirt enum type, name prefixes stripped (first match wins), doc]
const ENUMS = [
  ['ErrorNumber', 'virErrorNumber', ['VIR_ERR_', 'VIR_'], 'Error codes (virErrorNumber).'],
  ['ErrorDomain', 'virErrorDomain', ['VIR_FROM_'], 'Where an error came from (virErrorDomain).'],
  ['ErrorLevel', 'virErrorLevel', ['VIR_ERR_'], 'Error severity (virErrorLevel).'],
  ['DomainState', 'virDomainState', ['VIR_DOMAIN_'], 'Domain states (virDomainState).'],
  ['NostateReason', 'virDomainNostateReason', ['VIR_DOMAIN_NOSTATE_'], 'Reasons for NOSTATE.'],
  ['RunningReason', 'virDomainRunningReason', ['VIR_DOMAIN_RUNNING_'], 'Reasons for RUNNING.'],
  ['BlockedReason', 'virDomainBlockedReason', ['VIR_DOMAIN_BLOCKED_'], 'Reasons for BLOCKED.'],
  ['PausedReason', 'virDomainPausedReason', ['VIR_DOMAIN_PAUSED_'], 'Reasons for PAUSED.'],
  ['ShutdownReason', 'virDomainShutdownReason', ['VIR_DOMAIN_SHUTDOWN_'], 'Reasons for SHUTDOWN.'],
  ['ShutoffReason', 'virDomainShutoffReason', ['VIR_DOMAIN_SHUTOFF_'], 'Reasons for SHUTOFF.'],
  ['CrashedReason', 'virDomainCrashedReason', ['VIR_DOMAIN_CRASHED_'], 'Reasons for CRASHED.'],
  ['PMSuspendedReason', 'virDomainPMSuspendedReason', ['VIR_DOMAIN_PMSUSPENDED_'], 'Reasons for PMSUSPENDED.'],
  ['DomainEventType', 'virDomainEventType', ['VIR_DOMAIN_EVENT_'], 'Lifecycle events (virDomainEventType).'],
  ['DefinedDetail', 'virDomainEventDefinedDetailType', ['VIR_DOMAIN_EVENT_DEFINED_'], 'Details of DEFINED.'],
  ['UndefinedDetail', 'virDomainEventUndefinedDetailType', ['VIR_DOMAIN_EVENT_UNDEFINED_'], 'Details of UNDEFINED.'],
  ['StartedDetail', 'virDomainEventStartedDetailType', ['VIR_DOMAIN_EVENT_STARTED_'], 'Details of STARTED.'],
  ['SuspendedDetail', 'virDomainEventSuspendedDetailType', ['VIR_DOMAIN_EVENT_SUSPENDED_'], 'Details of SUSPENDED.'],
  ['ResumedDetail', 'virDomainEventResumedDetailType', ['VIR_DOMAIN_EVENT_RESUMED_'], 'Details of RESUMED.'],
  ['StoppedDetail', 'virDomainEventStoppedDetailType', ['VIR_DOMAIN_EVENT_STOPPED_'], 'Details of STOPPED.'],
  ['ShutdownDetail', 'virDomainEventShutdownDetailType', ['VIR_DOMAIN_EVENT_SHUTDOWN_'], 'Details of SHUTDOWN.'],
  ['PMSuspendedDetail', 'virDomainEventPMSuspendedDetailType', ['VIR_DOMAIN_EVENT_PMSUSPENDED_'], 'Details of PMSUSPENDED.'],
  ['CrashedDetail', 'virDomainEventCrashedDetailType', ['VIR_DOMAIN_EVENT_CRASHED_'], 'Details of CRASHED.'],
  ['DomainEventId', 'virDomainEventID', ['VIR_DOMAIN_EVENT_ID_'], 'Event ids for callback registration.'],
  ['AgentLifecycleState', 'virConnectDomainEventAgentLifecycleState', ['VIR_CONNECT_DOMAIN_EVENT_AGENT_LIFECYCLE_STATE_'], 'Guest agent channel state.'],
  ['AgentLifecycleReason', 'virConnectDomainEventAgentLifecycleReason', ['VIR_CONNECT_DOMAIN_EVENT_AGENT_LIFECYCLE_REASON_'], 'Why the agent state changed.'],
  ['IoErrorAction', 'virDomainEventIOErrorAction', ['VIR_DOMAIN_EVENT_IO_ERROR_'], 'Action taken on a guest I/O error.'],
  ['WatchdogAction', 'virDomainEventWatchdogAction', ['VIR_DOMAIN_EVENT_WATCHDOG_'], 'Action taken when the watchdog fired.'],
  ['MemoryStatTag', 'virDomainMemoryStatTags', ['VIR_DOMAIN_MEMORY_STAT_'], 'Memory statistic tags.'],
  ['TypedParamType', 'virTypedParameterType', ['VIR_TYPED_PARAM_'], 'Typed parameter value types.'],
  ['ShutdownFlags', 'virDomainShutdownFlagValues', ['VIR_DOMAIN_SHUTDOWN_'], 'Shutdown method flags.'],
  ['RebootFlags', 'virDomainRebootFlagValues', ['VIR_DOMAIN_REBOOT_'], 'Reboot method flags.'],
  ['DestroyFlags', 'virDomainDestroyFlagsValues', ['VIR_DOMAIN_DESTROY_'], 'Destroy flags.'],
  ['UndefineFlags', 'virDomainUndefineFlagsValues', ['VIR_DOMAIN_UNDEFINE_'], 'Undefine flags.'],
  ['CreateFlags', 'virDomainCreateFlags', ['VIR_DOMAIN_'], 'Create (start) flags.'],
  ['DefineFlags', 'virDomainDefineFlags', ['VIR_DOMAIN_DEFINE_'], 'Define flags.'],
  ['XmlFlags', 'virDomainXMLFlags', ['VIR_DOMAIN_XML_'], 'XML description flags.'],
  ['DeviceModifyFlags', 'virDomainDeviceModifyFlags', ['VIR_DOMAIN_DEVICE_MODIFY_'], 'Device attach/detach flags.'],
  ['ListDomainsFlags', 'virConnectListAllDomainsFlags', ['VIR_CONNECT_LIST_DOMAINS_'], 'List-all-domains filter flags.'],
  ['DomainStatsTypes', 'virDomainStatsTypes', ['VIR_DOMAIN_STATS_'], 'Stats groups for all-domain stats.'],
  ['GetAllDomainStatsFlags', 'virConnectGetAllDomainStatsFlags', ['VIR_CONNECT_GET_ALL_DOMAINS_STATS_'], 'All-domain stats flags.'],
  ['GuestInfoTypes', 'virDomainGuestInfoTypes', ['VIR_DOMAIN_GUEST_INFO_'], 'Guest info groups.'],
  ['AgentResponseTimeout', 'virDomainAgentResponseTimeoutValues', ['VIR_DOMAIN_AGENT_RESPONSE_TIMEOUT_'], 'Special agent timeouts (seconds).'],
  ['SetTimeFlags', 'virDomainSetTimeFlags', ['VIR_DOMAIN_TIME_'], 'Set-time flags.'],
  ['JobType', 'virDomainJobType', ['VIR_DOMAIN_JOB_'], 'Job types.'],
  ['JobOperation', 'virDomainJobOperation', ['VIR_DOMAIN_JOB_OPERATION_'], 'Job operations.'],
  ['MigrateFlags', 'virDomainMigrateFlags', ['VIR_MIGRATE_'], 'Flags of a migration (virDomainMigrateFlags).'],
];

function parseEnums(xml) {
  const out = [];
  for (const m of xml.matchAll(/<enum\s([^>]*?)\/?>/g)) {
    const attrs = Object.fromEntries([...m[1].matchAll(/(\w+)='([^']*)'/g)].map((a) => [a[1], a[2]]));
    if (attrs.name && attrs.type && attrs.value !== undefined) out.push(attrs);
  }
  return out;
}

function resolver(entries) {
  const raw = new Map(entries.map((e) => [e.name, e.value]));
  const resolve = (name, depth = 0) => {
    const v = raw.get(name);
    if (v === undefined || depth > 8) throw new Error(`gen-constants: cannot resolve ${name}`);
    return /^-?\d+$/.test(v) ? Number(v) : resolve(v, depth + 1);
  };
  return resolve;
}

function render(xml) {
  const entries = parseEnums(xml);
  const resolve = resolver(entries);
  const lines = [
    '// Generated by scripts/gen-constants.mjs from libvirt-api.xml. Do not edit by hand:',
    '// run `pnpm --filter @podvirt/libvirt run gen`.',
    '',
  ];
  for (const [tsName, type, prefixes, doc] of ENUMS) {
    const members = entries
      .filter((e) => e.type === type && !e.name.endsWith('_LAST'))
      .map((e) => {
        const prefix = prefixes.find((p) => e.name.startsWith(p));
        if (!prefix) throw new Error(`gen-constants: ${e.name} has none of the prefixes ${prefixes.join(', ')}`);
        return { key: e.name.slice(prefix.length), value: resolve(e.name) };
      })
      .sort((a, b) => a.value - b.value || (a.key < b.key ? -1 : 1));
    if (members.length === 0) throw new Error(`gen-constants: no members for ${type}`);
    lines.push(`/** ${doc} */`, `export const ${tsName} = {`);
    for (const m of members) lines.push(`  ${/^\d/.test(m.key) ? `'${m.key}'` : m.key}: ${m.value},`);
    lines.push('} as const;', `export type ${tsName}Name = keyof typeof ${tsName};`, '');
  }
  return lines.join('\n');
}

const text = render(readFileSync(apiXml, 'utf8'));
if (process.argv.includes('--check')) {
  const dir = mkdtempSync(join(tmpdir(), 'podvirt-gen-'));
  try {
    const fresh = join(dir, 'constants.ts');
    writeFileSync(fresh, text);
    if (readFileSync(target, 'utf8') !== text) {
      spawnSync('diff', ['-u', target, fresh], { stdio: 'inherit' });
      console.error('gen-constants: src/gen/constants.ts is stale; run `pnpm --filter @podvirt/libvirt run gen`');
      process.exitCode = 1;
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
} else {
  writeFileSync(target, text);
}
