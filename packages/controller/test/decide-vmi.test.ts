import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { CoreV1Event, V1Pod } from '@kubernetes/client-node';
import type { VirtualMachineInstance, VmiStatus } from '@podvirt/api';
import { decideVmi } from '../src/decide/decide-vmi.js';
import type { VmiDecision } from '../src/decide/vmi-decision.js';
import { launcherPod, vmiFixture } from './fixtures.js';

const now = new Date('2025-01-01T00:05:00.250Z');
const stamp = '2025-01-01T00:05:00Z';
const deleting = { deletionTimestamp: '2025-01-01T00:04:00Z' };
const runningPod = launcherPod({ node: 'node01', phase: 'Running', ready: true, qosClass: 'Burstable' });

interface Case {
  name: string;
  vmi: VirtualMachineInstance;
  pods?: V1Pod[];
  createError?: string;
  expect: Partial<Omit<VmiDecision, 'status' | 'events'>> & { phase?: string; reason?: string; events?: string[] };
  check?: (d: VmiDecision) => void;
}

const cases: Case[] = [
  {
    name: 'new VMI, no pod: Pending, create the pod, add the finalizer',
    vmi: vmiFixture({ metadata: { finalizers: [] } }),
    expect: { phase: 'Pending', createPod: true, addFinalizer: true, statusChanged: true, events: [] },
    check: (d) => {
      assert.deepEqual(d.status.phaseTransitionTimestamps, [{ phase: 'Pending', phaseTransitionTimestamp: stamp }]);
      assert.equal(d.status.conditions?.find((c) => c.type === 'Ready')?.reason, 'PodNotExists');
    },
  },
  {
    name: 'Pending with a pod: Scheduling, no second pod',
    vmi: vmiFixture({ status: { phase: 'Pending' } }),
    pods: [launcherPod()],
    expect: { phase: 'Scheduling', createPod: false, addFinalizer: false },
    check: (d) => assert.equal(d.status.conditions?.find((c) => c.type === 'Ready')?.reason, 'GuestNotRunning'),
  },
  {
    name: 'Scheduling, pod bound but not ready: stays Scheduling, activePods records the node',
    vmi: vmiFixture({ status: { phase: 'Scheduling' } }),
    pods: [launcherPod({ node: 'node01', phase: 'Running', ready: false })],
    expect: { phase: 'Scheduling', nodeNameLabel: undefined },
    check: (d) => assert.deepEqual(d.status.activePods, { 'pod-uid': 'node01' }),
  },
  {
    name: 'Scheduling, pod Running and Ready: Scheduled with node, label, qos, image',
    vmi: vmiFixture({ status: { phase: 'Scheduling' } }),
    pods: [runningPod],
    expect: { phase: 'Scheduled', nodeNameLabel: 'node01', statusChanged: true },
    check: (d) => {
      assert.equal(d.status.nodeName, 'node01');
      assert.equal(d.status.qosClass, 'Burstable');
      assert.equal(d.status.launcherContainerImageVersion, 'podvirt/launcher:0.1.0');
      assert.deepEqual(d.status.activePods, { 'pod-uid': 'node01' });
      assert.deepEqual(d.status.phaseTransitionTimestamps, [{ phase: 'Scheduled', phaseTransitionTimestamp: stamp }]);
      assert.equal(d.status.conditions?.find((c) => c.type === 'Ready')?.status, 'False', 'not Ready before the guest runs');
    },
  },
  {
    name: 'Scheduling, pod gone: Failed with PodNotExists and a Warning',
    vmi: vmiFixture({ status: { phase: 'Scheduling' } }),
    expect: { phase: 'Failed', reason: 'PodNotExists', createPod: false, events: ['Warning PodNotExists'] },
  },
  {
    name: 'Scheduled, pod failed: Failed with PodFailed',
    vmi: vmiFixture({ status: { phase: 'Scheduled', nodeName: 'node01' } }),
    pods: [launcherPod({ node: 'node01', phase: 'Failed' })],
    expect: { phase: 'Failed', reason: 'PodFailed', events: ['Warning PodFailed'] },
  },
  {
    name: 'Scheduled, pod terminating: Failed with PodTerminating',
    vmi: vmiFixture({ status: { phase: 'Scheduled', nodeName: 'node01' } }),
    pods: [launcherPod({ node: 'node01', phase: 'Running', ready: true, terminating: true })],
    expect: { phase: 'Failed', reason: 'PodTerminating' },
  },
  {
    name: 'Running, pod Ready: Ready mirrors the pod',
    vmi: vmiFixture({ status: { phase: 'Running', nodeName: 'node01' } }),
    pods: [runningPod],
    expect: { phase: 'Running', events: [] },
    check: (d) => assert.equal(d.status.conditions?.find((c) => c.type === 'Ready')?.status, 'True'),
  },
  {
    name: 'Running, pod gone: Failed',
    vmi: vmiFixture({ status: { phase: 'Running', nodeName: 'node01' } }),
    expect: { phase: 'Failed', reason: 'PodNotExists' },
  },
  {
    name: 'Running, pod finished 10 s ago: the handler has 20 s more to write the final phase',
    vmi: vmiFixture({ status: { phase: 'Running', nodeName: 'node01' } }),
    pods: [launcherPod({ node: 'node01', phase: 'Succeeded', computeFinishedAt: '2025-01-01T00:04:50.250Z' })],
    expect: { phase: 'Running', requeueAfterMs: 20_000, events: [] },
  },
  {
    name: 'Running, pod finished 31 s ago: Failed',
    vmi: vmiFixture({ status: { phase: 'Running', nodeName: 'node01' } }),
    pods: [launcherPod({ node: 'node01', phase: 'Failed', computeFinishedAt: '2025-01-01T00:04:29Z' })],
    expect: { phase: 'Failed', reason: 'PodFailed', requeueAfterMs: undefined },
  },
  {
    name: 'final VMIs are left alone, their finalizer is not re-added',
    vmi: vmiFixture({ metadata: { finalizers: [] }, status: { phase: 'Succeeded' } }),
    pods: [launcherPod({ node: 'node01', phase: 'Succeeded' })],
    expect: { phase: 'Succeeded', addFinalizer: false, createPod: false, deletePods: [], events: [] },
  },
  {
    name: 'deleted while Pending without a pod: finalizer off, nothing created',
    vmi: vmiFixture({ metadata: deleting, status: { phase: 'Pending' } }),
    expect: { phase: 'Pending', createPod: false, removeFinalizer: true, deletePods: [] },
  },
  {
    name: 'deleted while Scheduling: delete the unbound pod and drop the finalizer',
    vmi: vmiFixture({ metadata: deleting, status: { phase: 'Scheduling' } }),
    pods: [launcherPod()],
    expect: { phase: 'Scheduling', deletePods: ['virt-launcher-testvmi-abcde'], removeFinalizer: true },
  },
  {
    name: 'deleted while Running: the handler shuts the VM down first',
    vmi: vmiFixture({ metadata: deleting, status: { phase: 'Running', nodeName: 'node01' } }),
    pods: [runningPod],
    expect: { phase: 'Running', deletePods: [], removeFinalizer: false },
  },
  {
    name: 'deleted and Failed, pod still up (keep-after-failure): delete it, keep the finalizer until it is down',
    vmi: vmiFixture({ metadata: deleting, status: { phase: 'Failed', nodeName: 'node01' } }),
    pods: [runningPod],
    expect: { deletePods: ['virt-launcher-testvmi-abcde'], removeFinalizer: false },
  },
  {
    name: 'deleted and Succeeded, pod finished: delete it and remove the finalizer',
    vmi: vmiFixture({ metadata: deleting, status: { phase: 'Succeeded', nodeName: 'node01' } }),
    pods: [launcherPod({ node: 'node01', phase: 'Succeeded' })],
    expect: { deletePods: ['virt-launcher-testvmi-abcde'], removeFinalizer: true },
  },
  {
    name: 'deleted while Scheduled and the pod is already terminating: Failed quietly, no second delete',
    vmi: vmiFixture({ metadata: deleting, status: { phase: 'Scheduled', nodeName: 'node01' } }),
    pods: [launcherPod({ node: 'node01', phase: 'Running', ready: true, terminating: true })],
    expect: { phase: 'Failed', deletePods: [], removeFinalizer: false, events: [] },
  },
  {
    name: 'an invalid VMI gets no pod: Synchronized=False FailedCreate and a Warning SyncFailed, once',
    vmi: ((): VirtualMachineInstance => {
      const vmi = vmiFixture();
      vmi.spec.domain.devices.disks = [{ name: 'missing', disk: { bus: 'virtio' } }];
      return vmi;
    })(),
    expect: { phase: 'Pending', createPod: false, events: ['Warning SyncFailed'] },
    check: (d) => {
      const sync = d.status.conditions?.find((c) => c.type === 'Synchronized');
      assert.equal(sync?.status, 'False');
      assert.equal(sync?.reason, 'FailedCreate');
      assert.match(sync?.message ?? '', /spec\.domain\.devices\.disks\[0\]/);
    },
  },
  {
    name: 'a failed pod creation is reported in Synchronized and retried',
    vmi: vmiFixture({ status: { phase: 'Pending' } }),
    createError: 'Error creating pod: quota exceeded',
    expect: { phase: 'Pending', createPod: true },
    check: (d) => assert.equal(d.status.conditions?.find((c) => c.type === 'Synchronized')?.message, 'Error creating pod: quota exceeded'),
  },
];

function eventsOf(d: VmiDecision): string[] {
  return d.events.map((e) => `${e.type} ${e.reason}`);
}

describe('decideVmi', () => {
  for (const c of cases) {
    test(c.name, () => {
      const before = structuredClone(c.vmi);
      const d = decideVmi({ vmi: c.vmi, pods: c.pods ?? [], now, ...(c.createError ? { createError: c.createError } : {}) });
      const { phase, reason, events, ...rest } = c.expect;
      if (phase !== undefined) assert.equal(d.status.phase, phase);
      if (reason !== undefined) assert.equal(d.status.reason, reason);
      if (events !== undefined) assert.deepEqual(eventsOf(d), events);
      for (const [key, value] of Object.entries(rest)) assert.deepEqual(d[key as keyof VmiDecision], value, key);
      c.check?.(d);
      assert.deepEqual(c.vmi, before, 'decide must not mutate its input');
    });
  }

  test('a status that is already right is not written again', () => {
    const vmi = vmiFixture({ status: { phase: 'Scheduling' } });
    const pods = [launcherPod({ node: 'node01', phase: 'Running', ready: false })];
    const first = decideVmi({ vmi, pods, now });
    assert.equal(first.statusChanged, true);
    const second = decideVmi({ vmi: { ...vmi, status: first.status }, pods, now: new Date(now.getTime() + 60_000) });
    assert.equal(second.statusChanged, false);
    assert.deepEqual(second.status, first.status);
  });

  test('a condition the handler appends after Ready (Paused) makes no controller write; Ready keeps its place', () => {
    const ready = { type: 'Ready', status: 'True', lastProbeTime: null, lastTransitionTime: '2025-01-01T00:00:00Z' } as const;
    const paused = { type: 'Paused', status: 'True', lastProbeTime: null, lastTransitionTime: '2025-01-01T00:04:00Z', reason: 'PausedByUser' } as const;
    const running = { phase: 'Running', nodeName: 'node01', activePods: { [runningPod.metadata?.uid ?? '']: 'node01' } } as const;
    for (const conditions of [[ready, paused], [paused, ready]]) {
      const d = decideVmi({ vmi: vmiFixture({ status: { ...running, conditions } }), pods: [runningPod], now });
      assert.equal(d.statusChanged, false, conditions.map((c) => c.type).join(','));
      assert.deepEqual(d.status.conditions, conditions);
    }
    // Ready changing is written in Ready's place.
    const gone = decideVmi({ vmi: vmiFixture({ status: { ...running, phase: 'Failed', conditions: [ready, paused] } }), pods: [runningPod], now });
    assert.deepEqual(gone.status.conditions?.map((c) => `${c.type}=${c.status}`), ['Ready=False', 'Paused=True']);
  });

  test('a VMI the handler failed is no longer Ready, though its pod still is', () => {
    const ready = { type: 'Ready', status: 'True', lastProbeTime: null, lastTransitionTime: '2025-01-01T00:00:00Z' } as const;
    const d = decideVmi({ vmi: vmiFixture({ status: { phase: 'Failed', conditions: [ready] } }), pods: [runningPod], now });
    assert.equal(d.status.phase, 'Failed');
    assert.deepEqual(
      d.status.conditions?.find((c) => c.type === 'Ready'),
      { type: 'Ready', status: 'False', lastProbeTime: null, lastTransitionTime: stamp, reason: 'GuestNotRunning', message: 'Guest VM is not reported as running' },
    );
  });

  test('from Scheduled on, the handler\'s Synchronized condition is neither removed nor rewritten', () => {
    const sync = {
      type: 'Synchronized',
      status: 'False',
      lastProbeTime: null,
      lastTransitionTime: '2025-01-01T00:01:00Z',
      reason: 'Synchronizing with the Domain failed.',
      message: 'hostDisk refused',
    } as const;
    for (const phase of ['Scheduled', 'Running'] as const) {
      const first = decideVmi({ vmi: vmiFixture({ status: { phase, nodeName: 'node01', conditions: [sync] } }), pods: [runningPod], now });
      assert.deepEqual(first.status.conditions?.find((c) => c.type === 'Synchronized'), sync, phase);
      const settled = { ...first.status };
      const again = decideVmi({ vmi: vmiFixture({ status: settled }), pods: [runningPod], now: new Date(now.getTime() + 60_000) });
      assert.equal(again.statusChanged, false, `${phase}: a status that changes nothing is not written`);
    }
  });

  test('the controller drops its own FailedCreate once the pod exists', () => {
    const failed = decideVmi({ vmi: vmiFixture({ status: { phase: 'Pending' } }), pods: [], now, createError: 'Error creating pod: quota exceeded' });
    const d = decideVmi({ vmi: vmiFixture({ status: failed.status }), pods: [launcherPod()], now });
    assert.equal(d.status.phase, 'Scheduling');
    assert.equal(d.status.conditions?.find((c) => c.type === 'Synchronized'), undefined);
  });

  test('a launcher container the kernel OOM-killed: the VMI fails with a message that says so', () => {
    const pod = launcherPod({ node: 'node01', phase: 'Failed' });
    pod.status = {
      ...pod.status,
      containerStatuses: [{ name: 'compute', image: 'x', imageID: '', ready: false, restartCount: 0, state: { terminated: { exitCode: 137, reason: 'OOMKilled' } } }],
    };
    const d = decideVmi({ vmi: vmiFixture({ status: { phase: 'Scheduled', nodeName: 'node01' } }), pods: [pod], now });
    assert.equal(d.status.phase, 'Failed');
    assert.equal(d.status.reason, 'PodFailed');
    assert.match(d.events[0]?.message ?? '', /compute: OOMKilled, exit code 137/);
  });

  test('phase transitions append, earlier stamps are kept', () => {
    const status: VmiStatus = { phase: 'Pending', phaseTransitionTimestamps: [{ phase: 'Pending', phaseTransitionTimestamp: '2025-01-01T00:00:00Z' }] };
    const d = decideVmi({ vmi: vmiFixture({ status }), pods: [launcherPod()], now });
    assert.deepEqual(d.status.phaseTransitionTimestamps?.map((t) => t.phase), ['Pending', 'Scheduling']);
  });

  test('the invalid-spec Warning is not repeated once the condition says so', () => {
    const vmi = vmiFixture();
    vmi.spec.domain.devices.disks = [{ name: 'missing', disk: { bus: 'virtio' } }];
    const first = decideVmi({ vmi, pods: [], now });
    const again = decideVmi({ vmi: { ...vmi, status: first.status }, pods: [], now });
    assert.deepEqual(eventsOf(again), []);
    assert.equal(again.statusChanged, false);
  });

  test('the newest live pod wins over a terminating older one', () => {
    const old = launcherPod({ name: 'old', uid: 'u-old', node: 'n1', phase: 'Running', ready: true, terminating: true, created: '2025-01-01T00:00:00Z' });
    const fresh = launcherPod({ name: 'new', uid: 'u-new', node: 'n2', phase: 'Running', ready: true, created: '2025-01-01T00:01:00Z' });
    const d = decideVmi({ vmi: vmiFixture({ status: { phase: 'Scheduling' } }), pods: [old, fresh], now });
    assert.equal(d.status.phase, 'Scheduled');
    assert.equal(d.status.nodeName, 'n2');
    assert.deepEqual(d.status.activePods, { 'u-old': 'n1', 'u-new': 'n2' });
  });
});

describe('why a Scheduling VMI does not start (copied from its pod, as KubeVirt does)', () => {
  const pending = (status: Partial<NonNullable<V1Pod['status']>>): V1Pod => {
    const pod = launcherPod();
    return { ...pod, status: { ...pod.status, ...status } };
  };
  const unschedulable = pending({
    phase: 'Pending',
    conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector.", lastTransitionTime: new Date('2025-01-01T00:04:00Z') }],
  });
  const pullFailed = (reason: string, message: string): V1Pod => pending({
    phase: 'Pending',
    initContainerStatuses: [{ name: 'volumedata', image: 'nowhere/disk:1', imageID: '', ready: false, restartCount: 0, state: { waiting: { reason, message } } }],
  });

  test('PodScheduled=False Unschedulable becomes the VMI condition and one FailedScheduling Warning', () => {
    const vmi = vmiFixture({ status: { phase: 'Scheduling' } });
    const d = decideVmi({ vmi, pods: [unschedulable], now });
    assert.equal(d.status.phase, 'Scheduling');
    const c = d.status.conditions?.find((x) => x.type === 'PodScheduled');
    assert.deepEqual(c, { type: 'PodScheduled', status: 'False', lastProbeTime: null, lastTransitionTime: '2025-01-01T00:04:00Z', reason: 'Unschedulable', message: "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector." });
    assert.deepEqual(d.events, [{ type: 'Warning', reason: 'FailedScheduling', message: c?.message }]);
    const again = decideVmi({ vmi: { ...vmi, status: d.status }, pods: [unschedulable], now: new Date(now.getTime() + 60_000) });
    assert.deepEqual(again.events, [], 'no repeat while nothing changed');
    assert.equal(again.statusChanged, false);
    const bound = decideVmi({ vmi: { ...vmi, status: d.status }, pods: [launcherPod({ node: 'node01', phase: 'Running', ready: false })], now });
    assert.equal(bound.status.conditions?.find((x) => x.type === 'PodScheduled'), undefined, 'removed once a node took the pod');
  });

  test('an image that cannot be pulled is Synchronized=False ErrImagePull, then ImagePullBackOff, each once as a Warning', () => {
    const vmi = vmiFixture({ status: { phase: 'Scheduling' } });
    const err = decideVmi({ vmi, pods: [pullFailed('ErrImagePull', 'failed to pull and unpack image "nowhere/disk:1": not found')], now });
    const sync = err.status.conditions?.find((x) => x.type === 'Synchronized');
    assert.equal(`${sync?.status}/${sync?.reason}`, 'False/ErrImagePull');
    assert.match(sync?.message ?? '', /nowhere\/disk:1/);
    assert.deepEqual(err.events.map((e) => `${e.type}/${e.reason}`), ['Warning/ErrImagePull']);
    const backoff = decideVmi({ vmi: { ...vmi, status: err.status }, pods: [pullFailed('ImagePullBackOff', 'Back-off pulling image "nowhere/disk:1"')], now });
    assert.equal(backoff.status.conditions?.find((x) => x.type === 'Synchronized')?.reason, 'ImagePullBackOff');
    assert.deepEqual(backoff.events.map((e) => `${e.reason}: ${e.message}`), ['ImagePullBackOff: Back-off pulling image "nowhere/disk:1"']);
    assert.equal(backoff.createPod, false, 'the pod exists: nothing is created again');
    const pulled = decideVmi({ vmi: { ...vmi, status: backoff.status }, pods: [launcherPod({ node: 'node01', phase: 'Running', ready: false })], now });
    assert.equal(pulled.status.conditions?.find((x) => x.type === 'Synchronized'), undefined);
  });

  test('a volume the kubelet cannot mount (a FailedMount Event on the pod) is Synchronized=False FailedMount, once as a Warning', () => {
    const vmi = vmiFixture({ status: { phase: 'Scheduling' } });
    const pod = pending({ phase: 'Pending' });
    const mountEvent = (message: string, at: string, uid = pod.metadata?.uid ?? ''): CoreV1Event => ({
      metadata: { name: `e-${at}`, namespace: 'default' }, reason: 'FailedMount', message, lastTimestamp: new Date(at),
      involvedObject: { kind: 'Pod', namespace: 'default', name: pod.metadata?.name ?? '', uid },
    });
    const events = [
      mountEvent('MountVolume.SetUp failed for volume "ci-udata" : secret "old" not found', '2025-01-01T00:01:00Z'),
      mountEvent('MountVolume.SetUp failed for volume "ci-udata" : secret "ud" not found', '2025-01-01T00:02:00Z'),
      mountEvent('about another pod', '2025-01-01T00:03:00Z', 'other-uid'),
    ];
    const d = decideVmi({ vmi, pods: [pod], now, mountEvents: events });
    const sync = d.status.conditions?.find((x) => x.type === 'Synchronized');
    assert.equal(`${sync?.status}/${sync?.reason}`, 'False/FailedMount');
    assert.match(sync?.message ?? '', /^virt-launcher pod \S*: MountVolume\.SetUp failed for volume "ci-udata" : secret "ud" not found$/);
    assert.deepEqual(d.events.map((e) => `${e.type}/${e.reason}: ${e.message}`), [`Warning/FailedMount: ${sync?.message ?? ''}`]);
    assert.deepEqual(decideVmi({ vmi: { ...vmi, status: d.status }, pods: [pod], now, mountEvents: events }).events, [], 'no repeat');
    const started = decideVmi({ vmi: { ...vmi, status: d.status }, pods: [launcherPod({ node: 'node01', phase: 'Running', ready: false })], now, mountEvents: events });
    assert.equal(started.status.conditions?.find((x) => x.type === 'Synchronized'), undefined, 'gone once the pod runs');
  });

  test('a VMI being deleted records no start-problem Events', () => {
    const d = decideVmi({ vmi: vmiFixture({ metadata: deleting, status: { phase: 'Scheduling' } }), pods: [unschedulable], now });
    assert.deepEqual(d.events, []);
  });
});

test('a pod create that keeps failing with a new generated pod name does not rewrite the status (no create storm)', () => {
  const vmi = vmiFixture({ status: { phase: 'Pending' } });
  const first = decideVmi({ vmi, pods: [], now, createError: 'Error creating pod: Pod "virt-launcher-x-abcde" is invalid: metadata.labels: too long' });
  assert.equal(first.statusChanged, true);
  const second = decideVmi({ vmi: { ...vmi, status: first.status }, pods: [], now, createError: 'Error creating pod: Pod "virt-launcher-x-fghjk" is invalid: metadata.labels: too long' });
  assert.equal(second.statusChanged, false, 'the same reason keeps the condition, as KubeVirt does');
});
