import type { V1ContainerStatus, V1Pod, V1PodCondition, V1PodStatus } from '@kubernetes/client-node';

export type ContainerState =
  | { state: 'waiting'; reason: string; message?: string }
  | { state: 'running'; startedAt: Date }
  | { state: 'terminated'; exitCode: number; signal?: number; reason: string; message?: string; startedAt: Date; finishedAt: Date };

export interface ContainerRecord {
  name: string;
  image: string;
  restartCount: number;
  current: ContainerState;
  containerID?: string;
  /** An init container: ready once it has completed. */
  init?: boolean;
  /** A native sidecar (init container with restartPolicy Always): ready while it runs. */
  sidecar?: boolean;
}

const ownedConditions = ['PodScheduled', 'PodReadyToStartContainers', 'Initialized', 'ContainersReady', 'Ready'];

/** The pod's sandbox as the status shows it: its IPs once made, or why it could not be made. */
export interface PodSandboxState {
  podIPs: readonly string[];
  error?: string;
}

/**
 * The pod status a kubelet reports, from its containers' states: phase, (init) container
 * statuses, and the Initialized / ContainersReady / Ready conditions, Ready also requiring
 * every readiness gate's condition to be True. Conditions owned by others are kept.
 * Init containers run one after another before any container: until all have completed,
 * the pod is Pending and not Initialized; one failing under restartPolicy Never fails it.
 */
export function computePodStatus(
  pod: V1Pod,
  records: ContainerRecord[],
  hostIP: string,
  startTime: Date,
  now: Date,
  initRecords: ContainerRecord[] = [],
  sandbox: PodSandboxState = { podIPs: [hostIP] },
): V1PodStatus {
  const policy = pod.spec?.restartPolicy ?? 'Always';
  const init = initState(initRecords, policy);
  const phase = init === 'done' ? podPhase(records, policy) : init === 'failed' ? 'Failed' : 'Pending';
  const unready = records.filter((r) => r.current.state !== 'running').map((r) => r.name);
  const containersReady = unready.length === 0 && records.length > 0;
  const previous = pod.status?.conditions ?? [];
  const gates = (pod.spec?.readinessGates ?? []).map((g) => g.conditionType);
  const failedGates = gates.filter((g) => previous.find((c) => c.type === g)?.status !== 'True');
  const condition = (type: string, ok: boolean, reason?: string, message?: string): V1PodCondition => {
    const status = ok ? 'True' : 'False';
    const before = previous.find((c) => c.type === type);
    const c: V1PodCondition = {
      type,
      status,
      lastTransitionTime: before?.status === status && before.lastTransitionTime !== undefined ? before.lastTransitionTime : now,
    };
    if (!ok && reason !== undefined) c.reason = reason;
    if (!ok && message !== undefined) c.message = message;
    return c;
  };
  const terminal = phase === 'Succeeded' || phase === 'Failed';
  const notReadyReason = terminal ? 'PodCompleted' : 'ContainersNotReady';
  const notReadyMessage = terminal ? undefined : `containers with unready status: [${unready.join(' ')}]`;
  let ready = condition('Ready', containersReady, notReadyReason, notReadyMessage);
  if (containersReady && failedGates.length > 0) {
    ready = condition('Ready', false, 'ReadinessGatesNotReady', `the status of pod readiness gate "${failedGates[0] ?? ''}" is not "True", but False`);
  }
  const conditions = [
    condition('PodScheduled', true),
    condition('PodReadyToStartContainers', sandbox.error === undefined && sandbox.podIPs.length > 0, 'FailedCreatePodSandBox', sandbox.error),
    condition('Initialized', init === 'done', 'ContainersNotInitialized', `containers with incomplete status: [${initRecords.filter((r) => !completed(r)).map((r) => r.name).join(' ')}]`),
    condition('ContainersReady', containersReady, notReadyReason, notReadyMessage),
    ready,
    ...previous.filter((c) => !ownedConditions.includes(c.type)),
  ];
  return {
    phase,
    conditions,
    hostIP,
    hostIPs: [{ ip: hostIP }],
    ...(sandbox.podIPs[0] === undefined ? {} : { podIP: sandbox.podIPs[0], podIPs: sandbox.podIPs.map((ip) => ({ ip })) }),
    startTime,
    containerStatuses: records.map((r) => containerStatus(r)),
    ...(initRecords.length === 0 ? {} : { initContainerStatuses: initRecords.map((r) => containerStatus(r)) }),
    ...(pod.status?.qosClass === undefined ? {} : { qosClass: pod.status.qosClass }),
  };
}

function completed(r: ContainerRecord): boolean {
  // A sidecar lets the next init container start once it has started; it never "completes".
  if (r.sidecar === true) return r.current.state !== 'waiting' || r.restartCount > 0;
  return r.current.state === 'terminated' && r.current.exitCode === 0;
}

function initState(initRecords: ContainerRecord[], policy: string): 'done' | 'running' | 'failed' {
  if (initRecords.every(completed)) return 'done';
  const failed = initRecords.some((r) => r.sidecar !== true && r.current.state === 'terminated' && r.current.exitCode !== 0);
  return failed && policy === 'Never' ? 'failed' : 'running';
}

function podPhase(records: ContainerRecord[], policy: string): string {
  if (records.length === 0 || records.some((r) => r.current.state === 'waiting' && r.restartCount === 0)) return 'Pending';
  const terminated = records.map((r) => r.current).filter((s) => s.state === 'terminated');
  if (terminated.length < records.length || policy === 'Always') return 'Running';
  const allSucceeded = terminated.every((s) => s.exitCode === 0);
  if (allSucceeded) return 'Succeeded';
  return policy === 'Never' ? 'Failed' : 'Running';
}

function containerStatus(r: ContainerRecord): V1ContainerStatus {
  const s = r.current;
  const status: V1ContainerStatus = {
    name: r.name,
    image: r.image,
    imageID: `testbed://${r.image}`,
    ready: r.init === true && r.sidecar !== true ? s.state === 'terminated' && s.exitCode === 0 : s.state === 'running',
    started: s.state === 'running',
    restartCount: r.restartCount,
    state:
      s.state === 'waiting'
        ? { waiting: { reason: s.reason, ...(s.message === undefined ? {} : { message: s.message }) } }
        : s.state === 'running'
          ? { running: { startedAt: s.startedAt } }
          : {
              terminated: {
                exitCode: s.exitCode,
                reason: s.reason,
                ...(s.message === undefined ? {} : { message: s.message }),
                startedAt: s.startedAt,
                finishedAt: s.finishedAt,
                ...(s.signal === undefined ? {} : { signal: s.signal }),
              },
            },
  };
  if (r.containerID !== undefined) status.containerID = r.containerID;
  return status;
}

/**
 * The strategic-merge-patch body that makes the API's pod status equal `status`. Conditions
 * merge by type, so a field a condition no longer has (the reason of a now-True Ready) must be
 * deleted explicitly with null, as the kubelet's two-way patch does; lists without a merge key
 * (container statuses) are replaced whole anyway.
 */
export function podStatusPatch(status: V1PodStatus): { status: Record<string, unknown> } {
  const conditions = status.conditions?.map((c) => ({ reason: null, message: null, ...c }));
  return { status: { ...status, ...(conditions === undefined ? {} : { conditions }) } };
}
