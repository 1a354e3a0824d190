// A node whose handler goes away, on the two-node testbed: the handler of the node holding a VM
// and a VMI is killed (SIGKILL: no goodbye, its heartbeat just stops; the kubelet and the
// launchers keep running). The controller, with --node-heartbeat-timeout shortened to 10 s
// (KubeVirt's 5 min by default; the handlers beat every 2 to 4.4 s here), labels the node
// kubevirt.io/schedulable=false once, with a NodeUnresponsive Event on the Node; both VMIs stay
// Running with Ready=False NodeUnresponsive and their qemu untouched; a VMI whose launcher pod is
// deleted meanwhile fails with NodeUnresponsive; nothing more is written while the node stays
// silent (writes counted). The handler comes back: the node is schedulable again, the VM's VMI is
// Ready again, the same VMI (uid) with the same qemu: no second copy of the VM.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { V1Node } from '@kubernetes/client-node';
import type { VirtualMachineInstance } from '@podvirt/api';
import type { RequestRecord } from '../testbed/apiserver/index.js';
import { controlPlaneFromEnv, guestVmi, NS, VmiSuite } from './vmi-stack.js';

const HEARTBEAT_TIMEOUT = '10s';
const HEARTBEAT_INTERVAL = '2s';
const SCHEDULABLE = 'kubevirt.io/schedulable';

describe('a node whose handler goes away', () => {
  const requests: RequestRecord[] = [];
  const real = controlPlaneFromEnv().controlPlane === 'real';
  const suite = VmiSuite.setUp({
    stack: {
      nodes: 2,
      controllerArgs: ['--node-heartbeat-timeout', HEARTBEAT_TIMEOUT],
      handlerArgs: ['--heartbeat-interval', HEARTBEAT_INTERVAL],
      ...(real ? {} : { onRequest: (r: RequestRecord) => requests.push(r) }),
    },
  });

  const nodeLabel = async (name: string): Promise<string | undefined> => ((await suite.core.readNode({ name })) as V1Node).metadata?.labels?.[SCHEDULABLE];
  const ready = (vmi: VirtualMachineInstance | undefined) => vmi?.status?.conditions?.find((c) => c.type === 'Ready');
  /** The controller's writes to Nodes (the testbed's audit hook; the real lane has no per-client count). */
  const nodeWrites = (from: number): RequestRecord[] =>
    requests.slice(from).filter((r) => r.user.includes('controller') && r.resource === 'nodes' && (r.verb === 'patch' || r.verb === 'update'));

  test('the node is labelled unschedulable, its VMIs not Ready but untouched, a VMI whose pod went is Failed, no write storm; the handler returns and the VM keeps its one VMI', async () => {
    const [a, b] = suite.stack.nodes.map((n) => n.nodeName);
    const gone = suite.stack.nodes[0];
    assert.ok(a !== undefined && b !== undefined && gone !== undefined);
    // Both on node a: b is cordoned while they are placed.
    assert.equal((await suite.kubectl(['cordon', b])).code, 0);
    const vmName = 'gone-vm';
    const vmiName = 'gone-vmi';
    const template = guestVmi(suite.guest, vmName, { gracePeriodSeconds: 5 }) as { spec: unknown };
    await suite.apply(
      { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', metadata: { name: vmName, namespace: NS }, spec: { runStrategy: 'Always', template: { spec: template.spec } } },
      guestVmi(suite.guest, vmiName, { gracePeriodSeconds: 5 }),
    );
    const before = await suite.waitForPhase(vmName, 'Running');
    await suite.waitForPhase(vmiName, 'Running');
    assert.equal(before.status?.nodeName, a);
    assert.equal((await suite.vmi(vmiName))?.status?.nodeName, a);
    assert.equal((await suite.kubectl(['uncordon', b])).code, 0);
    await suite.eventually(`${vmName} Ready`, async () => (ready(await suite.vmi(vmName))?.status === 'True' ? true : undefined));
    const qemu = await suite.qemuPids(vmName);
    assert.equal(qemu.length, 1);

    gone.handler.kill('SIGKILL');
    await gone.handler.exited;
    const killedAt = requests.length;
    const started = performance.now();
    await suite.eventually(`${a} labelled ${SCHEDULABLE}=false`, async () => ((await nodeLabel(a)) === 'false' ? true : undefined));
    console.log(`# ${a} marked unresponsive ${((performance.now() - started) / 1000).toFixed(1)} s after its handler was killed (timeout ${HEARTBEAT_TIMEOUT})`);
    for (const name of [vmName, vmiName]) {
      const vmi = await suite.eventually(`${name} Ready=False NodeUnresponsive`, async () => {
        const v = await suite.vmi(name);
        return ready(v)?.reason === 'NodeUnresponsive' ? v : undefined;
      });
      assert.equal(ready(vmi)?.status, 'False');
      assert.equal(vmi.status?.phase, 'Running', `${name}: a VMI whose launcher runs is not failed for the silence alone`);
    }
    assert.deepEqual(await suite.qemuPids(vmName), qemu, 'the guest was not touched');
    const nodeEvents = await suite.kubectl(['get', 'events', '-n', 'default', '--field-selector', `involvedObject.kind=Node,involvedObject.name=${a},reason=NodeUnresponsive`, '-o', 'name']);
    assert.equal(nodeEvents.code, 0, nodeEvents.stderr);
    assert.equal(nodeEvents.stdout.trim().split('\n').filter((l) => l !== '').length, 1, 'one NodeUnresponsive Event on the Node');
    // The marks are written; what follows (a pod deletion and its end) must not write them again.
    const vmVersions = suite.versionsSeen(vmName);
    const marked = nodeWrites(killedAt).length;
    if (!real) assert.equal(marked, 1, `the controller wrote the node once: ${JSON.stringify(nodeWrites(killedAt))}`);

    // The VMI's launcher pod is deleted while the node is silent: no handler will report its end.
    const lost = (await suite.podsOf((await suite.vmi(vmiName)) ?? assert.fail('no VMI')))[0]?.metadata?.name ?? assert.fail('no pod');
    assert.equal((await suite.kubectl(['delete', 'pod', '-n', NS, lost, '--wait=false'])).code, 0);
    const failed = await suite.eventually(`${vmiName} Failed`, async () => {
      const v = await suite.vmi(vmiName);
      return v?.status?.phase === 'Failed' ? v : undefined;
    });
    assert.equal(failed.status?.reason, 'NodeUnresponsive', JSON.stringify(failed.status));
    assert.ok((await suite.events(vmiName)).some((e) => e.reason === 'NodeUnresponsive' && e.type === 'Normal'));

    assert.equal(suite.versionsSeen(vmName), vmVersions, `${vmName} was not written again while the node stayed silent`);
    if (!real) assert.equal(nodeWrites(killedAt).length, marked, 'no further node write');
    assert.equal(await nodeLabel(a), 'false');

    // The handler is back: it labels the node schedulable; the VM's one VMI is Ready again.
    await gone.restartHandler();
    await suite.eventually(`${a} schedulable again`, async () => ((await nodeLabel(a)) === 'true' ? true : undefined));
    const back = await suite.eventually(`${vmName} Ready again`, async () => {
      const v = await suite.vmi(vmName);
      return ready(v)?.status === 'True' ? v : undefined;
    });
    assert.equal(back.metadata.uid, before.metadata.uid, 'the same VMI: no second copy of the VM');
    assert.equal(back.status?.phase, 'Running');
    assert.deepEqual(await suite.qemuPids(vmName), qemu, 'the same qemu');
    if (!real) assert.equal(nodeWrites(killedAt).length, marked, 'the controller did not fight the returning handler');

    await suite.kubectl(['delete', 'vm', vmName, '--wait=false']);
    await suite.kubectl(['delete', 'vmi', vmiName, '--wait=false']);
    await suite.waitForGone(vmName);
    await suite.waitForGone(vmiName);
    await suite.waitForPodsGone(back);
    await suite.waitForPodsGone(failed);
  });
});
