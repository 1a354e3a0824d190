// One podvirtctl run, from argv to exit code, with the process kept out: main.ts passes in the
// arguments, the environment, the output streams and a signal that SIGINT aborts.
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { CommandName } from './command-table.js';
import type { CommandResult } from './commands/command-result.js';
import { runGuest } from './commands/guest.js';
import { attachExitCode, runGuestStream, type GuestStreams } from './commands/guest-streams.js';
import { runList } from './commands/list.js';
import { runMigrate } from './commands/migrate.js';
import { runOperation } from './commands/operations.js';
import { runVersion } from './commands/version.js';
import { runMigrateVmViaApi, runVmState, runVmStateViaApi } from './commands/vm-state.js';
import { runVolume, runVolumeViaApi } from './commands/volume.js';
import { withApiDeadline } from './api-deadline.js';
import { KubeMigrationApi, type MigrationApi } from './migration-api.js';
import type { NodeApi, NodeApiClient } from './node-client.js';
import type { VmStateApi, VolumeApi } from '@podvirt/api';
import { KubeClient, KubeVmStateApi, KubeVolumeApi, loadKubeConfig } from '@podvirt/kube-runtime';
import { SubresourceClient } from './subresource-client.js';
import { openApiGuestStream } from './stream/api-guest-stream.js';
import { openNodeClient } from './open-node-client.js';
import { parseArgs, type CallSettings, type Invocation, type OutputFormat, type ParseEnv } from './parse-args.js';
import { renderFailure, type FailureContext } from './render/failure.js';
import { renderStructured } from './render/structured.js';
import type { TerminalInput, TerminalOutput } from './stream/terminal.js';
import { formatHelp } from './usage.js';
import { UsageError } from './usage-error.js';

export interface TextSink {
  write(chunk: string): unknown;
}

export interface CliContext {
  readonly argv: readonly string[];
  readonly env: ParseEnv;
  readonly stdout: TextSink;
  readonly stderr: TextSink;
  readonly signal: AbortSignal;
  readonly version: string;
  /** The process's stdin and stdout as a terminal, for console and vnc. */
  readonly terminal?: { readonly stdin: TerminalInput; readonly stdout: TerminalOutput };
  /** Where migrate finds the cluster: the environment ($KUBECONFIG, in-cluster) and ~. */
  readonly kube?: { readonly env: Readonly<Record<string, string | undefined>>; readonly homeDir: string };
  /** Replaces the Kubernetes client for migrate (tests). */
  readonly openMigrationApi?: (kubeconfig: string | undefined) => Promise<OpenMigrationApi>;
  /** Replaces the Kubernetes client for start, stop and restart (tests). */
  readonly openVmApi?: (kubeconfig: string | undefined) => Promise<OpenVmApi>;
  /** Replaces the Kubernetes client of the VMI commands through the API server (tests). */
  readonly openKubeClient?: (kubeconfig: string | undefined) => Promise<KubeClient>;
  /** Replaces the Kubernetes client for addvolume and removevolume (tests). */
  readonly openVolumeApi?: (kubeconfig: string | undefined) => Promise<OpenVolumeApi>;
}

export interface OpenVolumeApi {
  readonly api: VolumeApi;
  close(): Promise<void>;
}

export interface OpenVmApi {
  readonly api: VmStateApi;
  close(): Promise<void>;
}

export interface OpenMigrationApi {
  readonly api: MigrationApi;
  close(): Promise<void>;
}

type MigrateInvocation = Extract<Invocation, { kind: 'migrate' }>;
type VmStateInvocation = Extract<Invocation, { kind: 'vm-state' }>;
type VolumeInvocation = Extract<Invocation, { kind: 'volume' }>;

type CallInvocation = Exclude<Extract<Invocation, { call: unknown }>, { kind: 'console' | 'vnc' }>;
type StreamInvocation = Extract<Invocation, { kind: 'console' | 'vnc' }>;

export async function runCli(context: CliContext): Promise<number> {
  let invocation: Invocation;
  try {
    invocation = parseArgs(context.argv, context.env);
  } catch (err) {
    return fail(context, err, { command: undefined, connection: undefined, timeoutMs: undefined, interrupted: false });
  }
  if (invocation.kind === 'help') {
    context.stdout.write(formatHelp(invocation.command));
    return 0;
  }
  if (invocation.kind === 'version') {
    write(context, runVersion(context.version), invocation.output);
    return 0;
  }
  if (invocation.kind === 'console' || invocation.kind === 'vnc') return runStream(context, invocation);
  if (invocation.kind === 'migrate') return runMigration(context, invocation);
  if (invocation.kind === 'vm-state') return runVmCommand(context, invocation);
  if (invocation.kind === 'volume') return runVolumeCommand(context, invocation);
  return runCall(context, invocation);
}

async function openKubeVmApi(context: CliContext, kubeconfig: string | undefined): Promise<OpenVmApi> {
  const client = await openKubeClient(context, kubeconfig);
  return { api: new KubeVmStateApi(client), close: () => client.close() };
}

/**
 * A command through KubeVirt's subresources when the user has a kubeconfig (as virtctl): the VMI
 * operations and guest queries, a VM's start, stop, restart and migrate, hotplug requests —
 * authorised as the user by podvirt-api, bounded as a whole by --timeout.
 */
async function runViaSubresources(context: CliContext, kubeconfig: string | undefined, command: CommandName, timeoutMs: number, output: OutputFormat, run: (api: SubresourceClient, signal: AbortSignal) => Promise<CommandResult>): Promise<number> {
  let client: KubeClient | undefined;
  try {
    client = await (context.openKubeClient ?? ((k) => openKubeClient(context, k)))(kubeconfig);
    const api = new SubresourceClient(client);
    write(context, await withApiDeadline(context.signal, timeoutMs, (signal) => run(api, signal)), output);
    return 0;
  } catch (err) {
    return fail(context, err, { command, connection: undefined, timeoutMs, interrupted: context.signal.aborted });
  } finally {
    await client?.close();
  }
}

async function runVmCommand(context: CliContext, invocation: VmStateInvocation): Promise<number> {
  const { command, target, kubeconfig, timeoutMs, output } = invocation;
  if (viaApiServer(context, { kubeconfig })) {
    return runViaSubresources(context, kubeconfig, command, timeoutMs, output, (api, signal) => runVmStateViaApi(api, command, target, { gracePeriodSeconds: invocation.gracePeriodSeconds }, signal));
  }
  let opened: OpenVmApi | undefined;
  try {
    const api = (opened = await (context.openVmApi ?? ((k) => openKubeVmApi(context, k)))(invocation.kubeconfig)).api;
    const result = await withApiDeadline(context.signal, invocation.timeoutMs, (signal) => runVmState(api, invocation.command, invocation.target, { gracePeriodSeconds: invocation.gracePeriodSeconds }, signal));
    write(context, result, invocation.output);
    return 0;
  } catch (err) {
    return fail(context, err, { command: invocation.command, connection: undefined, timeoutMs: invocation.timeoutMs, interrupted: context.signal.aborted });
  } finally {
    await opened?.close();
  }
}

async function runVolumeCommand(context: CliContext, invocation: VolumeInvocation): Promise<number> {
  const { request, target, persist, kubeconfig, timeoutMs, output } = invocation;
  if (viaApiServer(context, { kubeconfig })) {
    return runViaSubresources(context, kubeconfig, request.command, timeoutMs, output, (api, signal) => runVolumeViaApi(api, target, request, persist, signal));
  }
  let opened: OpenVolumeApi | undefined;
  const open = context.openVolumeApi ?? (async (k: string | undefined): Promise<OpenVolumeApi> => {
    const client = await openKubeClient(context, k);
    return { api: new KubeVolumeApi(client), close: () => client.close() };
  });
  try {
    const api = (opened = await open(invocation.kubeconfig)).api;
    write(context, await withApiDeadline(context.signal, invocation.timeoutMs, (signal) => runVolume(api, invocation.target, invocation.request, invocation.persist, signal)), invocation.output);
    return 0;
  } catch (err) {
    return fail(context, err, { command: invocation.request.command, connection: undefined, timeoutMs: invocation.timeoutMs, interrupted: context.signal.aborted });
  } finally {
    await opened?.close();
  }
}

/** The cluster's client for the commands that talk to the Kubernetes API (the subresources; migrate, start, stop, restart, addvolume, removevolume without a kubeconfig: in-cluster). */
async function openKubeClient(context: CliContext, kubeconfig: string | undefined): Promise<KubeClient> {
  const sources = context.kube ?? { env: {}, homeDir: '' };
  return KubeClient.create(await loadKubeConfig({ kubeconfig, env: sources.env, homeDir: sources.homeDir }), { userAgent: 'podvirtctl' });
}

async function openKubeMigrationApi(context: CliContext, kubeconfig: string | undefined): Promise<OpenMigrationApi> {
  const client = await openKubeClient(context, kubeconfig);
  return { api: new KubeMigrationApi(client), close: () => client.close() };
}

async function runMigration(context: CliContext, invocation: MigrateInvocation): Promise<number> {
  const command = invocation.cancel ? 'migrate-cancel' : 'migrate';
  if (invocation.vm && viaApiServer(context, { kubeconfig: invocation.kubeconfig })) {
    return runViaSubresources(context, invocation.kubeconfig, command, invocation.timeoutMs, invocation.output, (api, signal) => runMigrateVmViaApi(api, invocation.target, signal));
  }
  let opened: OpenMigrationApi | undefined;
  try {
    const api = (opened = await (context.openMigrationApi ?? ((k) => openKubeMigrationApi(context, k)))(invocation.kubeconfig)).api;
    write(context, await withApiDeadline(context.signal, invocation.timeoutMs, (signal) => runMigrate(api, invocation.target, invocation.cancel, signal)), invocation.output);
    return 0;
  } catch (err) {
    return fail(context, err, { command, connection: undefined, timeoutMs: invocation.timeoutMs, interrupted: context.signal.aborted });
  } finally {
    await opened?.close();
  }
}

async function runStream(context: CliContext, invocation: StreamInvocation): Promise<number> {
  const { connection, timeoutMs, api } = invocation.call;
  const viaApi = viaApiServer(context, api);
  let client: NodeApiClient | undefined;
  let kube: KubeClient | undefined;
  try {
    const terminal = context.terminal;
    if (terminal === undefined) throw new UsageError(`${invocation.kind} needs the process's terminal`, invocation.kind);
    let streams: GuestStreams;
    if (viaApi) {
      const k = await (context.openKubeClient ?? ((path) => openKubeClient(context, path)))(api.kubeconfig);
      kube = k;
      streams = { openStream: (kind, options) => openApiGuestStream(k, kind, options) };
    } else {
      client = await openNodeClient(connection, timeoutMs, context.signal);
      streams = client;
    }
    return await runGuestStream(streams, invocation, { ...terminal, stderr: context.stderr, signal: context.signal });
  } catch (err) {
    const code = fail(context, err, { command: invocation.kind, connection: viaApi ? undefined : connection, timeoutMs, interrupted: context.signal.aborted });
    return context.signal.aborted ? code : (attachExitCode(err) ?? code);
  } finally {
    client?.close();
    await kube?.close();
  }
}

/**
 * Through the API server when the command may go there and the user has a kubeconfig: --kubeconfig,
 * $KUBECONFIG or ~/.kube/config. A pod's in-cluster service account does not count: podvirtctl run
 * in the handler's pod (kubectl exec) keeps talking to its node.
 */
function viaApiServer(context: CliContext, api: CallSettings['api']): api is { kubeconfig: string | undefined } {
  if (api === undefined) return false;
  const { env, homeDir } = context.kube ?? { env: {}, homeDir: '' };
  if (api.kubeconfig !== undefined || (env['KUBECONFIG'] ?? '').split(delimiter).some((p) => p !== '')) return true;
  return homeDir !== '' && existsSync(join(homeDir, '.kube', 'config'));
}

function runApiCall(context: CliContext, invocation: Extract<CallInvocation, { kind: 'operation' | 'freeze' | 'guest' }>, kubeconfig: string | undefined): Promise<number> {
  const { timeoutMs, output } = invocation.call;
  return runViaSubresources(context, kubeconfig, commandOf(invocation), timeoutMs, output, (api, signal) => (invocation.kind === 'guest' ? runGuest(api, invocation, signal) : runOperation(api, invocation, signal)));
}

async function runCall(context: CliContext, invocation: CallInvocation): Promise<number> {
  const { connection, timeoutMs, output } = invocation.call;
  if (invocation.kind !== 'list' && viaApiServer(context, invocation.call.api)) return runApiCall(context, invocation, invocation.call.api.kubeconfig);
  let client: NodeApiClient | undefined;
  try {
    client = await openNodeClient(connection, timeoutMs, context.signal);
    write(context, await execute(client, invocation, context.signal), output);
    return 0;
  } catch (err) {
    const command = commandOf(invocation);
    return fail(context, err, { command, connection, timeoutMs, interrupted: context.signal.aborted });
  } finally {
    client?.close();
  }
}

function execute(api: NodeApi, invocation: CallInvocation, signal: AbortSignal): Promise<CommandResult> {
  switch (invocation.kind) {
    case 'operation':
    case 'freeze':
      return runOperation(api, invocation, signal);
    case 'guest':
      return runGuest(api, invocation, signal);
    case 'list':
      return runList(api, invocation, signal);
  }
}

function commandOf(invocation: CallInvocation): CommandName {
  switch (invocation.kind) {
    case 'operation':
    case 'guest':
      return invocation.command;
    case 'freeze':
      return 'freeze';
    case 'list':
      return 'list';
  }
}

function write(context: CliContext, result: CommandResult, output: OutputFormat): void {
  if (output !== 'human') {
    context.stdout.write(renderStructured(result.data, output));
    return;
  }
  if (result.text !== '') context.stdout.write(result.text);
  if (result.note !== '') context.stderr.write(result.note);
}

function fail(context: CliContext, err: unknown, failureContext: FailureContext): number {
  const failure = renderFailure(err, failureContext);
  context.stderr.write(failure.stderr);
  return failure.exitCode;
}
