// podvirt on the real Kubernetes control plane (etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler built from their Go modules by tools/build-binaries): installed with kubectl
// apply of manifests/, controller and handler on their ServiceAccounts' tokens, the testbed's
// kubelet joined as system:node:<name>. A VMI runs and is deleted to Succeeded; the
// node-restriction policies of manifests/20-node-restriction.yaml are executed by the API server.
//
// This lane runs whenever the test suite runs. PODVIRT_SKIP_REAL_CONTROL_PLANE=1 skips it, and
// only that: binaries that are not built fail it (scripts/setup builds them).
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { stackLeftovers, writeTlsKubeconfig } from '../testbed/index.js';
import { ROOT } from './ship-manifests-helpers.js';
import { kubectl, type KubectlResult } from './testbed-helpers.js';
import { guestVmi, VmiSuite } from './vmi-stack.js';

const skip = process.env['PODVIRT_SKIP_REAL_CONTROL_PLANE'] === '1' ? 'PODVIRT_SKIP_REAL_CONTROL_PLANE=1' : false;
const HANDLER = { namespace: 'podvirt', serviceAccount: 'podvirt-handler' };

describe('podvirt on the real control plane', { skip }, () => {
  let suite: VmiSuite;
  let admin: (args: string[], input?: string) => Promise<KubectlResult>;
  before(async () => {
    suite = await VmiSuite.start({ controlPlane: 'real' });
    admin = (args, input) => suite.kubectl(args, input);
  });
  after(async () => {
    await suite?.close();
    if (suite !== undefined) assert.deepEqual(await stackLeftovers(suite.stack), [], 'nothing of the stack is left');
  });

  /** kubectl as the handler's ServiceAccount with a token from `kubectl create token` (bound to `node` when given). */
  async function asHandler(name: string, node: string | undefined, args: string[]): Promise<KubectlResult> {
    const bound = node === undefined ? [] : ['--bound-object-kind', 'Node', '--bound-object-name', node, '--bound-object-uid', await nodeUid(node)];
    const token = await admin(['create', 'token', HANDLER.serviceAccount, '-n', HANDLER.namespace, '--duration', '10m', ...bound]);
    assert.equal(token.code, 0, token.stderr);
    const cp = suite.stack.testbed.controlPlane;
    assert.ok(cp !== undefined);
    const tokenFile = join(suite.stack.stateDir, `${name}.token`);
    await writeFile(tokenFile, token.stdout.trim(), { mode: 0o600 });
    const kubeconfig = join(suite.stack.stateDir, `${name}.kubeconfig`);
    await writeTlsKubeconfig(kubeconfig, cp.url, cp.pki.caCert, { tokenFile });
    return kubectl(kubeconfig, args, undefined, cp.binaries.kubectl);
  }

  async function nodeUid(node: string): Promise<string> {
    const out = await admin(['get', 'node', node, '-o', 'jsonpath={.metadata.uid}']);
    assert.equal(out.code, 0, out.stderr);
    return out.stdout;
  }

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

  test('the node-restriction policies: no node claim, another node, another node\'s VMI — each denied with its message', async () => {
    // A second Node (no kubelet) for the handler tokens of "another node".
    const other = `${suite.stack.nodeName}-other`;
    const created = await admin(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'Node', metadata: { name: other } }));
    assert.equal(created.code, 0, created.stderr);
    const heartbeat = ['annotate', '--overwrite', 'node'];

    const unbound = await asHandler('handler-unbound', undefined, [...heartbeat, suite.stack.nodeName, 'kubevirt.io/heartbeat=x']);
    assert.notEqual(unbound.code, 0);
    assert.match(unbound.stderr, /ValidatingAdmissionPolicy 'podvirt-handler-node-restriction'.*denied request: the request carries no authentication\.kubernetes\.io\/node-name claim/);

    const fromOther = await asHandler('handler-other', other, [...heartbeat, suite.stack.nodeName, 'kubevirt.io/heartbeat=x']);
    assert.notEqual(fromOther.code, 0);
    assert.match(fromOther.stderr, new RegExp(`denied request: podvirt-handler on node ${other} may not change node ${suite.stack.nodeName}`));

    const own = await asHandler('handler-own', suite.stack.nodeName, [...heartbeat, suite.stack.nodeName, 'kubevirt.io/heartbeat=x']);
    assert.equal(own.code, 0, own.stderr);
    const spec = await asHandler('handler-own-spec', suite.stack.nodeName, ['annotate', 'node', suite.stack.nodeName, 'something-else=x']);
    assert.match(spec.stderr, /podvirt-handler may only change the annotation kubevirt\.io\/heartbeat/);

    await suite.apply(guestVmi(suite.guest, 'vm-policy'));
    await suite.waitForPhase('vm-policy', 'Running');
    const patch = ['patch', 'vmi', 'vm-policy', '--subresource', 'status', '--type', 'merge', '-p', '{"status":{"phase":"Failed"}}'];
    const vmiFromOther = await asHandler('handler-other-vmi', other, patch);
    assert.notEqual(vmiFromOther.code, 0);
    assert.match(vmiFromOther.stderr, new RegExp(`denied request: podvirt-handler on node ${other} may not write a VMI of node ${suite.stack.nodeName}`));
    assert.equal((await suite.vmi('vm-policy'))?.status?.phase, 'Running');
    await admin(['delete', 'vmi', 'vm-policy', '--wait=false']);
    await suite.waitForPhase('vm-policy', 'Succeeded');
    await admin(['delete', 'node', other]);
  });
});
