// Why a VMI does not start, where `kubectl describe vmi` shows it: a launcher pod no node can
// take (nodeSelector to nowhere) gives the VMI PodScheduled=False Unschedulable and a
// FailedScheduling Warning; an image the kubelet cannot pull gives Synchronized=False
// ErrImagePull, then ImagePullBackOff, naming the image, with the pod's Failed/BackOff Events.
// A VMI with a 253-character name gets its Events, exactly one pod is ever created for it, and its
// VM runs (the domain name is cut to what libvirt can store). On the real control plane
// (PODVIRT_TESTBED_CONTROL_PLANE=real) the pod creations are counted from kube-apiserver's own
// apiserver_request_total: only podvirt-controller creates pods on the testbed.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { RequestRecord } from '../testbed/apiserver/index.js';
import { controlPlaneFromEnv, guestVmi, NS, VmiSuite } from './vmi-stack.js';

describe('why a VMI does not start', () => {
  const requests: RequestRecord[] = [];
  const real = controlPlaneFromEnv().controlPlane === 'real';
  const suite = VmiSuite.setUp({ stack: real ? {} : { onRequest: (r) => requests.push(r) } });

  /** Every request to create a pod so far, answered or refused. */
  const podCreates = async (): Promise<number> => {
    if (!real) return requests.filter((r) => r.verb === 'create' && r.resource === 'pods' && r.user.includes('controller') && r.namespace === NS).length;
    const metrics = await suite.kubectl(['get', '--raw', '/metrics']);
    assert.equal(metrics.code, 0, metrics.stderr);
    return metrics.stdout.split('\n')
      .filter((l) => l.startsWith('apiserver_request_total{') && l.includes('resource="pods"') && l.includes('subresource=""') && l.includes('verb="POST"'))
      .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
  };

  const condition = async (name: string, type: string, reason: string) =>
    suite.eventually(`${name} ${type} ${reason}`, async () =>
      (await suite.vmi(name))?.status?.conditions?.find((c) => c.type === type && c.reason === reason));

  test('no node can take the pod: PodScheduled=False Unschedulable and a FailedScheduling Warning on the VMI', async () => {
    const vmi = guestVmi(suite.guest, 'vm-nowhere') as { spec: Record<string, unknown> };
    vmi.spec['nodeSelector'] = { 'kubernetes.io/hostname': 'no-such-node' };
    await suite.apply(vmi as unknown as Record<string, unknown>);
    const c = await condition('vm-nowhere', 'PodScheduled', 'Unschedulable');
    assert.equal(c.status, 'False');
    assert.match(c.message ?? '', /^0\/1 nodes are available: 1 node\(s\) didn't match Pod's node affinity\/selector/);
    assert.equal((await suite.vmi('vm-nowhere'))?.status?.phase, 'Scheduling');
    const events = await suite.eventually('FailedScheduling on the VMI', async () => {
      const e = (await suite.events('vm-nowhere')).filter((x) => x.reason === 'FailedScheduling');
      return e.length > 0 ? e : undefined;
    });
    assert.equal(events[0]?.type, 'Warning');
    const described = await suite.kubectl(['describe', 'vmi', 'vm-nowhere']);
    assert.equal(described.code, 0, described.stderr);
    assert.match(described.stdout, /Unschedulable/);
    assert.match(described.stdout, /FailedScheduling/);
    assert.equal((await suite.kubectl(['delete', 'vmi', 'vm-nowhere'])).code, 0);
  });

  test('an image that cannot be pulled: ErrImagePull, then ImagePullBackOff, naming the image, on the VMI and its pod', async () => {
    const vmi = guestVmi(suite.guest, 'vm-noimage') as { spec: { volumes: { containerDisk?: { image: string } }[] } };
    const volume = vmi.spec.volumes[0];
    if (volume?.containerDisk !== undefined) volume.containerDisk.image = 'registry.invalid/no-such-disk:1';
    await suite.apply(vmi as unknown as Record<string, unknown>);
    const pulled = await condition('vm-noimage', 'Synchronized', 'ErrImagePull');
    assert.equal(pulled.status, 'False');
    assert.match(pulled.message ?? '', /registry\.invalid\/no-such-disk:1/);
    const backoff = await condition('vm-noimage', 'Synchronized', 'ImagePullBackOff');
    assert.equal(backoff.message, 'Back-off pulling image "registry.invalid/no-such-disk:1"');
    const reasons = (await suite.events('vm-noimage')).map((e) => `${e.type}/${e.reason}`);
    assert.ok(reasons.includes('Warning/ErrImagePull') && reasons.includes('Warning/ImagePullBackOff'), reasons.join(','));
    const [pod] = await suite.podsOf((await suite.vmi('vm-noimage')) ?? assert.fail('VMI vanished'));
    const podEvents = (await suite.core.listNamespacedEvent({ namespace: NS })).items
      .filter((e) => e.involvedObject.kind === 'Pod' && e.involvedObject.name === pod?.metadata?.name)
      .map((e) => `${e.reason}: ${e.message ?? ''}`);
    assert.ok(podEvents.some((e) => /^Failed: Failed to pull image "registry\.invalid\/no-such-disk:1"/.test(e)), podEvents.join('\n'));
    assert.ok(podEvents.includes('BackOff: Back-off pulling image "registry.invalid/no-such-disk:1"'), podEvents.join('\n'));
    assert.equal((await suite.vmi('vm-noimage'))?.status?.phase, 'Scheduling');
    const described = await suite.kubectl(['describe', 'vmi', 'vm-noimage']);
    assert.match(described.stdout, /ImagePullBackOff/);
    assert.equal((await suite.kubectl(['delete', 'vmi', 'vm-noimage'])).code, 0);
  });

  test('a VMI whose name is 253 characters gets its pod once, its Events, and runs', async () => {
    const name = `${'a'.repeat(120)}.${'b'.repeat(120)}.${'c'.repeat(11)}`;
    assert.equal(name.length, 253);
    await suite.apply(guestVmi(suite.guest, name));
    const scheduled = await suite.waitForPhase(name, 'Running');
    const reasons = (await suite.events(name)).map((e) => e.reason);
    assert.ok(reasons.includes('SuccessfulCreate'), `Event SuccessfulCreate in ${reasons.join(',')}`);
    const pods = await suite.podsOf(scheduled);
    assert.equal(pods.length, 1);
    assert.ok((pods[0]?.metadata?.name ?? '').length <= 63);
    assert.equal(await podCreates(), 3, 'one launcher pod for each of the three VMIs of this suite, never a retry loop');
    assert.equal((await suite.kubectl(['delete', 'vmi', name, '--wait=false'])).code, 0);
    await suite.waitForGone(name);
  });
});
