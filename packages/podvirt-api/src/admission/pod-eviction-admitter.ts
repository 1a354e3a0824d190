// The eviction webhook (pods/eviction, CREATE): an eviction of a launcher pod becomes what the
// VMI's eviction strategy asks for. `None`, or `LiveMigrateIfPossible` on a VMI that cannot
// migrate: the eviction goes through and the pod's graceful stop shuts the guest down.
// `LiveMigrate`, `LiveMigrateIfPossible` on a migratable VMI, and `External`: the VMI is marked
// (`status.evacuationNodeName` = the pod's node) and the eviction refused with 429, which
// `kubectl drain` retries; podvirt-controller migrates a marked VMI away (External: an actor
// outside podvirt acts), and once the source pod has completed the next try goes through.
// `LiveMigrate` on a VMI that cannot migrate refuses the eviction naming why, so a drain stops
// there rather than kill the guest.
// Every refusal of a marked VMI says where its evacuation stands, as `kubectl drain` prints it on
// each retry: the migration under way (its phase and target node), or the last one that failed
// (its reason, e.g. no node could take the target pod) and when podvirt-controller tries again.
// The messages keep KubeVirt's beginnings ("Eviction triggered evacuation of VMI", "Evacuation in
// progress"), which tools such as the descheduler look for.

import { APP_LABEL, DOMAIN_ANNOTATION, evacuationBackoff, EVACUATION_BACKOFF_MAX_MS, effectiveEvictionStrategy, EventReason, EvictionStrategy, isFinalMigrationPhase, isFinalPhase, LAUNCHER_APP_LABEL_VALUE, MigrationPhase, notLiveMigratableReason, type VirtualMachineInstance, type VirtualMachineInstanceMigration } from '@podvirt/api';
import { ALLOWED, type AdmissionRequest, type AdmissionResult } from './admission-review.js';

/** The launcher pod as the webhook reads it. */
export interface EvictedPod {
  readonly metadata?: { readonly name?: string; readonly labels?: Readonly<Record<string, string>>; readonly annotations?: Readonly<Record<string, string>> };
  readonly spec?: { readonly nodeName?: string };
  readonly status?: { readonly phase?: string };
}

export interface PodEvictionDeps {
  /** undefined: no such pod. */
  readonly getPod: (namespace: string, name: string, signal: AbortSignal) => Promise<EvictedPod | undefined>;
  /** undefined: no such VMI. */
  readonly getVmi: (namespace: string, name: string, signal: AbortSignal) => Promise<VirtualMachineInstance | undefined>;
  /** The migrations of VMI `vmiName` in `namespace`. */
  readonly listMigrations: (namespace: string, vmiName: string, signal: AbortSignal) => Promise<readonly VirtualMachineInstanceMigration[]>;
  /** Writes `status.evacuationNodeName` (a status merge patch). */
  readonly markForEvacuation: (vmi: VirtualMachineInstance, nodeName: string, signal: AbortSignal) => Promise<void>;
  /** A Warning Event on the VMI. */
  readonly warn: (vmi: VirtualMachineInstance, reason: string, message: string) => void;
  /** The cluster default for a VMI without `spec.evictionStrategy`. */
  readonly clusterDefault: EvictionStrategy;
  /** Bound of the reads and the write: under the webhook's timeoutSeconds (5). */
  readonly timeoutMs?: number;
  readonly now?: () => Date;
}

export const EVICTION_WEBHOOK_TIMEOUT_MS = 4_000;

/** KubeVirt answers every refusal of an eviction with 429, which kubectl drain retries. */
function refused(message: string): AdmissionResult {
  return { allowed: false, status: { code: 429, reason: 'TooManyRequests', message } };
}

function isDryRun(request: AdmissionRequest): boolean {
  if (request.dryRun === true) return true;
  const options = (request.object as { deleteOptions?: { dryRun?: unknown } } | undefined)?.deleteOptions;
  return Array.isArray(options?.dryRun) && options.dryRun.includes('All');
}

export function podEvictionAdmitter(deps: PodEvictionDeps): (request: AdmissionRequest) => Promise<AdmissionResult> {
  return async (request) => {
    const namespace = request.namespace ?? '';
    const name = request.name ?? '';
    if (request.operation !== 'CREATE' || namespace === '' || name === '') return ALLOWED;
    const signal = AbortSignal.timeout(deps.timeoutMs ?? EVICTION_WEBHOOK_TIMEOUT_MS);
    // A pod that cannot be read is not ours to protect: the eviction itself will say what is wrong.
    const pod = await deps.getPod(namespace, name, signal).catch(() => undefined);
    if (pod?.metadata?.labels?.[APP_LABEL] !== LAUNCHER_APP_LABEL_VALUE) return ALLOWED;
    if (pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed') return ALLOWED;
    const vmiName = pod.metadata.annotations?.[DOMAIN_ANNOTATION];
    if (vmiName === undefined) return ALLOWED;
    let vmi;
    try {
      vmi = await deps.getVmi(namespace, vmiName, signal);
    } catch (err) {
      return refused(`podvirt could not read VMI "${namespace}/${vmiName}" of pod ${name}: ${err instanceof Error ? err.message : String(err)}`);
    }
    // The VMI is gone (its pod is going too) or has ended: nothing left to move.
    if (vmi === undefined || isFinalPhase(vmi.status?.phase)) return ALLOWED;
    return decide(deps, request, vmi, pod, signal);
  };
}

async function decide(deps: PodEvictionDeps, request: AdmissionRequest, vmi: VirtualMachineInstance, pod: EvictedPod, signal: AbortSignal): Promise<AdmissionResult> {
  const ref = `${vmi.metadata.namespace ?? ''}/${vmi.metadata.name ?? ''}`;
  const strategy = effectiveEvictionStrategy(vmi, deps.clusterDefault);
  const notMigratable = notLiveMigratableReason(vmi);
  if (strategy === EvictionStrategy.None) return ALLOWED;
  if (strategy === EvictionStrategy.LiveMigrateIfPossible && notMigratable !== undefined) return ALLOWED;
  if (strategy === EvictionStrategy.LiveMigrate && notMigratable !== undefined) {
    const message = `VMI "${ref}" has eviction strategy LiveMigrate but is not live migratable (${notMigratable}): its launcher pod cannot be evicted`;
    deps.warn(vmi, EventReason.EvictionNotMigratable, message);
    return refused(message);
  }
  const nodeName = pod.spec?.nodeName ?? '';
  const marked = vmi.status?.evacuationNodeName ?? '';
  const triggered = `Eviction triggered evacuation of VMI "${ref}"`;
  const progress = async (): Promise<string> => `${triggered}: ${await evacuationProgress(deps, vmi, strategy, marked === '' ? nodeName : marked, signal)}`;
  if (marked !== '') return refused(`Evacuation in progress: ${await progress()}`);
  // The pod of a migration's target (or a pod not yet placed) is not where the VMI runs.
  if (nodeName === '' || vmi.status?.nodeName !== nodeName) return refused(`Eviction request for the target pod of VMI "${ref}"`);
  if (!isDryRun(request)) {
    try {
      await deps.markForEvacuation(vmi, nodeName, signal);
    } catch (err) {
      return refused(`podvirt failed to mark VMI "${ref}" for evacuation: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  return refused(await progress());
}

const seconds = (ms: number): string => `${Math.ceil(ms / 1000)} s`;

/** Where the evacuation of `vmi` away from `node` stands, in words for the drain's user. */
async function evacuationProgress(deps: PodEvictionDeps, vmi: VirtualMachineInstance, strategy: EvictionStrategy, node: string, signal: AbortSignal): Promise<string> {
  if (strategy === EvictionStrategy.External) return `its eviction strategy is External: an actor outside podvirt moves it away from node ${node}`;
  let migrations;
  try {
    migrations = await deps.listMigrations(vmi.metadata.namespace ?? '', vmi.metadata.name ?? '', signal);
  } catch (err) {
    return `podvirt-controller migrates it away from node ${node} (its migrations could not be read: ${err instanceof Error ? err.message : String(err)})`;
  }
  const running = migrations.find((m) => !isFinalMigrationPhase(m.status?.phase));
  if (running !== undefined) return migrationUnderWay(running);
  const backoff = evacuationBackoff(migrations, node, deps.now?.() ?? new Date());
  if (backoff.last === undefined) return `podvirt-controller migrates it away from node ${node}`;
  const failed = `migration ${backoff.last.metadata.name ?? ''} failed (${backoff.last.status?.migrationState?.failureReason ?? 'no reason given'})`;
  const count = backoff.failures === 1 ? '1 failure' : `${backoff.failures} failures`;
  if (backoff.leftMs === 0) return `${failed}; podvirt-controller migrates it again now`;
  return `${failed}; podvirt-controller tries again in ${seconds(backoff.leftMs)} (backoff after ${count}, at most ${EVACUATION_BACKOFF_MAX_MS / 60_000} min)`;
}

function migrationUnderWay(m: VirtualMachineInstanceMigration): string {
  const name = `migration ${m.metadata.name ?? ''}`;
  const phase = m.status?.phase ?? MigrationPhase.Pending;
  const target = m.status?.migrationState?.targetNode;
  if (phase === MigrationPhase.Pending) return `${name} is Pending`;
  if (phase === MigrationPhase.Scheduling || target === undefined) return `${name} is ${phase}: its target pod waits for a node`;
  return `${name} to node ${target} is ${phase}`;
}
