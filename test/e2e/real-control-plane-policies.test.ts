// What the real kube-apiserver decides about podvirt's install, with no VM and no kubelet: etcd
// and kube-apiserver v1.34.4 from tools/build-binaries (control-plane/real-control-plane.ts),
// podvirt installed with `kubectl apply` of manifests/. The node-restriction policies of
// manifests/20-node-restriction.yaml are executed on handler tokens from `kubectl create token`
// (bound to a Node, as a DaemonSet pod's token carries its node), NodeRestriction on a node's
// own certificate, and every status field podvirt writes survives the CRD schema's pruning.
//
// PODVIRT_SKIP_REAL_CONTROL_PLANE=1 skips it, and only that: binaries that are not built fail it.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { MigrationStatus, VmiStatus, VmStatus } from '@podvirt/api';
import { eventually } from '@podvirt/test-support';
import { pino } from 'pino';
import { applyCrds, installManifests } from '../testbed/control-plane/install-podvirt.js';
import { RealControlPlane } from '../testbed/control-plane/real-control-plane.js';
import { ROOT } from './ship-manifests-helpers.js';
import { kubectl, type KubectlResult } from './testbed-helpers.js';

const skip = process.env['PODVIRT_SKIP_REAL_CONTROL_PLANE'] === '1' ? 'PODVIRT_SKIP_REAL_CONTROL_PLANE=1' : false;
/**
 * `T` with every field, however deep, required: a status fixture of this type must give a value
 * to each field podvirt's API types declare, so a field added to them is not forgotten here.
 */
type Every<T> = T extends ReadonlyArray<infer U> ? Array<Every<U>> : T extends object ? { [K in keyof T]-?: Every<Exclude<T[K], undefined>> } : T;

const NODE_A = 'node-a';
const NODE_B = 'node-b';

describe('the real API server on podvirt\'s manifests', { skip }, () => {
  let dir: string;
  let cp: RealControlPlane;
  const run = (kubeconfig: string, args: string[], input?: string): Promise<KubectlResult> => kubectl(kubeconfig, args, input, cp.binaries.kubectl);
  const admin = (args: string[], input?: string): Promise<KubectlResult> => run(cp.adminKubeconfig, args, input);
  const ok = async (p: Promise<KubectlResult>): Promise<string> => {
    const r = await p;
    assert.equal(r.code, 0, r.stderr);
    return r.stdout;
  };

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'podvirt-real-cp-'));
    cp = await RealControlPlane.start({ dir, repoRoot: ROOT, nodes: [NODE_A, NODE_B], logger: pino({ level: 'silent' }) });
    await applyCrds(cp, cp.adminKubeconfig, [], dir);
    await installManifests(cp, ROOT, cp.adminKubeconfig);
    // Each Node registered by its own identity, as a kubelet registers.
    for (const node of [NODE_A, NODE_B]) {
      await ok(run(await cp.nodeKubeconfig(node), ['create', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'Node', metadata: { name: node, labels: { 'kubernetes.io/hostname': node } } })));
    }
    // kube-apiserver loads admission policies from its informers: a request right after the apply
    // may pass before they act. An empty patch without a node claim is refused once they do.
    await eventually(async () => (await patchAsHandler(undefined, `/api/v1/nodes/${NODE_A}`, {})).status === 422 || undefined, { what: 'the node-restriction policy in force', deadlineMs: 30_000 });
  });
  after(async () => {
    await cp?.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** A fresh podvirt-handler token from `kubectl create token`, bound to `node` when given. */
  async function handlerToken(node: string | undefined): Promise<string> {
    const bound = node === undefined ? [] : ['--bound-object-kind', 'Node', '--bound-object-name', node, '--bound-object-uid', await ok(admin(['get', 'node', node, '-o', 'jsonpath={.metadata.uid}']))];
    return (await ok(admin(['create', 'token', 'podvirt-handler', '-n', 'podvirt', '--duration', '10m', ...bound]))).trim();
  }

  /**
   * A merge PATCH as podvirt-handler sends it: straight to the object, no read first (kubectl
   * patch reads the object before it patches, which the handler's RBAC does not allow).
   */
  async function patchAsHandler(node: string | undefined, path: string, body: unknown, method = 'PATCH'): Promise<{ status: number; message: string }> {
    const token = await handlerToken(node);
    return new Promise((resolve, reject) => {
      const req = request(`${cp.url}${path}`, { method, ca: readFileSync(cp.pki.caCert), headers: { Authorization: `Bearer ${token}`, 'Content-Type': method === 'PATCH' ? 'application/merge-patch+json' : 'application/json' } }, (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, message: (JSON.parse(text) as { message?: string }).message ?? '' }));
      });
      req.on('error', reject);
      req.end(body === undefined ? undefined : JSON.stringify(body));
    });
  }

  test('kubectl version shows the release tools/kube builds, client and server', async () => {
    const release = /^\s*k8s\.io\/kubernetes (v\S+)/m.exec(await readFile(join(ROOT, 'tools/kube/go.mod'), 'utf8'))?.[1];
    const v = JSON.parse(await ok(admin(['version', '-o', 'json']))) as { serverVersion: { gitVersion: string; gitMinor: string }; clientVersion: { gitVersion: string } };
    assert.equal(v.serverVersion.gitVersion, release);
    assert.equal(v.clientVersion.gitVersion, release);
  });

  test('a node\'s certificate is system:node:<name> in system:nodes, and NodeRestriction holds it to its own Node', async () => {
    const a = await cp.nodeKubeconfig(NODE_A);
    const who = (JSON.parse(await ok(run(a, ['auth', 'whoami', '-o', 'json']))) as { status: { userInfo: { username: string; groups: string[] } } }).status.userInfo;
    assert.equal(who.username, `system:node:${NODE_A}`);
    assert.ok(who.groups.includes('system:nodes'), who.groups.join(','));
    // The Node authoriser already refuses it the read kubectl makes first.
    const other = await run(a, ['annotate', 'node', NODE_B, 'x=y']);
    assert.notEqual(other.code, 0);
    assert.match(other.stderr, new RegExp(`node '${NODE_A}' cannot read '${NODE_B}', only its own Node object`));
    const role = await run(a, ['label', 'node', NODE_A, 'node-role.kubernetes.io/control-plane=']);
    assert.notEqual(role.code, 0);
    assert.match(role.stderr, /is not allowed to modify labels: node-role\.kubernetes\.io\/control-plane/);
  });

  // A policy's denial without a `reason` is 422 Invalid (its message says "forbidden").
  test('podvirt-handler-node-restriction: no node claim, another node, another annotation — denied with the policy\'s message; its own heartbeat allowed', async () => {
    const beat = { metadata: { annotations: { 'kubevirt.io/heartbeat': '2026-01-01T00:00:00Z' }, labels: { 'kubevirt.io/schedulable': 'true' } } };
    const unbound = await patchAsHandler(undefined, `/api/v1/nodes/${NODE_A}`, beat);
    assert.equal(unbound.status, 422, unbound.message);
    assert.match(unbound.message, /ValidatingAdmissionPolicy 'podvirt-handler-node-restriction' with binding 'podvirt-handler-node-restriction' denied request: the request carries no authentication\.kubernetes\.io\/node-name claim/);
    const fromB = await patchAsHandler(NODE_B, `/api/v1/nodes/${NODE_A}`, beat);
    assert.equal(fromB.status, 422, fromB.message);
    assert.match(fromB.message, new RegExp(`denied request: podvirt-handler on node ${NODE_B} may not change node ${NODE_A}`));
    const own = await patchAsHandler(NODE_A, `/api/v1/nodes/${NODE_A}`, beat);
    assert.equal(own.status, 200, own.message);
    const otherKey = await patchAsHandler(NODE_A, `/api/v1/nodes/${NODE_A}`, { metadata: { annotations: { 'something-else': 'x' } } });
    assert.match(otherKey.message, /denied request: podvirt-handler may only change the annotation kubevirt\.io\/heartbeat/);
    // RBAC: the handler reads no Node at all.
    const get = await patchAsHandler(NODE_A, `/api/v1/nodes/${NODE_A}`, undefined, 'GET');
    assert.equal(get.status, 403, get.message);
    assert.match(get.message, /User "system:serviceaccount:podvirt:podvirt-handler" cannot get resource "nodes"/);
  });

  describe('a VMI of node A', () => {
    const status: Every<VmiStatus> = {
      phase: 'Running',
      nodeName: NODE_A,
      reason: '',
      conditions: [
        { type: 'Ready', status: 'True', lastProbeTime: null, lastTransitionTime: '2026-01-01T00:00:00Z', reason: '', message: '' },
        { type: 'LiveMigratable', status: 'False', lastProbeTime: null, lastTransitionTime: '2026-01-01T00:00:00Z', reason: 'InterfaceNotLiveMigratable', message: 'bridge' },
      ],
      interfaces: [{ name: 'default', mac: '02:00:00:00:00:01', ipAddress: '10.200.0.5', ipAddresses: ['10.200.0.5', 'fd10::5'], interfaceName: 'eth0', infoSource: 'domain, guest-agent', queueCount: 1, linkState: 'up', podInterfaceName: 'eth0' }],
      guestOSInfo: { name: 'Debian', kernelRelease: '6.1.0', version: '12', prettyName: 'Debian 12', versionId: '12', kernelVersion: '#1 SMP', machine: 'x86_64', id: 'debian' },
      phaseTransitionTimestamps: [{ phase: 'Pending', phaseTransitionTimestamp: '2026-01-01T00:00:00Z' }, { phase: 'Running', phaseTransitionTimestamp: '2026-01-01T00:00:01Z' }],
      activePods: { '0b7a6c3e-0000-4000-8000-000000000001': NODE_A },
      qosClass: 'Burstable',
      machine: { type: 'pc-q35-7.2' },
      fsFreezeStatus: 'frozen',
      launcherContainerImageVersion: 'podvirt/launcher:0.1.0',
      migrationMethod: 'LiveMigration',
      evacuationNodeName: NODE_A,
      migrationState: {
        migrationUid: 'u1', sourceNode: NODE_A, sourcePod: 'virt-launcher-a', targetNode: NODE_B, targetPod: 'virt-launcher-b', targetNodeAddress: '10.200.0.9',
        targetDirectMigrationNodePorts: { '41000': 0 }, targetNodeDomainDetected: false, targetNodeDomainReadyTimestamp: '2026-01-01T00:00:02Z',
        startTimestamp: '2026-01-01T00:00:02Z', endTimestamp: '2026-01-01T00:00:03Z', completed: false, failed: false, failureReason: '', abortRequested: false, abortStatus: 'Succeeded', mode: 'PreCopy',
      },
      memory: { guestAtBoot: '128Mi', guestCurrent: '128Mi', guestRequested: '128Mi' },
      currentCPUTopology: { cores: 1, sockets: 1, threads: 1 },
      volumeStatus: [{ name: 'data', target: 'vda', phase: 'Ready', reason: 'VolumeReady', message: 'ok', persistentVolumeClaimInfo: { claimName: 'c', accessModes: ['ReadWriteOnce'], volumeMode: 'Block', capacity: { storage: '1Gi' }, requests: { storage: '1Gi' }, filesystemOverhead: '0.055' }, hotplugVolume: { attachPodName: 'hp-volume-abcde', attachPodUID: '0b7a6c3e-0000-4000-8000-000000000002' } }],
    };

    before(async () => {
      const vmi = JSON.parse(JSON.stringify({ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', metadata: { name: 'vm-a', namespace: 'default' }, spec: { domain: { devices: {} } } })) as Record<string, unknown>;
      await ok(admin(['create', '-f', '-'], JSON.stringify(vmi)));
      // A whole-status replace, as the handler's status writes are: a merge patch would read a null as "remove".
      const current = JSON.parse(await ok(admin(['get', 'vmi', 'vm-a', '-o', 'json']))) as Record<string, unknown>;
      await ok(admin(['replace', '--subresource', 'status', '-f', '-'], JSON.stringify({ ...current, status })));
    });

    test('every status field podvirt writes reads back unchanged (nothing pruned by the CRD schema)', async () => {
      const back = JSON.parse(await ok(admin(['get', 'vmi', 'vm-a', '-o', 'json']))) as { status: unknown };
      assert.deepEqual(back.status, status);
    });

    test('every status field of a VirtualMachine and of a migration reads back unchanged, as the controller writes them', async () => {
      const condition = { type: 'Ready', status: 'False' as const, lastProbeTime: null, lastTransitionTime: '2026-01-01T00:00:00Z', reason: 'PodTerminating', message: 'stopping' };
      const vmStatus: Every<VmStatus> = {
        created: true, ready: false, printableStatus: 'Stopping', conditions: [condition],
        stateChangeRequests: [{ action: 'Stop', uid: '0b7a6c3e-0000-4000-8000-000000000002', data: { force: 'true' } }],
        startFailure: { consecutiveFailCount: 2, lastFailedVMIUID: '0b7a6c3e-0000-4000-8000-000000000003', retryAfterTimestamp: '2026-01-01T00:00:10Z' },
        runStrategy: 'Always', desiredGeneration: 2, observedGeneration: 1,
      };
      const migrationStatus: Every<MigrationStatus> = {
        phase: 'Running', conditions: [condition],
        phaseTransitionTimestamps: [{ phase: 'Pending', phaseTransitionTimestamp: '2026-01-01T00:00:00Z' }, { phase: 'Running', phaseTransitionTimestamp: '2026-01-01T00:00:01Z' }],
        migrationState: status.migrationState,
      };
      const objects: Array<[string, Record<string, unknown>, unknown]> = [
        ['vm', { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', metadata: { name: 'vm-p', namespace: 'default' }, spec: { runStrategy: 'Halted', template: { spec: { domain: { devices: {} } } } } }, vmStatus],
        ['vmim', { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstanceMigration', metadata: { name: 'mig-p', namespace: 'default' }, spec: { vmiName: 'vm-a' } }, migrationStatus],
      ];
      for (const [resource, object, written] of objects) {
        const name = (object['metadata'] as { name: string }).name;
        await ok(admin(['create', '-f', '-'], JSON.stringify(object)));
        const current = JSON.parse(await ok(admin(['get', resource, name, '-o', 'json']))) as Record<string, unknown>;
        await ok(admin(['replace', '--subresource', 'status', '-f', '-'], JSON.stringify({ ...current, status: written })));
        const back = JSON.parse(await ok(admin(['get', resource, name, '-o', 'json']))) as { status: unknown };
        assert.deepEqual(back.status, written, `${resource} ${name}`);
      }
    });

    test('podvirt-handler-vmi-restriction: node B may not write it, may write only its migrationState part as the target; the owner may', async () => {
      // The handler writes a VMI's status with an update (PUT) of the object it holds: its RBAC grants update, not patch.
      const path = '/apis/kubevirt.io/v1/namespaces/default/virtualmachineinstances/vm-a/status';
      const put = async (node: string | undefined, change: Record<string, unknown>): Promise<{ status: number; message: string }> => {
        const vmi = JSON.parse(await ok(admin(['get', 'vmi', 'vm-a', '-o', 'json']))) as { status: Record<string, unknown> };
        return patchAsHandler(node, path, { ...vmi, status: { ...vmi.status, ...change } }, 'PUT');
      };
      const migrationState = (await JSON.parse(await ok(admin(['get', 'vmi', 'vm-a', '-o', 'json']))) as { status: { migrationState: Record<string, unknown> } }).status.migrationState;
      const unbound = await put(undefined, { reason: 'x' });
      assert.equal(unbound.status, 422, unbound.message);
      assert.match(unbound.message, /ValidatingAdmissionPolicy 'podvirt-handler-vmi-restriction' .*denied request: podvirt-handler on node {2}may not write a VMI of node node-a/);
      // The migration target writes its part of migrationState …
      const target = await put(NODE_B, { migrationState: { ...migrationState, targetNodeDomainDetected: true } });
      assert.equal(target.status, 200, target.message);
      // … but not the phase of a VMI that is not its own, nor its node.
      const phase = await put(NODE_B, { phase: 'Failed' });
      assert.match(phase.message, new RegExp(`denied request: podvirt-handler on node ${NODE_B}, the migration target, may not change the phase of a VMI of node ${NODE_A}`));
      const move = await put(NODE_A, { nodeName: NODE_B });
      assert.match(move.message, /denied request: podvirt-handler may not change a VMI's status\.nodeName/);
      const own = await put(NODE_A, { phase: 'Succeeded' });
      assert.equal(own.status, 200, own.message);
      // Once the migration names no target, node B may not write it at all.
      await ok(admin(['patch', 'vmi', 'vm-a', '--subresource', 'status', '--type', 'merge', '-p', '{"status":{"migrationState":null}}']));
      const stranger = await put(NODE_B, { reason: 'x' });
      assert.match(stranger.message, new RegExp(`denied request: podvirt-handler on node ${NODE_B} may not write a VMI of node ${NODE_A}`));
    });
  });

  test('podvirt-host-disk: a user without the grant is refused a hostDisk VMI by the policy; bound to podvirt-host-disk they may; a label write leaves it alone', async () => {
    const as = (args: string[], input?: string): Promise<KubectlResult> => admin(['--as', 'alice', ...args], input);
    // alice may work with VMIs in default, as a tenant's Role would let her; hostDisk is not in it.
    await ok(admin(['create', 'role', 'vmi-editor', '-n', 'default', '--verb=get,list,create,update,patch,delete', '--resource=virtualmachineinstances.kubevirt.io']));
    await ok(admin(['create', 'rolebinding', 'alice-vmi-editor', '-n', 'default', '--role=vmi-editor', '--user=alice']));
    // RBAC answers from its informers: wait until the new bindings are seen.
    const can = (args: string[]): Promise<true | undefined> => eventually(async () => (await as(['auth', 'can-i', ...args, '-n', 'default'])).stdout.trim() === 'yes' || undefined, { what: `alice can ${args.join(' ')}`, deadlineMs: 20_000 });
    await can(['create', 'virtualmachineinstances.kubevirt.io']);
    const vmi = (name: string, hostDisk: boolean): string => JSON.stringify({
      apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', metadata: { name, namespace: 'default' },
      spec: hostDisk
        ? { domain: { devices: { disks: [{ name: 'host', disk: { bus: 'virtio' } }] } }, volumes: [{ name: 'host', hostDisk: { path: '/var/data/disk.img', type: 'DiskOrCreate', capacity: '1Gi' } }] }
        : { domain: { devices: {} } },
    });
    const refused = await as(['create', '-f', '-'], vmi('hd-refused', true));
    assert.notEqual(refused.code, 0);
    // Word for word what the in-repo server answers (testbed-apiserver-admission.test.ts).
    assert.equal(refused.stderr.trim(), 'Error from server (Forbidden): error when creating "STDIN": virtualmachineinstances.kubevirt.io "hd-refused" is forbidden: '
      + "ValidatingAdmissionPolicy 'podvirt-host-disk' with binding 'podvirt-host-disk' denied request: user alice may not use hostDisk volumes in namespace default: "
      + 'it needs the verb use on virtualmachineinstances/hostdisk (kubevirt.io), which the ClusterRole podvirt-host-disk grants');
    assert.equal((await admin(['get', 'vmi', 'hd-refused'])).code, 1, 'the refused VMI was not stored');
    await ok(as(['create', '-f', '-'], vmi('plain', false)));
    // Granted in this namespace: the same VMI is admitted.
    await ok(admin(['create', 'rolebinding', 'alice-host-disk', '-n', 'default', '--clusterrole=podvirt-host-disk', '--user=alice']));
    await can(['use', 'virtualmachineinstances.kubevirt.io', '--subresource=hostdisk']);
    await ok(as(['create', '-f', '-'], vmi('hd-granted', true)));
    // The grant taken away: a write that leaves the volumes as they were (a label, as the
    // controller's finalizer and label writes) is not the policy's business.
    await ok(admin(['delete', 'rolebinding', 'alice-host-disk', '-n', 'default']));
    await ok(as(['label', 'vmi', 'hd-granted', 'team=a']));
    for (const name of ['plain', 'hd-granted']) await ok(admin(['delete', 'vmi', name, '--wait=false']));
  });
});
