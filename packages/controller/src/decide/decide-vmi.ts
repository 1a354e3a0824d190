// decide: (VMI, its launcher pods, now) → what the VMI and its pods should become. Pure; the
// executor (sync-vmi.ts) carries it out. The controller's share of the phase machine:
//
//   ""/Pending --pod exists--> Scheduling --pod Running+Ready on a node--> Scheduled
//   Scheduling/Scheduled: pod gone, finished or terminating      --> Failed
//   Running (the handler's phase): pod gone                       --> Failed
//                                  pod finished for podDownGraceMs --> Failed
//   on a node whose handler is silent (nodeUnresponsive): a VMI whose pod is gone or finished
//   fails at once with NodeUnresponsive (no handler will write its end); one whose launcher
//   still runs only gets Ready=False NodeUnresponsive, and is never failed for the silence alone.
//
// Running → Succeeded/Failed is the handler's; a launcher that exits cleanly makes its pod
// finish before the handler has written the final phase, so a finished pod of a Running VMI
// is given a grace window instead of being failed at once.

import type { CoreV1Event, V1Pod, V1PodCondition } from '@kubernetes/client-node';
import {
  jsonEqual,
  checkVmi,
  ConditionStatus,
  EventReason,
  EventType,
  formatFieldErrors,
  isFinalPhase,
  kubeTime,
  NODE_NAME_LABEL,
  removeCondition,
  upsertCondition,
  VMI_FINALIZER,
  VmiConditionType,
  VmiPhase,
  type VirtualMachineInstance,
  type VmiCondition,
  type VmiStatus,
} from '@podvirt/api';
import { ClaimReason, type ClaimCheck } from './claim-check.js';
import { checkHostDisks, HOST_DISK_OFF, type HostDiskPolicy } from './host-disk-policy.js';
import { computeImage, computeTermination, isPodDown, isPodReady, isTerminating, podDownSince, podNodeName } from './launcher-pod-state.js';
import { FAILED_MOUNT_REASON, imagePullProblem, mountProblem, unschedulable } from './pod-start-problem.js';
import { withReadyCondition } from './ready-condition.js';
import { FailureReason, type DecisionEvent, type VmiDecision } from './vmi-decision.js';
import { vmiPod } from './vmi-pod.js';

export interface DecideInput {
  readonly vmi: VirtualMachineInstance;
  /**
   * The launcher pods owned by this VMI (matched by the VMI's UID): its own and a migration's
   * target pod, told apart by vmi-pod.ts; `status.activePods` lists them all.
   */
  readonly pods: readonly V1Pod[];
  readonly now: Date;
  /** Why the last pod creation failed; reported in the Synchronized condition. */
  readonly createError?: string;
  /** How long a Running VMI's finished pod waits for the handler's final phase. */
  readonly podDownGraceMs?: number;
  /** The VMI's PVCs as the claim informer sees them; no PVC volume is checked when unset. */
  readonly claims?: ClaimCheck;
  /** The kubelet's FailedMount Events about the VMI's pods. */
  readonly mountEvents?: readonly CoreV1Event[];
  /** The HostDisk gate and allowed directories; every hostDisk is refused when unset. */
  readonly hostDisk?: HostDiskPolicy;
  /** The handler of the VMI's node (`status.nodeName`) stopped beating (node-heartbeat.ts). */
  readonly nodeUnresponsive?: boolean;
}

/** A VMI waiting for a claim that is in use by another VMI looks again this often. */
export const CLAIM_IN_USE_RECHECK_MS = 5_000;

/** Long enough for the handler to see the domain's end and write Succeeded or Failed. */
export const DEFAULT_POD_DOWN_GRACE_MS = 30_000;

/** Reason of the Synchronized=False condition when no pod can be created. */
export const FAILED_CREATE_REASON = 'FailedCreate';

/** The VMI condition copied from the pod while no node takes it (type as the pod spells it). */
const POD_SCHEDULED = 'PodScheduled';

/** The Event reason when no node can take the launcher pod, as the scheduler records it on the pod. */
const FAILED_SCHEDULING_REASON = 'FailedScheduling';

const POD_PROBLEM_REASONS: ReadonlySet<string> = new Set(['ErrImagePull', 'ImagePullBackOff', FAILED_MOUNT_REASON]);

interface Step {
  phase: string;
  reason?: string;
  events: DecisionEvent[];
  requeueAfterMs?: number;
}

function fail(reason: FailureReason, message: string, type: EventType = EventType.Warning): Step {
  return { phase: VmiPhase.Failed, reason, events: [{ type, reason, message }] };
}

/** The node the VMI runs on, when its handler is silent. */
function silentNode(input: DecideInput): string | undefined {
  return input.nodeUnresponsive === true && input.vmi.status?.nodeName ? input.vmi.status.nodeName : undefined;
}

/** The launcher of a VMI on a node is gone or finished: the VMI fails. */
function podLost(input: DecideInput, pod: V1Pod | undefined): Step | undefined {
  const silent = silentNode(input);
  if (silent !== undefined && (!pod || isPodDown(pod))) {
    // As KubeVirt's node controller: a Normal Event, the failure is the node's, not the VM's.
    return fail(FailureReason.NodeUnresponsive, `the handler of node ${silent} is not responsive and the virt-launcher pod ${pod ? 'has terminated' : 'is gone'}: the VMI is failed`, EventType.Normal);
  }
  if (!pod) return fail(FailureReason.PodNotExists, 'virt-launcher pod is gone');
  if (isPodDown(pod)) return fail(FailureReason.PodFailed, `virt-launcher pod ${pod.metadata?.name ?? ''} has terminated${computeTermination(pod)}`);
  return undefined;
}

function nextPhase(input: DecideInput, phase: string, pod: V1Pod | undefined, deleting: boolean): Step {
  switch (phase) {
    case VmiPhase.Unset:
    case VmiPhase.Pending:
      return { phase: pod && !deleting ? VmiPhase.Scheduling : VmiPhase.Pending, events: [] };
    case VmiPhase.Scheduling:
    case VmiPhase.Scheduled: {
      const lost = podLost(input, pod);
      if (lost) return lost;
      if (pod && isTerminating(pod)) return fail(FailureReason.PodTerminating, `virt-launcher pod ${pod.metadata?.name ?? ''} is terminating`);
      const ready = phase === VmiPhase.Scheduling && pod && !deleting && isPodReady(pod) && podNodeName(pod);
      return { phase: ready ? VmiPhase.Scheduled : phase, events: [] };
    }
    case VmiPhase.Running:
      return runningStep(input, pod);
    default:
      return { phase, events: [] };
  }
}

function runningStep(input: DecideInput, pod: V1Pod | undefined): Step {
  const lost = podLost(input, pod);
  // No grace on a silent node: the handler that would write the end is gone.
  if (!lost || !pod || lost.reason === FailureReason.NodeUnresponsive) return lost ?? { phase: VmiPhase.Running, events: [] };
  const grace = input.podDownGraceMs ?? DEFAULT_POD_DOWN_GRACE_MS;
  const since = podDownSince(pod);
  const left = since === undefined ? 0 : since + grace - input.now.getTime();
  return left > 0 ? { phase: VmiPhase.Running, events: [], requeueAfterMs: left } : lost;
}

function activePods(pods: readonly V1Pod[]): Record<string, string> {
  const active: Record<string, string> = {};
  for (const pod of pods) {
    const node = podNodeName(pod);
    const uid = pod.metadata?.uid;
    if (node && uid) active[uid] = node;
  }
  return active;
}

function scheduledFields(pod: V1Pod): Partial<VmiStatus> {
  const image = computeImage(pod);
  const qos = pod.status?.qosClass;
  const node = podNodeName(pod);
  return {
    ...(node ? { nodeName: node } : {}),
    ...(qos === 'Guaranteed' || qos === 'Burstable' || qos === 'BestEffort' ? { qosClass: qos } : {}),
    ...(image ? { launcherContainerImageVersion: image } : {}),
  };
}

/**
 * Until the VMI is Scheduled the controller owns its status, Synchronized included; from
 * Scheduled on the handler does, and the controller leaves every condition but Ready alone
 * (KubeVirt's rule). Removing the handler's Synchronized=False made each side re-queue the
 * other at once: a status write storm.
 */
function controllerOwnsStatus(phase: string): boolean {
  return phase === VmiPhase.Unset || phase === VmiPhase.Pending || phase === VmiPhase.Scheduling;
}

/** `sticky`: a message that changes on every attempt does not rewrite a condition of the same reason. */
interface SyncError {
  readonly reason: string;
  readonly message: string;
  readonly sticky?: boolean;
}

function synchronizedCondition(conditions: VmiCondition[], problem: SyncError | undefined, now: Date): VmiCondition[] {
  if (problem === undefined) return removeCondition(conditions, VmiConditionType.Synchronized);
  const previous = conditions.find((c) => c.type === VmiConditionType.Synchronized);
  // A failed pod create names the pod the API server generated, different on every attempt;
  // rewriting the condition each time would wake the VMI's watch and retry at once, past the
  // queue's backoff (a create storm). As KubeVirt's CheckFailure, the same reason keeps it.
  const sticky = problem.sticky === true && previous?.status === ConditionStatus.False && previous.reason === problem.reason;
  const message = sticky ? previous.message : problem.message;
  return upsertCondition(conditions, { type: VmiConditionType.Synchronized, status: ConditionStatus.False, reason: problem.reason, message }, kubeTime(now));
}

/** The pod's PodScheduled=False, copied as KubeVirt does while the VMI is Scheduling; removed once it is gone. */
function podScheduledCondition(conditions: VmiCondition[], podCondition: V1PodCondition | undefined, now: Date): VmiCondition[] {
  if (podCondition === undefined) return removeCondition(conditions, POD_SCHEDULED);
  return upsertCondition(conditions, {
    type: POD_SCHEDULED,
    status: ConditionStatus.False,
    reason: podCondition.reason,
    message: podCondition.message,
    lastTransitionTime: podCondition.lastTransitionTime === undefined ? undefined : kubeTime(new Date(podCondition.lastTransitionTime)),
  }, kubeTime(now));
}

/** Why the controller cannot make progress, for Synchronized=False: no pod could be created (or a claim holds it), its image cannot be pulled or a volume mounted. */
function syncProblem(phase: string, pod: V1Pod | undefined, pending: SyncError | undefined, mountEvents: readonly CoreV1Event[]): SyncError | undefined {
  if (phase === VmiPhase.Pending) return pending;
  if (phase === VmiPhase.Scheduling && pod !== undefined) return imagePullProblem(pod) ?? mountProblem(pod, mountEvents);
  return undefined;
}

function desiredStatus(input: DecideInput, step: Step, pod: V1Pod | undefined, syncError: SyncError | undefined): VmiStatus {
  const current = input.vmi.status ?? {};
  const phase = step.phase;
  const status: VmiStatus = { ...current, phase: phase as VmiPhase };
  if (step.reason) status.reason = step.reason;
  if (phase !== (current.phase ?? VmiPhase.Unset)) {
    const stamp = { phase: phase as VmiPhase, phaseTransitionTimestamp: kubeTime(input.now) };
    status.phaseTransitionTimestamps = [...(current.phaseTransitionTimestamps ?? []), stamp];
    if (phase === VmiPhase.Scheduled && pod) Object.assign(status, scheduledFields(pod));
  }
  if (!isFinalPhase(phase)) {
    const active = activePods(input.pods);
    if (Object.keys(active).length > 0) status.activePods = active;
    else delete status.activePods;
  }
  let conditions = withReadyCondition(current.conditions, phase, pod, input.now, silentNode(input));
  // What the controller learned of the claims, while it owns the status (up to Scheduled).
  const claimed = input.claims?.volumeStatus ?? [];
  if ((phase === VmiPhase.Pending || phase === VmiPhase.Scheduling) && claimed.length > 0) status.volumeStatus = claimed;
  if (controllerOwnsStatus(current.phase ?? VmiPhase.Unset)) {
    const unplaced = phase === VmiPhase.Scheduling && pod !== undefined ? unschedulable(pod) : undefined;
    conditions = podScheduledCondition(conditions, unplaced, input.now);
    conditions = synchronizedCondition(conditions, syncProblem(phase, pod, syncError, input.mountEvents ?? []), input.now);
  }
  status.conditions = conditions;
  return status;
}

/** No pod runs any more: each is gone, finished, or was never bound to a node. */
function podsReleased(pods: readonly V1Pod[]): boolean {
  return pods.every((pod) => isPodDown(pod) || !podNodeName(pod));
}

function invalidSpec(vmi: VirtualMachineInstance, hostDisk: HostDiskPolicy): string | undefined {
  const errors = [...checkVmi(vmi), ...checkHostDisks(vmi, hostDisk)];
  return errors.length > 0 ? `invalid VirtualMachineInstance: ${formatFieldErrors(errors)}` : undefined;
}

/** A Warning Event when the pod's reason for not starting appears or changes (not on every resync). */
function startProblemEvents(before: readonly VmiCondition[], after: readonly VmiCondition[]): DecisionEvent[] {
  const events: DecisionEvent[] = [];
  for (const type of [POD_SCHEDULED, VmiConditionType.Synchronized] as const) {
    const now = after.find((c) => c.type === type);
    if (now?.reason === undefined) continue;
    // The claim reasons of a Pending VMI have their own Events; only the pod's are recorded here.
    if (type === VmiConditionType.Synchronized && !POD_PROBLEM_REASONS.has(now.reason)) continue;
    const was = before.find((c) => c.type === type);
    if (was?.reason === now.reason && was.message === now.message) continue;
    const reason = type === POD_SCHEDULED ? FAILED_SCHEDULING_REASON : now.reason;
    events.push({ type: EventType.Warning, reason, message: now.message ?? now.reason });
  }
  return events;
}

export function decideVmi(input: DecideInput): VmiDecision {
  const { vmi, pods } = input;
  const deleting = vmi.metadata.deletionTimestamp != null;
  const hasFinalizer = vmi.metadata.finalizers?.includes(VMI_FINALIZER) ?? false;
  const pod = vmiPod(vmi, pods);
  const currentPhase = vmi.status?.phase ?? VmiPhase.Unset;
  const step = nextPhase(input, currentPhase, pod, deleting);
  const wantsPod = !deleting && !pod && (step.phase === VmiPhase.Pending || step.phase === VmiPhase.Unset);
  const invalid = wantsPod ? invalidSpec(vmi, input.hostDisk ?? HOST_DISK_OFF) : undefined;
  const waiting = wantsPod && invalid === undefined ? input.claims?.blocked : undefined;
  const createError = invalid ?? (wantsPod ? input.createError : undefined);
  // A pod-create API error (not an invalid spec) names a generated pod, new on each attempt.
  const syncError = createError !== undefined ? { reason: FAILED_CREATE_REASON, message: createError, sticky: invalid === undefined } : waiting;
  const status = desiredStatus(input, step, pod, syncError);
  // Failing a VMI that is being deleted anyway is bookkeeping, not news.
  const events = deleting ? [] : [...step.events];
  const previousSync = vmi.status?.conditions?.find((c) => c.type === VmiConditionType.Synchronized);
  if (invalid !== undefined && previousSync?.message !== invalid) {
    // The Event a user of KubeVirt looks for when a VMI cannot be made to run is SyncFailed
    // (virt-handler's); the condition says no pod was created for it.
    events.push({ type: EventType.Warning, reason: EventReason.SyncFailed, message: invalid });
  }
  if (waiting !== undefined && (previousSync?.reason !== waiting.reason || previousSync.message !== waiting.message)) {
    // KubeVirt records a missing claim as a Normal event; a claim held by another VM is a warning.
    const type = waiting.reason === ClaimReason.PvcInUse ? EventType.Warning : EventType.Normal;
    events.push({ type, reason: waiting.reason, message: waiting.message });
  }
  if (!deleting) events.push(...startProblemEvents(vmi.status?.conditions ?? [], status.conditions ?? []));
  const nodeName = step.phase === VmiPhase.Scheduled ? status.nodeName : undefined;
  // The handler is done with a final VMI, and never saw one that did not reach a node.
  const handlerDone = isFinalPhase(step.phase) || step.phase === VmiPhase.Pending || step.phase === VmiPhase.Unset || step.phase === VmiPhase.Scheduling;
  const cleanUp = deleting && handlerDone;
  return {
    status,
    statusChanged: !jsonEqual(vmi.status ?? {}, status),
    nodeNameLabel: nodeName !== undefined && vmi.metadata.labels?.[NODE_NAME_LABEL] !== nodeName ? nodeName : undefined,
    addFinalizer: !deleting && !hasFinalizer && !isFinalPhase(step.phase),
    createPod: wantsPod && invalid === undefined && waiting === undefined,
    deletePods: cleanUp ? pods.filter((p) => !isTerminating(p)).flatMap((p) => (p.metadata?.name ? [p.metadata.name] : [])) : [],
    removeFinalizer: cleanUp && hasFinalizer && podsReleased(pods),
    events,
    requeueAfterMs: waiting?.reason === ClaimReason.PvcInUse ? CLAIM_IN_USE_RECHECK_MS : step.requeueAfterMs,
  };
}
