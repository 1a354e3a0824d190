// The kubelet's pure status computation: init containers gate the pod, and the status patch
// deletes condition fields that no longer apply.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { computePodStatus, podStatusPatch, type ContainerRecord } from './pod-status.js';

const t0 = new Date('2025-01-01T00:00:00Z');
const pod = (restartPolicy: string): V1Pod => ({ metadata: { name: 'p' }, spec: { restartPolicy, containers: [{ name: 'main' }], initContainers: [{ name: 'a' }, { name: 'b' }] } });
const waiting = (name: string, init = false): ContainerRecord => ({ name, image: 'busybox', restartCount: 0, current: { state: 'waiting', reason: 'PodInitializing' }, ...(init ? { init } : {}) });
const done = (name: string, exitCode: number): ContainerRecord => ({ name, image: 'busybox', restartCount: 0, init: true, current: { state: 'terminated', exitCode, reason: exitCode === 0 ? 'Completed' : 'Error', startedAt: t0, finishedAt: t0 } });
const running = (name: string, init = false): ContainerRecord => ({ name, image: 'busybox', restartCount: 0, current: { state: 'running', startedAt: t0 }, ...(init ? { init } : {}) });
const cond = (s: ReturnType<typeof computePodStatus>, type: string) => s.conditions?.find((c) => c.type === type);

describe('computePodStatus with init containers', () => {
  test('while an init container runs the pod is Pending and not Initialized', () => {
    const s = computePodStatus(pod('Never'), [waiting('main')], '10.0.0.1', t0, t0, [done('a', 0), running('b', true)]);
    assert.equal(s.phase, 'Pending');
    assert.equal(cond(s, 'Initialized')?.status, 'False');
    assert.equal(cond(s, 'Initialized')?.message, 'containers with incomplete status: [b]');
    assert.deepEqual(s.initContainerStatuses?.map((c) => [c.name, c.ready, Object.keys(c.state ?? {})[0]]), [['a', true, 'terminated'], ['b', false, 'running']]);
  });

  test('all init containers completed: Initialized, and the containers decide the phase', () => {
    const s = computePodStatus(pod('Never'), [running('main')], '10.0.0.1', t0, t0, [done('a', 0), done('b', 0)]);
    assert.equal(s.phase, 'Running');
    assert.equal(cond(s, 'Initialized')?.status, 'True');
    assert.equal(cond(s, 'Ready')?.status, 'True');
  });

  test('a failed init container fails the pod under restartPolicy Never, and is retried otherwise', () => {
    const never = computePodStatus(pod('Never'), [waiting('main')], '10.0.0.1', t0, t0, [done('a', 2), waiting('b', true)]);
    assert.equal(never.phase, 'Failed');
    const always = computePodStatus(pod('Always'), [waiting('main')], '10.0.0.1', t0, t0, [done('a', 2), waiting('b', true)]);
    assert.equal(always.phase, 'Pending');
  });

  test('a native sidecar counts as initialized once started, is ready while it runs, and its exit fails nothing', () => {
    const sidecar = (r: ContainerRecord): ContainerRecord => ({ ...r, init: true, sidecar: true });
    const starting = computePodStatus(pod('Never'), [waiting('main')], '10.0.0.1', t0, t0, [sidecar(waiting('a')), waiting('b', true)]);
    assert.equal(cond(starting, 'Initialized')?.message, 'containers with incomplete status: [a b]');
    const up = computePodStatus(pod('Never'), [running('main')], '10.0.0.1', t0, t0, [sidecar(running('a')), done('b', 0)]);
    assert.equal(up.phase, 'Running');
    assert.equal(cond(up, 'Initialized')?.status, 'True');
    assert.deepEqual(up.initContainerStatuses?.map((c) => [c.name, c.ready]), [['a', true], ['b', true]]);
    const main = { ...done('main', 0), init: false };
    const after = computePodStatus(pod('Never'), [main], '10.0.0.1', t0, t0, [sidecar({ ...done('a', 143) }), done('b', 0)]);
    assert.equal(after.phase, 'Succeeded', 'a sidecar stopped with SIGTERM does not fail the pod');
  });

  test('a pod without init containers reports none', () => {
    const s = computePodStatus({ spec: { containers: [{ name: 'main' }] } }, [running('main')], '10.0.0.1', t0, t0);
    assert.equal(s.initContainerStatuses, undefined);
    assert.equal(cond(s, 'Initialized')?.status, 'True');
  });
});

describe('podStatusPatch', () => {
  test('a condition without reason or message deletes the old ones (conditions merge by type)', () => {
    const s = computePodStatus(pod('Never'), [running('main')], '10.0.0.1', t0, t0, [done('a', 0), done('b', 0)]);
    const ready = (podStatusPatch(s).status['conditions'] as Array<Record<string, unknown>>).find((c) => c['type'] === 'Ready');
    assert.equal(ready?.['status'], 'True');
    assert.equal(ready?.['reason'], null);
    assert.equal(ready?.['message'], null);
  });
});
