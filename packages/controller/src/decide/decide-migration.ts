// decide: (migration, its VMI, the VMI's launcher pods, now) → what the migration, the VMI and
// the target pod should become. Pure; sync-migration.ts carries it out. The controller's share
// of a live migration (the handlers write the rest of `status.migrationState`):
//
//   ""/Pending --VMI Running and LiveMigratable, target pod created--> Scheduling
//   Scheduling --target pod Running on another node--> Scheduled
//   Scheduled --VMI migrationState {uid, source, target} written--> PreparingTarget
//   PreparingTarget --targetNodeAddress (target handler)--> TargetReady
//   TargetReady --startTimestamp (source handler)--> Running
//   Running --completed, target domain detected--> nodeName handed over --> Succeeded
//   any of them: refused, cancelled, target pod lost, VMI gone, failed --> Failed
//
// A migration deleted while it runs keeps its finalizer until it ends: the source is asked to
// abort (`abortRequested`) and the migration fails once the source says so; one that had not
// reached the source yet fails at once.

import type { CoreV1Event, V1Pod } from '@kubernetes/client-node';
import {
  jsonEqual,
  ConditionStatus,
  EventReason,
  EventType,
  formatFieldErrors,
  isFinalMigrationPhase,
  kubeTime,
  MIGRATION_FINALIZER,
  MIGRATION_TARGET_NODE_LABEL,
  MigrationPhase,
  NODE_NAME_LABEL,
  notLiveMigratableReason,
  upsertCondition,
  validateMigration,
  VmiPhase,
  type MigrationStatus,
  type VirtualMachineInstance,
  type VirtualMachineInstanceMigration,
  type VmiCondition,
  type VmiMigrationState,
} from '@podvirt/api';
import { computeTermination, isPodDown, isTerminating, podNodeName, timeOf } from './launcher-pod-state.js';
import { MigrationConditionType, MigrationFailureReason, type MigrationDecision, type MigrationEvent } from './migration-decision.js';
import { imagePullProblem, mountProblem, unschedulable } from './pod-start-problem.js';
import { isMigrationTargetPod, vmiPod } from './vmi-pod.js';

export interface DecideMigrationInput {
  readonly vmim: VirtualMachineInstanceMigration;
  /** The VMI named by spec.vmiName, as the informer has it; undefined when there is none. */
  readonly vmi: VirtualMachineInstance | undefined;
  /** The launcher pods the VMI owns: its own and any migration's target pod. */
  readonly pods: readonly V1Pod[];
  /** The name of another unfinished migration of the same VMI that goes first. */
  readonly waitsFor?: string | undefined;
  readonly now: Date;
  /** The kubelet's FailedMount Events about the target pod. */
  readonly mountEvents?: readonly CoreV1Event[];
  readonly unschedulableTimeoutMs?: number;
}

/** How long a target pod no node can take is waited for (KubeVirt's default, 5 minutes). */
export const DEFAULT_UNSCHEDULABLE_TIMEOUT_MS = 5 * 60_000;

interface Failure {
  readonly reason: MigrationFailureReason;
  readonly message: string;
  /** Refused before anything was made: the Rejected condition says why. */
  readonly rejected?: boolean;
}

interface Progress {
  /** New phases reached, in order. */
  readonly phases: MigrationPhase[];
  readonly createPod?: boolean;
  /** The VMI's new migrationState (the controller's fields set, the handlers' kept). */
  readonly vmiState?: VmiMigrationState;
  readonly vmiLabels?: Record<string, string | null>;
  readonly events?: MigrationEvent[];
  readonly abortRequested?: boolean;
  readonly requeueAfterMs?: number;
}

type Outcome = { readonly fail: Failure } | { readonly succeed: true } | { readonly progress: Progress };

interface Context {
  readonly input: DecideMigrationInput;
  readonly uid: string;
  readonly phase: string;
  readonly deleting: boolean;
  readonly vmi: VirtualMachineInstance | undefined;
  /** The VMI's migrationState when it is this migration's. */
  readonly state: VmiMigrationState | undefined;
  readonly targetPod: V1Pod | undefined;
}

const stay: Outcome = { progress: { phases: [] } };

function reject(reason: MigrationFailureReason, message: string): Outcome {
  return { fail: { reason, message, rejected: true } };
}

function fail(reason: MigrationFailureReason, message: string): Outcome {
  return { fail: { reason, message } };
}

function vmiName(ctx: Context): string {
  return ctx.input.vmim.spec?.vmiName ?? '';
}

function targetPodProblem(ctx: Context): string | undefined {
  const pod = ctx.targetPod;
  if (pod === undefined) return 'the target pod is gone';
  const name = pod.metadata?.name ?? '';
  if (isTerminating(pod)) return `the target pod ${name} is being deleted`;
  if (isPodDown(pod)) return `the target pod ${name} has terminated${computeTermination(pod)}`;
  const node = podNodeName(pod);
  if (node !== undefined && node === ctx.vmi?.status?.nodeName) return `the target pod ${name} was placed on the source node ${node}`;
  return undefined;
}

function pendingStep(ctx: Context): Outcome {
  const { input, vmi } = ctx;
  if (ctx.deleting) return fail(MigrationFailureReason.MigrationAborted, 'the migration was deleted before it started');
  const errors = validateMigration(input.vmim);
  if (errors.length > 0) return reject(MigrationFailureReason.InvalidMigration, `invalid migration: ${formatFieldErrors(errors)}`);
  if (vmi === undefined) return reject(MigrationFailureReason.VMIDoesNotExist, `VMI ${vmiName(ctx)} does not exist in namespace ${input.vmim.metadata.namespace ?? ''}`);
  if (vmi.metadata.deletionTimestamp != null) return reject(MigrationFailureReason.VMIDeleted, `VMI ${vmiName(ctx)} is being deleted`);
  if (input.waitsFor !== undefined) return stay;
  const phase = vmi.status?.phase ?? VmiPhase.Unset;
  if (phase !== VmiPhase.Running) {
    return reject(MigrationFailureReason.VMINotRunning, `VMI ${vmiName(ctx)} is ${phase === VmiPhase.Unset ? 'not started' : phase}, not Running: only a running VMI can be migrated`);
  }
  const why = notLiveMigratableReason(vmi);
  if (why !== undefined) {
    return reject(MigrationFailureReason.NotLiveMigratable, `VMI ${vmiName(ctx)} is not live migratable: ${why}`);
  }
  if (vmiPod(vmi, input.pods) === undefined) return reject(MigrationFailureReason.VMINotRunning, `VMI ${vmiName(ctx)} has no launcher pod on its node ${vmi.status?.nodeName ?? ''}`);
  return { progress: { phases: [MigrationPhase.Scheduling], createPod: ctx.targetPod === undefined } };
}

function schedulingStep(ctx: Context): Outcome {
  const pod = ctx.targetPod;
  const lost = targetPodProblem(ctx);
  if (lost !== undefined || pod === undefined) return fail(MigrationFailureReason.TargetPodFailed, lost ?? 'the target pod is gone');
  const problem = imagePullProblem(pod) ?? mountProblem(pod, ctx.input.mountEvents ?? []);
  if (problem !== undefined) return fail(MigrationFailureReason.TargetPodFailed, `the target pod ${pod.metadata?.name ?? ''} cannot start: ${problem.reason}: ${problem.message}`);
  const unplaced = unschedulable(pod);
  if (unplaced !== undefined) {
    const since = timeOf(unplaced.lastTransitionTime) ?? ctx.input.now.getTime();
    const left = since + (ctx.input.unschedulableTimeoutMs ?? DEFAULT_UNSCHEDULABLE_TIMEOUT_MS) - ctx.input.now.getTime();
    if (left <= 0) return fail(MigrationFailureReason.TargetPodUnschedulable, `no node can take the target pod: ${unplaced.message ?? unplaced.reason ?? 'Unschedulable'}`);
    return { progress: { phases: [], requeueAfterMs: left } };
  }
  const started = pod.status?.phase === 'Running' && podNodeName(pod) !== undefined;
  return started ? { progress: { phases: [MigrationPhase.Scheduled] } } : stay;
}

/** Scheduled: the target runs; the VMI learns where it goes, which hands the work to the handlers. */
function scheduledStep(ctx: Context): Outcome {
  const { vmi, targetPod } = ctx;
  const lost = targetPodProblem(ctx);
  if (lost !== undefined || targetPod === undefined || vmi === undefined) return fail(MigrationFailureReason.TargetPodFailed, lost ?? 'the target pod is gone');
  const targetNode = podNodeName(targetPod) ?? '';
  const sourceNode = vmi.status?.nodeName ?? '';
  const state: VmiMigrationState = ctx.state ?? {
    migrationUid: ctx.uid,
    sourceNode,
    sourcePod: vmiPod(vmi, ctx.input.pods)?.metadata?.name ?? '',
    targetNode,
    targetPod: targetPod.metadata?.name ?? '',
  };
  const message = `Migrating VMI ${vmi.metadata.name ?? ''} from node ${sourceNode} to node ${targetNode}`;
  return {
    progress: {
      phases: [MigrationPhase.PreparingTarget],
      vmiState: state,
      vmiLabels: { [MIGRATION_TARGET_NODE_LABEL]: targetNode },
      events: [{ on: 'both', type: EventType.Normal, reason: EventReason.Migrating, message }],
    },
  };
}

/** PreparingTarget, TargetReady, Running: the handlers work; the controller watches and hands over. */
function handlersStep(ctx: Context): Outcome {
  const { vmi, state } = ctx;
  if (state === undefined) {
    if (vmi === undefined || vmi.metadata.deletionTimestamp != null) return fail(MigrationFailureReason.VMIDeleted, `VMI ${vmiName(ctx)} was deleted during the migration`);
    return fail(MigrationFailureReason.MigrationFailed, `the migration state of VMI ${vmiName(ctx)} names another migration`);
  }
  if (state.completed === true && state.failed !== true && state.targetNodeDomainDetected === true) return { succeed: true };
  if (state.failed === true) {
    const reason = ctx.deleting ? MigrationFailureReason.MigrationAborted : MigrationFailureReason.MigrationFailed;
    return fail(reason, state.failureReason ?? (ctx.deleting ? 'the migration was cancelled' : 'the source reported the migration failed'));
  }
  if (vmi === undefined || vmi.metadata.deletionTimestamp != null) return fail(MigrationFailureReason.VMIDeleted, `VMI ${vmiName(ctx)} was deleted during the migration`);
  if (ctx.deleting) {
    if (state.startTimestamp === undefined) return fail(MigrationFailureReason.MigrationAborted, 'the migration was cancelled before the source started it');
    if (state.abortRequested === true) return { progress: { phases: [], abortRequested: true } };
    return { progress: { phases: [], vmiState: { ...state, abortRequested: true }, abortRequested: true } };
  }
  const lost = targetPodProblem(ctx);
  if (lost !== undefined) return fail(MigrationFailureReason.TargetPodFailed, lost);
  if (vmi.status?.phase !== VmiPhase.Running) return fail(MigrationFailureReason.VMINotRunning, `VMI ${vmiName(ctx)} is ${vmi.status?.phase ?? 'not started'}, no longer Running`);
  const phases: MigrationPhase[] = [];
  let at = ctx.phase;
  if (at === MigrationPhase.PreparingTarget && state.targetNodeAddress !== undefined) phases.push((at = MigrationPhase.TargetReady));
  if (at === MigrationPhase.TargetReady && state.startTimestamp !== undefined) phases.push(MigrationPhase.Running);
  return { progress: { phases } };
}

function step(ctx: Context): Outcome {
  switch (ctx.phase) {
    case MigrationPhase.Unset:
    case MigrationPhase.Pending:
      return pendingStep(ctx);
    case MigrationPhase.Scheduling:
    case MigrationPhase.Scheduled: {
      if (ctx.deleting) return fail(MigrationFailureReason.MigrationAborted, 'the migration was deleted before the target was ready');
      const vmi = ctx.vmi;
      if (vmi === undefined || vmi.metadata.deletionTimestamp != null) return fail(MigrationFailureReason.VMIDeleted, `VMI ${vmiName(ctx)} was deleted during the migration`);
      if (vmi.status?.phase !== VmiPhase.Running) return fail(MigrationFailureReason.VMINotRunning, `VMI ${vmiName(ctx)} is ${vmi.status?.phase ?? 'not started'}, no longer Running`);
      return ctx.phase === MigrationPhase.Scheduling ? schedulingStep(ctx) : scheduledStep(ctx);
    }
    default:
      return handlersStep(ctx);
  }
}

function withCondition(conditions: readonly VmiCondition[] | undefined, type: string, reason: string, message: string, now: Date): VmiCondition[] {
  return upsertCondition(conditions, { type, status: ConditionStatus.True, reason, message }, kubeTime(now));
}

function withPhases(status: MigrationStatus, phases: readonly MigrationPhase[], now: Date): MigrationStatus {
  const last = phases[phases.length - 1];
  if (last === undefined) return status;
  const stamps = phases.map((phase) => ({ phase, phaseTransitionTimestamp: kubeTime(now) }));
  return { ...status, phase: last, phaseTransitionTimestamps: [...(status.phaseTransitionTimestamps ?? []), ...stamps] };
}

/** Already Pending when first seen: the phase list starts there, as the contract's flow says. */
function fromUnset(phase: string, phases: MigrationPhase[]): MigrationPhase[] {
  return phase === MigrationPhase.Unset && phases[0] !== MigrationPhase.Pending ? [MigrationPhase.Pending, ...phases] : phases;
}

export function decideMigration(input: DecideMigrationInput): MigrationDecision {
  const { vmim, vmi, now } = input;
  const uid = vmim.metadata.uid ?? '';
  const phase = vmim.status?.phase ?? MigrationPhase.Unset;
  const vmiState = vmi?.status?.migrationState;
  const state = vmiState?.migrationUid === uid && uid !== '' ? vmiState : undefined;
  const targetPods = input.pods.filter((pod) => isMigrationTargetPod(pod, uid));
  const ctx: Context = {
    input, uid, phase, vmi, state,
    deleting: vmim.metadata.deletionTimestamp != null,
    targetPod: targetPods.find((pod) => !isTerminating(pod)) ?? targetPods[0],
  };
  const hasFinalizer = vmim.metadata.finalizers?.includes(MIGRATION_FINALIZER) ?? false;
  const current = vmim.status ?? {};
  const liveTargets = targetPods.filter((pod) => !isTerminating(pod)).flatMap((pod) => (pod.metadata?.name ? [pod.metadata.name] : []));
  const labelled = vmi?.metadata.labels?.[MIGRATION_TARGET_NODE_LABEL] !== undefined;
  const base = { createTargetPod: false, vmi: undefined, vmiLabels: undefined, requeueAfterMs: undefined, addFinalizer: false };
  if (isFinalMigrationPhase(phase)) {
    // Settled earlier; finish what a crash or a conflict may have left undone, silently.
    const failed = phase === MigrationPhase.Failed;
    return {
      ...base, status: current, statusChanged: false, events: [],
      deletePods: failed ? liveTargets : [],
      vmiLabels: failed && state !== undefined && labelled ? { [MIGRATION_TARGET_NODE_LABEL]: null } : undefined,
      removeFinalizer: hasFinalizer,
    };
  }
  const outcome = step(ctx);
  if ('succeed' in outcome) return succeed(ctx, current, hasFinalizer);
  if ('fail' in outcome) return failed(ctx, outcome.fail, current, hasFinalizer, liveTargets, labelled);
  const p = outcome.progress;
  let status = withPhases(current, fromUnset(phase, p.phases), now);
  const copied = p.vmiState ?? state;
  if (copied !== undefined) status = { ...status, migrationState: copied };
  if (p.abortRequested === true) {
    status = { ...status, conditions: withCondition(status.conditions, MigrationConditionType.AbortRequested, 'MigrationDeleted', 'the migration was deleted; the source was asked to abort it', now) };
  }
  const labels = p.vmiLabels !== undefined && Object.entries(p.vmiLabels).some(([k, v]) => vmi?.metadata.labels?.[k] !== v) ? p.vmiLabels : undefined;
  return {
    ...base,
    status,
    statusChanged: !jsonEqual(vmim.status ?? {}, status),
    addFinalizer: !hasFinalizer && !ctx.deleting && p.createPod === true,
    removeFinalizer: false,
    createTargetPod: p.createPod === true,
    deletePods: [],
    vmi: p.vmiState !== undefined && !jsonEqual(p.vmiState, vmiState ?? {}) ? { migrationState: p.vmiState } : undefined,
    vmiLabels: labels,
    events: p.events ?? [],
    requeueAfterMs: p.requeueAfterMs,
  };
}

function succeed(ctx: Context, current: MigrationStatus, hasFinalizer: boolean): MigrationDecision {
  const state = ctx.state ?? {};
  const target = state.targetNode ?? '';
  const vmi = ctx.vmi;
  const status = { ...withPhases(current, [MigrationPhase.Succeeded], ctx.input.now), migrationState: state };
  const handedOver = vmi?.status?.nodeName === target;
  const labels = vmi?.metadata.labels ?? {};
  const relabel = labels[NODE_NAME_LABEL] !== target || labels[MIGRATION_TARGET_NODE_LABEL] !== undefined;
  return {
    status,
    statusChanged: true,
    addFinalizer: false,
    removeFinalizer: hasFinalizer,
    createTargetPod: false,
    deletePods: [],
    vmi: handedOver ? undefined : { migrationState: state, nodeName: target },
    vmiLabels: relabel ? { [NODE_NAME_LABEL]: target, [MIGRATION_TARGET_NODE_LABEL]: null } : undefined,
    events: [{ on: 'both', type: EventType.Normal, reason: EventReason.Migrated, message: `The VirtualMachineInstance migrated to node ${target}.` }],
    requeueAfterMs: undefined,
  };
}

function failed(ctx: Context, f: Failure, current: MigrationStatus, hasFinalizer: boolean, liveTargets: string[], labelled: boolean): MigrationDecision {
  const now = ctx.input.now;
  const { state, vmi } = ctx;
  // The source never started it (no startTimestamp): no handler will end it, so the controller
  // does, and the handlers see an ended migration and let the target go.
  const endsIt = state !== undefined && state.startTimestamp === undefined && state.failed !== true && vmi?.metadata.deletionTimestamp == null;
  const ended: VmiMigrationState | undefined = endsIt
    ? { ...state, failed: true, endTimestamp: kubeTime(now), failureReason: f.message, ...(f.reason === MigrationFailureReason.MigrationAborted ? { abortRequested: true } : {}) }
    : state;
  const copy: VmiMigrationState = { ...(ended ?? current.migrationState ?? {}) };
  copy.failed = true;
  copy.failureReason ??= f.message;
  copy.endTimestamp ??= kubeTime(now);
  let status: MigrationStatus = { ...withPhases(current, [MigrationPhase.Failed], now), migrationState: copy };
  if (f.rejected === true) status = { ...status, conditions: withCondition(status.conditions, MigrationConditionType.Rejected, f.reason, f.message, now) };
  const onVmi = vmi !== undefined && vmi.metadata.deletionTimestamp == null;
  return {
    status,
    statusChanged: true,
    addFinalizer: false,
    removeFinalizer: hasFinalizer,
    createTargetPod: false,
    deletePods: liveTargets,
    vmi: endsIt && ended !== undefined ? { migrationState: ended } : undefined,
    vmiLabels: state !== undefined && labelled && onVmi ? { [MIGRATION_TARGET_NODE_LABEL]: null } : undefined,
    events: [{ on: onVmi ? 'both' : 'migration', type: EventType.Warning, reason: EventReason.MigrationFailed, message: `${f.reason}: ${f.message}` }],
    requeueAfterMs: undefined,
  };
}
