// argv → what to do, without touching the process: the environment comes in as a parameter,
// every mistake leaves as a UsageError naming what is accepted.
import { parseArgs as parseUtilArgs, type ParseArgsConfig } from 'node:util';
import { NODE_API_SOCKET, type node } from '@podvirt/proto';
import {
  COMMANDS,
  FLAG_ALIASES,
  FLAGS,
  isCommandName,
  type CommandName,
  type FlagName,
  type GuestCommand,
  type OperationCommand,
  type VmStateCommandName,
  type VolumeCommandName,
} from './command-table.js';
import { validateAddVolumeOptions, type AddVolumeOptions, type VolumeRequest } from '@podvirt/api';
import { CALL_DEADLINES } from '@podvirt/proto';
import { DEFAULT_NAMESPACE, DEFAULT_UNFREEZE_TIMEOUT_SECONDS } from './defaults.js';
import { DurationError, parseDuration } from '@podvirt/api/duration';
import { UsageError } from './usage-error.js';

export type OutputFormat = 'human' | 'json' | 'yaml';

export type Connection =
  | { readonly kind: 'unix'; readonly path: string }
  | { readonly kind: 'tls'; readonly address: string; readonly ca: string | undefined; readonly cert: string; readonly key: string };

export interface CallSettings {
  readonly connection: Connection;
  /**
   * Set when the command may go through the API server (KubeVirt's subresources): it takes
   * --kubeconfig and was not sent to the node (--node, --socket, --server). runCli takes this
   * way when a kubeconfig is found, else `connection`.
   */
  readonly api?: { readonly kubeconfig: string | undefined };
  readonly output: OutputFormat;
  readonly timeoutMs: number;
}

export type Invocation =
  | { readonly kind: 'help'; readonly command: CommandName | undefined }
  | { readonly kind: 'version'; readonly output: OutputFormat }
  | { readonly kind: 'operation'; readonly command: Exclude<OperationCommand, 'freeze'>; readonly target: node.VmiRef; readonly call: CallSettings }
  | { readonly kind: 'freeze'; readonly target: node.VmiRef; readonly unfreezeTimeoutSeconds: number; readonly call: CallSettings }
  | { readonly kind: 'guest'; readonly command: GuestCommand; readonly target: node.VmiRef; readonly call: CallSettings }
  | { readonly kind: 'console'; readonly target: node.VmiRef; readonly takeover: boolean; readonly call: CallSettings }
  | { readonly kind: 'vnc'; readonly target: node.VmiRef; readonly takeover: boolean; readonly port: number; readonly call: CallSettings }
  // Through the Kubernetes API, not the node API: create or delete a migration of the VMI.
  | { readonly kind: 'migrate'; readonly cancel: boolean; /** `migrate vm NAME`. */ readonly vm: boolean; readonly target: node.VmiRef; readonly kubeconfig: string | undefined; readonly output: OutputFormat; readonly timeoutMs: number }
  // Through the Kubernetes API: start, stop or restart a VirtualMachine.
  | { readonly kind: 'vm-state'; readonly command: VmStateCommandName; readonly target: node.VmiRef; readonly gracePeriodSeconds: number | undefined; readonly kubeconfig: string | undefined; readonly output: OutputFormat; readonly timeoutMs: number }
  // Through the Kubernetes API: hot-plug or unplug a volume of a VMI (and its VM with --persist).
  | { readonly kind: 'volume'; readonly request: VolumeRequest; readonly persist: boolean; readonly target: node.VmiRef; readonly kubeconfig: string | undefined; readonly output: OutputFormat; readonly timeoutMs: number }
  // namespace "" lists every namespace.
  | { readonly kind: 'list'; readonly namespace: string; readonly call: CallSettings };

// What parse-args needs from the environment: PODVIRT_NODE_SOCKET.
export interface ParseEnv {
  readonly socket: string | undefined;
}

type Flags = ReadonlyMap<FlagName, string>;

interface Tokens {
  readonly positionals: readonly string[];
  readonly flags: Flags;
  // Unknown flags and missing values, reported once the command is known.
  readonly problems: readonly string[];
}

const KIND_WORDS = new Set(['vmi', 'vmis', 'virtualmachineinstance', 'virtualmachineinstances']);
const VM_WORDS = new Set(['vm', 'vms', 'virtualmachine', 'virtualmachines']);
const MAX_INT32 = 2 ** 31 - 1;

export function parseArgs(argv: readonly string[], env: ParseEnv): Invocation {
  const { positionals, flags, problems } = tokenize(argv);
  const [word, ...rest] = positionals;
  if (word === 'help') return helpFor(rest[0]);
  if (word !== undefined && !isCommandName(word)) throw new UsageError(`unknown command "${word}"`, undefined);
  const [problem] = problems;
  if (problem !== undefined) throw new UsageError(problem, word);
  if (word === undefined || flags.has('help')) return { kind: 'help', command: word };
  checkFlagsAllowed(word, flags);
  if (word === 'version') {
    if (rest.length > 0) throw new UsageError(`"version" takes no arguments, got "${rest.join(' ')}"`, word);
    return { kind: 'version', output: outputFormat(flags, word) };
  }
  if (word === 'list') return { kind: 'list', namespace: listNamespace(rest, flags), call: callSettings(word, flags, env) };
  if (word === 'start' || word === 'stop' || word === 'restart') {
    const kubeconfig = flags.get('kubeconfig');
    if (kubeconfig === '') throw new UsageError('--kubeconfig needs a path', word);
    const target = vmiTarget(word, rest, flags, 'VM');
    return { kind: 'vm-state', command: word, target, gracePeriodSeconds: stopGracePeriod(word, flags), kubeconfig, output: outputFormat(flags, word), timeoutMs: callTimeout(word, flags) };
  }
  // `migrate vm NAME` is KubeVirt's virtualmachines/NAME/migrate (the VM's VMI has its name).
  const vm = word === 'migrate' && rest.length === 2 && VM_WORDS.has(rest[0] ?? '');
  const target = vmiTarget(word, rest, flags, vm ? 'VM' : 'VMI');
  if (word === 'migrate' || word === 'migrate-cancel') {
    const kubeconfig = flags.get('kubeconfig');
    if (kubeconfig === '') throw new UsageError('--kubeconfig needs a path', word);
    return { kind: 'migrate', cancel: word === 'migrate-cancel', vm, target, kubeconfig, output: outputFormat(flags, word), timeoutMs: callTimeout(word, flags) };
  }
  if (word === 'addvolume' || word === 'removevolume') {
    const kubeconfig = flags.get('kubeconfig');
    if (kubeconfig === '') throw new UsageError('--kubeconfig needs a path', word);
    return { kind: 'volume', request: volumeRequest(word, flags), persist: flags.has('persist'), target, kubeconfig, output: outputFormat(flags, word), timeoutMs: callTimeout(word, flags) };
  }
  const call = callSettings(word, flags, env);
  if (word === 'console') return { kind: 'console', target, takeover: flags.has('takeover'), call };
  if (word === 'vnc') return { kind: 'vnc', target, takeover: flags.has('takeover'), port: vncPort(flags), call };
  if (word === 'freeze') return { kind: 'freeze', target, unfreezeTimeoutSeconds: unfreezeTimeout(flags), call };
  if (word === 'guestosinfo' || word === 'userlist' || word === 'fslist') return { kind: 'guest', command: word, target, call };
  return { kind: 'operation', command: word, target, call };
}

// The request as KubeVirt's AddVolumeOptions / RemoveVolumeOptions; a bad value is named by its flag.
function volumeRequest(command: VolumeCommandName, flags: Flags): VolumeRequest {
  const name = flags.get('volume-name');
  if (name === undefined || name === '') throw new UsageError('--volume-name is required', command);
  if (command === 'removevolume') return { command, options: { name } };
  const serial = flags.get('serial');
  const cache = flags.get('cache');
  const options = {
    name,
    disk: { name, disk: { bus: 'scsi' }, ...(serial === undefined ? {} : { serial }), ...(cache === undefined ? {} : { cache }) },
    volumeSource: { persistentVolumeClaim: { claimName: flags.get('claim') ?? name } },
  };
  const [problem] = validateAddVolumeOptions(options);
  if (problem !== undefined) throw new UsageError(`invalid ${VOLUME_FLAGS[problem.field] ?? problem.field}: ${problem.message}`, command);
  return { command, options: options as AddVolumeOptions };
}

const VOLUME_FLAGS: Readonly<Record<string, string>> = {
  'name': '--volume-name',
  'disk.name': '--volume-name',
  'volumeSource.persistentVolumeClaim.claimName': '--claim',
  'disk.serial': '--serial',
  'disk.cache': '--cache',
};

function helpFor(word: string | undefined): Invocation {
  if (word === undefined) return { kind: 'help', command: undefined };
  if (!isCommandName(word)) throw new UsageError(`unknown command "${word}"`, undefined);
  return { kind: 'help', command: word };
}

// node:util's parseArgs does the splitting ("--name value", "--name=value", "-n value", "-nvalue",
// "--" ending the flags); non-strict, so that every unknown flag or missing value becomes a
// problem reported in podvirtctl's own words once the command is known.
const PARSE_OPTIONS: ParseArgsConfig['options'] = Object.fromEntries(
  (Object.keys(FLAGS) as FlagName[]).map((name) => {
    const short = Object.keys(FLAG_ALIASES).find((letter) => FLAG_ALIASES[letter] === name);
    return [name, { type: FLAGS[name].takesValue ? 'string' : 'boolean', ...(short === undefined ? {} : { short }) }];
  }),
);

function tokenize(argv: readonly string[]): Tokens {
  const positionals: string[] = [];
  const flags = new Map<FlagName, string>();
  const problems: string[] = [];
  const { tokens } = parseUtilArgs({ args: [...argv], options: PARSE_OPTIONS, strict: false, allowPositionals: true, tokens: true });
  // A group of short flags ("-Ax") comes back as one token per letter, all at the group's index.
  const groupsSeen = new Set<number>();
  for (const token of tokens) {
    if (token.kind === 'positional') {
      positionals.push(token.value);
      continue;
    }
    if (token.kind === 'option-terminator') continue;
    const arg = argv[token.index] ?? '';
    const short = !arg.startsWith('--');
    if (short && groupsSeen.has(token.index)) continue;
    if (short) groupsSeen.add(token.index);
    const name = short ? FLAG_ALIASES[token.rawName.slice(1)] : Object.hasOwn(FLAGS, token.name) ? (token.name as FlagName) : undefined;
    if (name === undefined) {
      problems.push(short ? `unknown shorthand flag: '${arg.charAt(1)}' in ${arg}` : `unknown flag: --${token.name}`);
      continue;
    }
    const spec = FLAGS[name];
    // "-n=value" is the value "value", as before; "-Ax" is -A given the value "x".
    const inline = short && arg.length > 2 ? arg.slice(2).replace(/^=/, '') : token.inlineValue === true ? token.value : undefined;
    if (!spec.takesValue) {
      if (inline !== undefined) problems.push(`flag --${name} takes no value, got "${inline}"`);
      flags.set(name, '');
    } else if (token.value !== undefined && !(short && inline === '')) {
      flags.set(name, inline ?? token.value);
    } else {
      problems.push(`flag --${name} needs a value: ${spec.placeholder}`);
    }
  }
  return { positionals, flags, problems };
}

function checkFlagsAllowed(command: CommandName, flags: Flags): void {
  const allowed = COMMANDS[command].flags;
  for (const name of flags.keys()) {
    if (!allowed.includes(name)) throw new UsageError(`"${command}" does not take --${name}`, command);
  }
}

function outputFormat(flags: Flags, command: CommandName): OutputFormat {
  const value = flags.get('output');
  if (value === undefined) return 'human';
  if (value === 'json' || value === 'yaml') return value;
  throw new UsageError(`invalid --output "${value}": accepted are json and yaml`, command);
}

function callSettings(command: CommandName, flags: Flags, env: ParseEnv): CallSettings {
  const api = apiRoute(command, flags);
  return {
    connection: connection(command, flags, env),
    ...(api === undefined ? {} : { api }),
    output: outputFormat(flags, command),
    timeoutMs: callTimeout(command, flags),
  };
}

function apiRoute(command: CommandName, flags: Flags): { kubeconfig: string | undefined } | undefined {
  if (!COMMANDS[command].flags.includes('node')) return undefined;
  const kubeconfig = flags.get('kubeconfig');
  if (kubeconfig === '') throw new UsageError('--kubeconfig needs a path', command);
  const nodeFlag = (['node', 'socket', 'server'] as const).find((name) => flags.has(name));
  if (nodeFlag === undefined) return { kubeconfig };
  if (kubeconfig !== undefined) throw new UsageError(`--kubeconfig goes through the API server, --${nodeFlag} to the node: give one or the other`, command);
  return undefined;
}

function connection(command: CommandName, flags: Flags, env: ParseEnv): Connection {
  const server = flags.get('server');
  if (server === undefined) {
    const tlsFlag = (['ca', 'cert', 'key'] as const).find((name) => flags.has(name));
    if (tlsFlag !== undefined) throw new UsageError(`--${tlsFlag} goes with --server HOST:PORT`, command);
    const path = flags.get('socket') ?? (env.socket === '' ? undefined : env.socket) ?? NODE_API_SOCKET;
    if (path === '') throw new UsageError('--socket needs a path', command);
    return { kind: 'unix', path };
  }
  if (flags.has('socket')) {
    throw new UsageError('--socket and --server exclude each other: the socket is on this host, --server is the TLS port', command);
  }
  if (!/^(\[[0-9a-fA-F:.]+\]|[^\s/:[\]]+):\d{1,5}$/.test(server)) {
    throw new UsageError(`invalid --server "${server}": want HOST:PORT`, command);
  }
  const cert = flags.get('cert');
  const key = flags.get('key');
  if (cert === undefined || key === undefined) {
    throw new UsageError('--server needs --cert and --key: the TLS port accepts only clients with a certificate', command);
  }
  return { kind: 'tls', address: server, ca: flags.get('ca'), cert, key };
}

function durationOrUndefined(text: string): number | undefined {
  try {
    return parseDuration(text);
  } catch (err) {
    if (err instanceof DurationError) return undefined;
    throw err;
  }
}

function callTimeout(command: CommandName, flags: Flags): number {
  const text = flags.get('timeout');
  // Unless --timeout says otherwise, the deadline of the Cmd call the node API call ends in.
  if (text === undefined) return command === 'freeze' ? CALL_DEADLINES.freezeMs : CALL_DEADLINES.longMs;
  const ms = durationOrUndefined(text);
  if (ms === undefined || ms <= 0) {
    throw new UsageError(`invalid --timeout "${text}": want a positive duration such as 20s, 2m or 90 (seconds)`, command);
  }
  return ms;
}

function vncPort(flags: Flags): number {
  if (!flags.has('proxy-only')) {
    throw new UsageError('podvirtctl starts no VNC viewer: pass --proxy-only and point a viewer at the port it prints', 'vnc');
  }
  const text = flags.get('port');
  if (text === undefined) return 0;
  const port = /^\d{1,5}$/.test(text) ? Number(text) : -1;
  if (port < 0 || port > 65535) throw new UsageError(`invalid --port "${text}": want a TCP port 0-65535 (0 picks a free one)`, 'vnc');
  return port;
}

function unfreezeTimeout(flags: Flags): number {
  const text = flags.get('unfreeze-timeout');
  if (text === undefined) return DEFAULT_UNFREEZE_TIMEOUT_SECONDS;
  const ms = durationOrUndefined(text);
  if (ms === undefined || ms % 1000 !== 0 || ms / 1000 > MAX_INT32) {
    throw new UsageError(
      `invalid --unfreeze-timeout "${text}": want whole seconds such as 5m, 300s or 300, or 0 to stay frozen until unfreeze`,
      'freeze',
    );
  }
  return ms / 1000;
}

function listNamespace(args: readonly string[], flags: Flags): string {
  const extra = args.filter((arg, i) => !(i === 0 && KIND_WORDS.has(arg)));
  if (extra.length > 0) throw new UsageError(`"list" takes no names, got "${extra.join(' ')}"`, 'list');
  const namespace = flags.get('namespace');
  if (flags.has('all-namespaces')) {
    if (namespace !== undefined) throw new UsageError('-n and -A exclude each other', 'list');
    return '';
  }
  if (namespace === '') throw new UsageError('-n needs a namespace', 'list');
  return namespace ?? DEFAULT_NAMESPACE;
}

/** --force [--grace-period N] of stop: the grace period to set, or undefined to keep the VMI's. */
function stopGracePeriod(command: CommandName, flags: Flags): number | undefined {
  const text = flags.get('grace-period');
  if (!flags.has('force')) {
    if (text !== undefined) throw new UsageError('--grace-period goes with --force', command);
    return undefined;
  }
  if (text === undefined) return 0;
  if (!/^\d+$/.test(text) || Number(text) > MAX_INT32) throw new UsageError(`invalid --grace-period "${text}": want whole seconds, 0 or more`, command);
  return Number(text);
}

function vmiTarget(command: CommandName, args: readonly string[], flags: Flags, what: 'VMI' | 'VM' = 'VMI'): node.VmiRef {
  let words = args;
  const [ownWords, otherWords] = what === 'VM' ? [VM_WORDS, KIND_WORDS] : [KIND_WORDS, VM_WORDS];
  if (words.length === 2 && words[0] !== undefined && otherWords.has(words[0])) {
    throw new UsageError(
      what === 'VM'
        ? `"${command}" acts on VirtualMachines: use "podvirtctl ${command} vm NAME"`
        : `podvirt acts on VMIs: use "podvirtctl ${command} vmi NAME" (a VM's VMI has the VM's name)`,
      command,
    );
  }
  if (words.length === 2 && words[0] !== undefined && ownWords.has(words[0])) words = words.slice(1);
  const [word] = words;
  if (word === undefined) throw new UsageError(`missing ${what}: give NAMESPACE/NAME, or NAME with -n NAMESPACE`, command);
  if (words.length > 1) throw new UsageError(`one ${what} at a time, got "${args.join(' ')}"`, command);
  const flagNamespace = flags.get('namespace');
  const parts = word.split('/');
  const [first, second] = parts;
  if (parts.length > 2 || parts.some((part) => part === '')) {
    throw new UsageError(`invalid ${what} "${word}": want NAMESPACE/NAME or NAME`, command);
  }
  if (second === undefined) {
    if (flagNamespace === '') throw new UsageError('-n needs a namespace', command);
    return { namespace: flagNamespace ?? DEFAULT_NAMESPACE, name: first ?? '' };
  }
  if (flagNamespace !== undefined && flagNamespace !== first) {
    throw new UsageError(`namespace given twice: "${word}" and -n ${flagNamespace}`, command);
  }
  return { namespace: first ?? '', name: second };
}
