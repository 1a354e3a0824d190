// The testbed's storage with real semantics, driven by kubectl: static binding by size,
// access mode, volumeMode and storage class; the local provisioner's directories and loop
// devices; reclaim Delete and Retain; the kubelet mounting a claim and a Secret's keys into a
// pod, waiting (FailedMount) for a Secret that does not exist yet. Nothing it creates is left:
// no loop device, no directory. The default StorageClass serves a claim that names none. Runs on
// the real control plane too (PODVIRT_TESTBED_CONTROL_PLANE=real), where kube-controller-manager
// binds and the testbed's provisioner only provisions and deletes: same assertions. Its pods
// mount no ServiceAccount token (the testbed kubelet has no projected volumes; podvirt's
// launcher pods mount none either).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { CoreV1Api, KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import { eventually } from '@podvirt/test-support';
import { startTestbed, type Testbed } from '../testbed/cli/index.js';
import { kubectl as kubectlAt } from './testbed-helpers.js';
import { controlPlaneFromEnv } from './vmi-stack.js';

// kube-controller-manager's binder looks again at a claim it found no volume for only every
// --pvclaimbinder-sync-period (15 s by default): a claim it sees before the volume's informer does
// binds on that pass. Both lanes get the real binder's bound.
const BINDS_WITHIN_MS = 30_000;

const yaml = (docs: object[]): string => docs.map((d) => stringify(d)).join('---\n');

describe('testbed persistent volumes', () => {
  let tb: Testbed;
  let core: CoreV1Api;
  let stateDir: string;
  let hostDir: string;
  const loopsBefore = execFileSync('losetup', ['-a'], { encoding: 'utf8' });
  before(async () => {
    stateDir = await mkdtemp(join(tmpdir(), 'podvirt-testbed-storage-'));
    hostDir = await mkdtemp(join(tmpdir(), 'podvirt-static-pv-'));
    tb = await startTestbed({ stateDir, ...controlPlaneFromEnv() });
    const kc = new KubeConfig();
    kc.loadFromFile(tb.kubeconfigPath);
    core = kc.makeApiClient(CoreV1Api);
  });
  after(async () => {
    await tb.close();
    await rm(hostDir, { recursive: true, force: true });
    assert.equal(execFileSync('losetup', ['-a'], { encoding: 'utf8' }), loopsBefore, 'no loop device left attached');
    assert.equal(existsSync(stateDir), false);
  });

  const kubectl = (kubeconfig: string, args: string[]) => kubectlAt(kubeconfig, args, undefined, tb.controlPlane?.binaries.kubectl);
  const apply = async (docs: object[]): Promise<void> => {
    const file = join(hostDir, `apply-${Math.random().toString(16).slice(2)}.yaml`);
    await writeFile(file, yaml(docs));
    const out = await kubectl(tb.kubeconfigPath, ['apply', '-f', file]);
    assert.equal(out.code, 0, out.stderr);
  };
  const claimPhase = async (name: string): Promise<string | undefined> => (await core.readNamespacedPersistentVolumeClaim({ namespace: 'default', name })).status?.phase;
  const events = async (name: string): Promise<string> => (await kubectl(tb.kubeconfigPath, ['get', 'events', '--field-selector', `involvedObject.name=${name}`])).stdout;
  const pvc = (name: string, spec: Record<string, unknown>) => ({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name, namespace: 'default' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '64Mi' } }, ...spec } });

  test('static binding: the smallest fitting PV of the claim\'s class, volumeMode and access mode; a mismatch stays Pending with the reason', async () => {
    await mkdir(join(hostDir, 'small'));
    await mkdir(join(hostDir, 'big'));
    const pv = (name: string, size: string, extra: Record<string, unknown> = {}) => ({ apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name },
      spec: { capacity: { storage: size }, accessModes: ['ReadWriteOnce'], storageClassName: 'manual', hostPath: { path: join(hostDir, name.replace('pv-', '')) }, ...extra } });
    await apply([pv('pv-small', '100Mi'), pv('pv-big', '1Gi', { persistentVolumeReclaimPolicy: 'Retain' }), pvc('static', { storageClassName: 'manual' }),
      pvc('wrong-mode', { storageClassName: 'manual', volumeMode: 'Block', volumeName: 'pv-big' })]);
    await eventually(async () => ((await claimPhase('static')) === 'Bound' ? true : undefined), { what: 'static bound', deadlineMs: BINDS_WITHIN_MS });
    const got = await kubectl(tb.kubeconfigPath, ['get', 'pv,pvc']);
    assert.match(got.stdout, /NAME\s+CAPACITY\s+ACCESS MODES\s+RECLAIM POLICY\s+STATUS\s+CLAIM\s+STORAGECLASS/);
    assert.match(got.stdout, /persistentvolume\/pv-small\s+100Mi\s+RWO\s+Retain\s+Bound\s+default\/static\s+manual/);
    assert.match(got.stdout, /persistentvolumeclaim\/static\s+Bound\s+pv-small\s+100Mi\s+RWO\s+manual/);
    assert.match(got.stdout, /persistentvolumeclaim\/wrong-mode\s+Pending/);
    await eventually(async () => (/VolumeMismatch.*Cannot bind to requested volume "pv-big": incompatible volumeMode/.test(await events('wrong-mode')) ? true : undefined), { what: 'binding failure reported', deadlineMs: 10_000 });
    const described = await kubectl(tb.kubeconfigPath, ['describe', 'pvc', 'static']);
    assert.match(described.stdout, /Status:\s+Bound/);
    assert.match(described.stdout, /Volume:\s+pv-small/);
  });

  test('a claim of the local class is provisioned; a pod\'s data on it outlives the pod; Delete frees the directory', async () => {
    await apply([{ apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: 'local' }, provisioner: 'podvirt.io/testbed-local', reclaimPolicy: 'Delete' },
      pvc('data', { storageClassName: 'local' })]);
    await eventually(async () => ((await claimPhase('data')) === 'Bound' ? true : undefined), { what: 'data bound', deadlineMs: BINDS_WITHIN_MS });
    const volumeName = (await core.readNamespacedPersistentVolumeClaim({ namespace: 'default', name: 'data' })).spec?.volumeName ?? '';
    const dir = (await core.readPersistentVolume({ name: volumeName })).spec?.hostPath?.path ?? '';
    assert.ok(dir.startsWith(stateDir), dir);
    const runPod = async (name: string, script: string): Promise<string> => {
      const body: V1Pod = { metadata: { name }, spec: { restartPolicy: 'Never', terminationGracePeriodSeconds: 1, automountServiceAccountToken: false, volumes: [{ name: 'd', persistentVolumeClaim: { claimName: 'data' } }],
        containers: [{ name: 'main', image: 'busybox', command: ['sh', '-c', script], volumeMounts: [{ name: 'd', mountPath: '/data' }] }] } };
      await core.createNamespacedPod({ namespace: 'default', body });
      await eventually(async () => ((await core.readNamespacedPod({ namespace: 'default', name })).status?.phase === 'Succeeded' ? true : undefined), { what: `${name} done`, deadlineMs: 10_000 });
      const logs = (await kubectl(tb.kubeconfigPath, ['logs', name])).stdout;
      await core.deleteNamespacedPod({ namespace: 'default', name });
      return logs;
    };
    await runPod('writer', 'echo marker-1 > /data/marker && sync');
    assert.equal(await readFile(join(dir, 'marker'), 'utf8'), 'marker-1\n');
    assert.equal(await runPod('reader', 'cat /data/marker'), 'marker-1\n');
    await eventually(async () => ((await core.listNamespacedPod({ namespace: 'default' })).items.length === 0 ? true : undefined), { what: 'pods gone', deadlineMs: 10_000 });
    await core.deleteNamespacedPersistentVolumeClaim({ namespace: 'default', name: 'data' });
    await eventually(async () => ((await core.listPersistentVolume()).items.some((p) => p.metadata?.name === volumeName) ? undefined : true), { what: 'pv reclaimed', deadlineMs: 10_000 });
    assert.equal(existsSync(dir), false, 'the provisioned directory is removed');
  });

  test('a claim that names no class gets the default class (standard, the local provisioner\'s) and a volume', async () => {
    assert.match((await kubectl(tb.kubeconfigPath, ['get', 'storageclass'])).stdout, /^standard \(default\)\s+podvirt\.io\/testbed-local\s+Delete\s+Immediate\s+false/m);
    await apply([pvc('plain', {})]);
    await eventually(async () => ((await claimPhase('plain')) === 'Bound' ? true : undefined), { what: 'plain bound', deadlineMs: BINDS_WITHIN_MS });
    const claim = await core.readNamespacedPersistentVolumeClaim({ namespace: 'default', name: 'plain' });
    assert.equal(claim.spec?.storageClassName, 'standard');
    const volumeName = claim.spec?.volumeName ?? '';
    const pv = await core.readPersistentVolume({ name: volumeName });
    assert.equal(pv.metadata?.annotations?.['pv.kubernetes.io/provisioned-by'], 'podvirt.io/testbed-local');
    assert.equal(pv.spec?.persistentVolumeReclaimPolicy, 'Delete');
    await core.deleteNamespacedPersistentVolumeClaim({ namespace: 'default', name: 'plain' });
    await eventually(async () => ((await core.listPersistentVolume()).items.some((p) => p.metadata?.name === volumeName) ? undefined : true), { what: 'plain reclaimed', deadlineMs: 30_000 });
    assert.equal(existsSync(pv.spec?.hostPath?.path ?? ''), false, 'the provisioned directory is removed');
  });

  test('Retain keeps a released volume and its data', async () => {
    await apply([pvc('kept', { storageClassName: 'manual', resources: { requests: { storage: '512Mi' } } })]);
    await eventually(async () => ((await claimPhase('kept')) === 'Bound' ? true : undefined), { what: 'kept bound', deadlineMs: BINDS_WITHIN_MS });
    await core.deleteNamespacedPersistentVolumeClaim({ namespace: 'default', name: 'kept' });
    await eventually(async () => ((await core.readPersistentVolume({ name: 'pv-big' })).status?.phase === 'Released' ? true : undefined), { what: 'pv-big released', deadlineMs: 10_000 });
    assert.ok(existsSync(join(hostDir, 'big')));
  });

  test('a block claim gets a loop device, detached again when the claim goes', async () => {
    await apply([pvc('raw', { storageClassName: 'local', volumeMode: 'Block' })]);
    await eventually(async () => ((await claimPhase('raw')) === 'Bound' ? true : undefined), { what: 'raw bound', deadlineMs: BINDS_WITHIN_MS });
    const volumeName = (await core.readNamespacedPersistentVolumeClaim({ namespace: 'default', name: 'raw' })).spec?.volumeName ?? '';
    const device = (await core.readPersistentVolume({ name: volumeName })).spec?.local?.path ?? '';
    assert.match(device, /^\/dev\/loop\d+$/);
    assert.match(execFileSync('losetup', ['-a'], { encoding: 'utf8' }), new RegExp(`^${device}:`, 'm'));
    await core.deleteNamespacedPersistentVolumeClaim({ namespace: 'default', name: 'raw' });
    await eventually(async () => (execFileSync('losetup', ['-a'], { encoding: 'utf8' }).includes(`${device}:`) && execFileSync('losetup', ['-a'], { encoding: 'utf8' }).includes(volumeName) ? undefined : true), { what: 'loop detached', deadlineMs: 10_000 });
  });

  test('a Secret\'s keys are mounted by subPath; a missing Secret is a FailedMount until it exists', async () => {
    const body: V1Pod = { metadata: { name: 'secret-reader' }, spec: { restartPolicy: 'Never', terminationGracePeriodSeconds: 1, automountServiceAccountToken: false, volumes: [{ name: 's', secret: { secretName: 'ud' } }],
      containers: [{ name: 'main', image: 'busybox', command: ['sh', '-c', 'cat /cfg/userdata'], volumeMounts: [{ name: 's', mountPath: '/cfg/userdata', subPath: 'userdata', readOnly: true }] }] } };
    await core.createNamespacedPod({ namespace: 'default', body });
    await eventually(async () => (/FailedMount.*secret "ud" not found/.test(await events('secret-reader')) ? true : undefined), { what: 'FailedMount', deadlineMs: 10_000 });
    await core.createNamespacedSecret({ namespace: 'default', body: { metadata: { name: 'ud' }, stringData: { userdata: '#cloud-config\n' } } });
    await eventually(async () => ((await core.readNamespacedPod({ namespace: 'default', name: 'secret-reader' })).status?.phase === 'Succeeded' ? true : undefined), { what: 'reader done', deadlineMs: 10_000 });
    assert.equal((await kubectl(tb.kubeconfigPath, ['logs', 'secret-reader'])).stdout, '#cloud-config\n');
    assert.match((await kubectl(tb.kubeconfigPath, ['get', 'secret', 'ud'])).stdout, /ud\s+Opaque\s+1/);
  });
});
