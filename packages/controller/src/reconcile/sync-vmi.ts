// The executor: settles identity (which VMI, is the cache caught up), asks decideVmi what to
// do, and does it against the API. Order matters: the finalizer goes on before a pod exists,
// and comes off only after the pods are deleted and the status is written. A write that loses
// an optimistic-concurrency race is redone from a fresh read.

import type { V1Pod } from '@kubernetes/client-node';
import { EventType, jsonEqual, NODE_NAME_LABEL, VMI_FINALIZER, VmiPhase, type VirtualMachineInstance } from '@podvirt/api';
import { splitObjectKey } from '@podvirt/kube-runtime';
import type { Logger } from 'pino';
import type { EventRecorder, MountEventStore, PodClient, PodStore, VmiClient, VmiStore } from '../kube/cluster-roles.js';
import { checkClaims, type ClaimCheck, type ClaimStore } from '../decide/claim-check.js';
import { isConflict, isNotFound } from '../controller-error.js';
import { decideVmi } from '../decide/decide-vmi.js';
import { planHotplug, type HotplugPlan } from '../decide/hotplug-attachments.js';
import { renderAttachmentPod } from '../render/render-attachment-pod.js';
import type { PodExpectations } from './pod-expectations.js';
import { renderLauncherPod, type LauncherPodConfig } from '../render/render-launcher-pod.js';
import type { VmiDecision } from '../decide/vmi-decision.js';
import type { NodeHealth } from '../decide/node-heartbeat.js';

export interface SyncDeps {
  readonly vmis: VmiStore;
  readonly pods: PodStore;
  readonly vmiClient: VmiClient;
  readonly podClient: PodClient;
  readonly events: EventRecorder;
  readonly expectations: PodExpectations;
  readonly podConfig: LauncherPodConfig;
  readonly now: () => Date;
  readonly log: Logger;
  readonly podDownGraceMs?: number;
  /** PVCs and the pods using them; PVC volumes are not checked without it. */
  readonly claims?: ClaimStore;
  /** FailedMount Events of the VMI's pods; none are looked at when unset. */
  readonly mountEvents?: MountEventStore;
  /** Whether a node's handler stopped beating; no node is judged when unset. */
  readonly nodeHealth?: NodeHealth;
}

export interface SyncResult {
  /** Sync again after this long even without a change. */
  readonly requeueAfterMs?: number;
}

/** Event reasons of the pod lifecycle, as KubeVirt's controller records them on the VMI. */
export const PodEventReason = {
  SuccessfulCreate: 'SuccessfulCreate',
  FailedCreate: 'FailedCreate',
  SuccessfulDelete: 'SuccessfulDelete',
  FailedDelete: 'FailedDelete',
} as const;

const MAX_CONFLICT_RETRIES = 3;

class Attempt {
  vmi: VirtualMachineInstance;
  readonly pods: V1Pod[];

  constructor(
    private readonly deps: SyncDeps,
    private readonly key: string,
    vmi: VirtualMachineInstance,
    private readonly signal: AbortSignal | undefined,
  ) {
    this.vmi = vmi;
    this.pods = deps.pods.ownedBy(vmi.metadata.namespace ?? '', vmi.metadata.uid ?? '');
  }

  get namespace(): string {
    return this.vmi.metadata.namespace ?? '';
  }

  get name(): string {
    return this.vmi.metadata.name ?? '';
  }

  get claimCheck(): ClaimCheck | undefined {
    return this.deps.claims === undefined ? undefined : checkClaims(this.vmi, this.deps.claims);
  }

  /** The hotplug share of this pass: attachment pods and their volumes' status (a running VMI's). */
  hotplug(decision: VmiDecision): { decision: VmiDecision; plan: HotplugPlan | undefined } {
    const { claims, pods } = this.deps;
    if (claims === undefined || pods.attachmentPods === undefined) return { decision, plan: undefined };
    const attached = pods.attachmentPods(this.namespace, this.vmi.metadata.uid ?? '');
    const plan = planHotplug(this.vmi, attached, claims);
    // Not running: no pod is created and no entry written, so nothing to tell either.
    if (decision.status.phase !== VmiPhase.Running) return { decision, plan: { create: [], delete: plan.delete, volumeStatus: plan.volumeStatus, events: [] } };
    const { volumeStatus: _was, ...rest } = decision.status;
    const status = plan.volumeStatus.length === 0 ? rest : { ...rest, volumeStatus: plan.volumeStatus };
    return { decision: { ...decision, status, statusChanged: !jsonEqual(this.vmi.status ?? {}, status) }, plan };
  }

  async applyHotplug(plan: HotplugPlan): Promise<void> {
    const { deps } = this;
    for (const { volume, claimName } of plan.create) {
      const claim = deps.claims?.getClaim(this.namespace, claimName);
      if (claim === undefined) continue;
      deps.expectations.expectCreation(this.key);
      let pod: V1Pod;
      try {
        pod = await deps.podClient.create(this.namespace, renderAttachmentPod(this.vmi, volume, claim, deps.podConfig.image), this.signal);
      } catch (err) {
        deps.expectations.creationObserved(this.key);
        await deps.events.record(this.vmi, EventType.Warning, PodEventReason.FailedCreate, `Error creating attachment pod for volume ${volume}: ${err instanceof Error ? err.message : String(err)}`);
        throw err;
      }
      deps.log.info({ pod: pod.metadata?.name, volume }, 'created attachment pod');
      await deps.events.record(this.vmi, EventType.Normal, PodEventReason.SuccessfulCreate, `Created attachment pod ${pod.metadata?.name ?? ''} for volume ${volume}`);
    }
    for (const name of plan.delete) {
      await deps.podClient.delete(this.namespace, name, undefined, this.signal);
      deps.log.info({ pod: name }, 'deleted attachment pod');
      await deps.events.record(this.vmi, EventType.Normal, PodEventReason.SuccessfulDelete, `Deleted attachment pod ${name}`);
    }
  }

  decide(createError?: string): VmiDecision {
    const claims = this.claimCheck;
    const now = this.deps.now();
    const nodeName = this.vmi.status?.nodeName;
    const input = {
      vmi: this.vmi,
      pods: this.pods,
      now,
      ...(nodeName && this.deps.nodeHealth?.isUnresponsive(nodeName, now) === true ? { nodeUnresponsive: true } : {}),
      ...(this.deps.podConfig.hostDisk === undefined ? {} : { hostDisk: this.deps.podConfig.hostDisk }),
      ...(createError === undefined ? {} : { createError }),
      ...(claims === undefined ? {} : { claims }),
      ...(this.deps.mountEvents === undefined ? {} : { mountEvents: this.pods.flatMap((p) => this.deps.mountEvents?.mountEvents(this.namespace, p.metadata?.uid ?? '') ?? []) }),
    };
    return decideVmi(this.deps.podDownGraceMs === undefined ? input : { ...input, podDownGraceMs: this.deps.podDownGraceMs });
  }

  async setFinalizers(finalizers: string[]): Promise<void> {
    const rv = this.vmi.metadata.resourceVersion;
    const patch = { finalizers, ...(rv === undefined ? {} : { resourceVersion: rv }) };
    this.vmi = await this.deps.vmiClient.patchMetadata(this.namespace, this.name, patch, this.signal);
  }

  async createPod(): Promise<void> {
    const { deps, key } = this;
    deps.expectations.expectCreation(key);
    let pod: V1Pod;
    try {
      pod = await deps.podClient.create(this.namespace, renderLauncherPod(this.vmi, deps.podConfig, this.claimCheck?.claims), this.signal);
    } catch (err) {
      deps.expectations.creationObserved(key);
      const message = `Error creating pod: ${err instanceof Error ? err.message : String(err)}`;
      await deps.events.record(this.vmi, EventType.Warning, PodEventReason.FailedCreate, message);
      const failed = this.decide(message);
      if (failed.statusChanged) this.vmi = await deps.vmiClient.replaceStatus({ ...this.vmi, status: failed.status }, this.signal);
      throw err;
    }
    this.pods.push(pod);
    deps.log.info({ pod: pod.metadata?.name }, 'created launcher pod');
    await deps.events.record(this.vmi, EventType.Normal, PodEventReason.SuccessfulCreate, `Created virtual machine pod ${pod.metadata?.name ?? ''}`);
  }

  async deletePod(name: string): Promise<void> {
    const pod = this.pods.find((p) => p.metadata?.name === name);
    try {
      await this.deps.podClient.delete(this.namespace, name, pod?.metadata?.uid, this.signal);
    } catch (err) {
      const message = `Error deleting pod ${name}: ${err instanceof Error ? err.message : String(err)}`;
      await this.deps.events.record(this.vmi, EventType.Warning, PodEventReason.FailedDelete, message);
      throw err;
    }
    this.deps.log.info({ pod: name }, 'deleted launcher pod');
    await this.deps.events.record(this.vmi, EventType.Normal, PodEventReason.SuccessfulDelete, `Deleted virtual machine pod ${name}`);
  }

  async apply(decided: VmiDecision): Promise<SyncResult> {
    const { decision, plan } = this.hotplug(decided);
    if (plan !== undefined) await this.applyHotplug(plan);
    const finalizers = this.vmi.metadata.finalizers ?? [];
    if (decision.addFinalizer) await this.setFinalizers([...finalizers, VMI_FINALIZER]);
    if (decision.createPod) await this.createPod();
    for (const name of decision.deletePods) await this.deletePod(name);
    if (decision.statusChanged) {
      this.vmi = await this.deps.vmiClient.replaceStatus({ ...this.vmi, status: decision.status }, this.signal);
      this.deps.log.debug({ phase: decision.status.phase }, 'status written');
    }
    // The label hands the VMI to its node's handler: only once status.nodeName says the same,
    // so the handler never acts on a VMI whose scheduling the controller has not recorded.
    if (decision.nodeNameLabel !== undefined) {
      const labels = { [NODE_NAME_LABEL]: decision.nodeNameLabel };
      this.vmi = await this.deps.vmiClient.patchMetadata(this.namespace, this.name, { labels }, this.signal);
    }
    if (decision.removeFinalizer) await this.setFinalizers((this.vmi.metadata.finalizers ?? []).filter((f) => f !== VMI_FINALIZER));
    for (const event of [...decision.events, ...(plan?.events ?? [])]) await this.deps.events.record(this.vmi, event.type, event.reason, event.message);
    const requeue = [decision.requeueAfterMs, plan?.requeueAfterMs].filter((ms) => ms !== undefined);
    return requeue.length === 0 ? {} : { requeueAfterMs: Math.min(...requeue) };
  }
}

/** Whether the VMI no longer exists as this UID: a 404 from a write is about it, not about a pod. */
async function gone(deps: SyncDeps, vmi: VirtualMachineInstance, signal: AbortSignal | undefined): Promise<boolean> {
  const fresh = await deps.vmiClient.read(vmi.metadata.namespace ?? '', vmi.metadata.name ?? '', signal);
  return fresh === undefined || fresh.metadata.uid !== vmi.metadata.uid;
}

/** Reconciles the VMI `namespace/name`. Throws to have the key retried with backoff. */
export async function syncVmi(deps: SyncDeps, key: string, signal?: AbortSignal): Promise<SyncResult> {
  const { namespace, name } = splitObjectKey(key);
  let vmi = deps.vmis.get(namespace, name);
  if (!vmi) {
    // Its pods go with it: they carry an ownerReference the garbage collector follows.
    deps.expectations.forget(key);
    return {};
  }
  // The key's logger has the VMI's namespace and name (vmiLogBindings); its UID is known now.
  deps = { ...deps, log: deps.log.child({ uid: vmi.metadata.uid }) };
  const waiting = deps.expectations.pendingFor(key);
  if (waiting > 0) return { requeueAfterMs: waiting };
  for (let attempt = 0; ; attempt++) {
    const run = new Attempt(deps, key, vmi, signal);
    try {
      return await run.apply(run.decide());
    } catch (err) {
      if (isNotFound(err) && (await gone(deps, vmi, signal))) {
        // Deleted while this pass wrote to it (its last finalizer came off): nothing is left
        // to do, and the informer's delete ends the key. Not a failure to retry.
        deps.log.debug({ err: (err as Error).message }, 'VMI deleted mid-reconcile');
        return {};
      }
      if (!isConflict(err) || attempt >= MAX_CONFLICT_RETRIES) throw err;
      const fresh = await deps.vmiClient.read(namespace, name, signal);
      if (!fresh) return {};
      deps.log.debug({ attempt }, 'conflict, retrying on a fresh object');
      vmi = fresh;
      // A pod created by the failed attempt is in the cache soon; until then, wait for it.
      if (deps.expectations.pendingFor(key) > 0) return { requeueAfterMs: deps.expectations.pendingFor(key) };
    }
  }
}
