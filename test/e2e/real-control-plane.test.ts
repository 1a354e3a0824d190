// podvirt on the real Kubernetes control plane (etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler built from their Go modules by tools/build-binaries): installed with kubectl
// apply of manifests/, controller and handler on their ServiceAccounts' tokens, the testbed's
// kubelet joined as system:node:<name>. A VMI runs and is deleted to Succeeded. (The policies
// and RBAC on their own, without a VM: real-control-plane-policies.test.ts.)
//
// This lane runs whenever the test suite runs. PODVIRT_SKIP_REAL_CONTROL_PLANE=1 skips it, and
// only that: binaries that are not built fail it (scripts/setup builds them).
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { ROOT } from './ship-manifests-helpers.js';
import { kubectl, type KubectlResult } from './testbed-helpers.js';
import { guestVmi, VmiSuite } from './vmi-stack.js';

const skip = process.env['PODVIRT_SKIP_REAL_CONTROL_PLANE'] === '1' ? 'PODVIRT_SKIP_REAL_CONTROL_PLANE=1' : false;

describe('podvirt on the real control plane', { skip }, () => {
  const suite = VmiSuite.setUp({ stack: { controlPlane: 'real' } });
  const admin = (args: string[], input?: string): Promise<KubectlResult> => suite.kubectl(args, input);

  test('kubectl version shows the release tools/kube builds; the kubelet is system:node:<name> in system:nodes', async () => {
    const goMod = await readFile(join(ROOT, 'tools/kube/go.mod'), 'utf8');
    const release = /^\s*k8s\.io\/kubernetes (v\S+)/m.exec(goMod)?.[1];
    const version = await admin(['version', '-o', 'json']);
    assert.equal(version.code, 0, version.stderr);
    const parsed = JSON.parse(version.stdout) as { serverVersion: { gitVersion: string }; clientVersion: { gitVersion: string } };
    assert.equal(parsed.serverVersion.gitVersion, release);
    assert.equal(parsed.clientVersion.gitVersion, release);

    const cp = suite.stack.testbed.controlPlane;
    assert.ok(cp !== undefined);
    const nodeKubeconfig = await cp.nodeKubeconfig(suite.stack.nodeName);
    const whoami = await kubectl(nodeKubeconfig, ['auth', 'whoami', '-o', 'json'], undefined, cp.binaries.kubectl);
    assert.equal(whoami.code, 0, whoami.stderr);
    const user = (JSON.parse(whoami.stdout) as { status: { userInfo: { username: string; groups: string[] } } }).status.userInfo;
    assert.equal(user.username, `system:node:${suite.stack.nodeName}`);
    assert.ok(user.groups.includes('system:nodes'), user.groups.join(','));
    // NodeRestriction: a kubelet may not label its Node outside the kubelet's own label space.
    const label = await kubectl(nodeKubeconfig, ['label', 'node', suite.stack.nodeName, 'node-role.kubernetes.io/control-plane='], undefined, cp.binaries.kubectl);
    assert.notEqual(label.code, 0);
    assert.match(label.stderr, /is not allowed to modify labels: node-role\.kubernetes\.io\/control-plane/);
  });

  test('a VMI runs and is deleted to Succeeded; controller and handler act with their ServiceAccounts\' tokens', async () => {
    await suite.apply(guestVmi(suite.guest, 'vm-real'));
    const running = await suite.waitForPhase('vm-real', 'Running');
    assert.deepEqual((running.status?.phaseTransitionTimestamps ?? []).map((p) => p.phase), ['Pending', 'Scheduling', 'Scheduled', 'Running']);
    assert.equal(running.status?.nodeName, suite.stack.nodeName);
    assert.match(await suite.waitForGuestReady(running), /PODVIRT-GUEST-READY/);
    const table = await admin(['get', 'vmi', 'vm-real']);
    assert.match(table.stdout, new RegExp(`vm-real\\s+\\S+\\s+Running\\s+.*${suite.stack.nodeName}`));

    const del = await admin(['delete', 'vmi', 'vm-real', '--wait=false']);
    assert.equal(del.code, 0, del.stderr);
    await suite.waitForPhase('vm-real', 'Succeeded');
    await suite.eventually('the VMI gone', async () => (await suite.vmi('vm-real')) === undefined);
  });
});
