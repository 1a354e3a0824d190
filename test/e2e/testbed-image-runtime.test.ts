// The testbed kubelet's image runtime (--runtime image): pods from real images in podman's store,
// run by runc inside the kubelet's own sandbox, with the pod spec applied as a kubelet applies
// it. Uses the Debian base scripts/images imports (run scripts/images first; scripts/test does).
import assert from 'node:assert/strict';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { CoreV1Api, KubeConfig, type V1ContainerStatus, type V1Pod } from '@kubernetes/client-node';
import { podman } from '../testbed/container/podman.js';
import { startTestbed, type Testbed } from '../testbed/cli/index.js';
import { eventually } from '@podvirt/test-support';
import { kubectl } from './testbed-helpers.js';

const IMAGE = 'localhost/podvirt-base/debian:bookworm-slim';
const WAIT_MS = 90_000;
// CAP_NET_ADMIN is bit 12 of the capability masks in /proc/<pid>/status.
const NET_ADMIN = 1n << 12n;

describe('testbed kubelet, image runtime (podman + runc)', () => {
  let tb: Testbed;
  let core: CoreV1Api;
  let hostDir: string;
  before(async () => {
    await podman(['image', 'exists', IMAGE]).catch(() => {
      throw new Error(`${IMAGE} is missing: run scripts/images`);
    });
    hostDir = await mkdtemp(join(tmpdir(), 'podvirt-image-runtime-host-'));
    // Written by a container that runs as user 1234.
    await chmod(hostDir, 0o777);
    tb = await startTestbed({ stateDir: await mkdtemp(join(tmpdir(), 'podvirt-testbed-')), runtime: 'image' });
    const kc = new KubeConfig();
    kc.loadFromFile(tb.kubeconfigPath);
    core = kc.makeApiClient(CoreV1Api);
  });
  after(async () => {
    await tb.close();
    await rm(hostDir, { recursive: true, force: true });
  });

  const create = (body: V1Pod): Promise<V1Pod> => core.createNamespacedPod({ namespace: 'default', body });
  const read = (name: string): Promise<V1Pod> => core.readNamespacedPod({ namespace: 'default', name });
  const phase = (name: string, wanted: string): Promise<V1Pod> =>
    eventually(async () => ((await read(name)).status?.phase === wanted ? read(name) : undefined), { what: `${name} ${wanted}`, deadlineMs: WAIT_MS });
  const status = (pod: V1Pod, name = 'main'): V1ContainerStatus | undefined => pod.status?.containerStatuses?.find((c) => c.name === name);
  const logs = async (name: string, container = 'main'): Promise<string> => (await kubectl(tb.kubeconfigPath, ['logs', name, '-c', container])).stdout;

  test('init container, emptyDir, hostPath, runAsUser, the sandbox netns, logs and the exit code', async () => {
    await create({
      metadata: { name: 'spec-pod' },
      spec: {
        restartPolicy: 'Never',
        terminationGracePeriodSeconds: 5,
        volumes: [{ name: 'scratch', emptyDir: {} }, { name: 'host', hostPath: { path: hostDir, type: 'Directory' } }],
        initContainers: [{ name: 'init', image: IMAGE, command: ['sh', '-c', 'echo from-init > /scratch/note'], volumeMounts: [{ name: 'scratch', mountPath: '/scratch' }] }],
        containers: [{
          name: 'main',
          image: IMAGE,
          command: ['sh', '-c', 'cat /scratch/note; echo "uid=$(id -u)"; cat /proc/net/fib_trie > /host/fib; echo written > /host/by-container; exit 3'],
          securityContext: { runAsUser: 1234, runAsGroup: 1234 },
          volumeMounts: [{ name: 'scratch', mountPath: '/scratch' }, { name: 'host', mountPath: '/host' }],
        }],
      },
    });
    const done = await phase('spec-pod', 'Failed');
    const main = status(done);
    assert.equal(main?.state?.terminated?.exitCode, 3);
    assert.equal(main?.state?.terminated?.reason, 'Error');
    assert.match(main?.containerID ?? '', /^podman:\/\/[0-9a-f]{64}$/);
    assert.equal(done.status?.initContainerStatuses?.[0]?.state?.terminated?.exitCode, 0);
    const out = await logs('spec-pod');
    assert.match(out, /^from-init\nuid=1234\n/);
    // The container saw the sandbox's network namespace: the pod's address is one of its own.
    const fib = await readFile(join(hostDir, 'fib'), 'utf8').catch(() => '');
    assert.ok(done.status?.podIP !== undefined && fib.includes(done.status.podIP), `pod IP ${String(done.status?.podIP)} in the container's routes`);
  });

  test('restartPolicy OnFailure: the container restarts, restartCount counts it', async () => {
    await create({
      metadata: { name: 'restarts' },
      spec: {
        restartPolicy: 'OnFailure',
        terminationGracePeriodSeconds: 5,
        volumes: [{ name: 'host', hostPath: { path: hostDir } }],
        containers: [{ name: 'main', image: IMAGE, command: ['sh', '-c', 'n=$(cat /host/runs 2>/dev/null || echo 0); echo $((n+1)) > /host/runs; echo run $n; [ "$n" -ge 1 ]'], volumeMounts: [{ name: 'host', mountPath: '/host' }] }],
      },
    });
    const done = await phase('restarts', 'Succeeded');
    assert.equal(status(done)?.restartCount, 1);
    assert.equal(status(done)?.state?.terminated?.exitCode, 0);
  });

  test('capabilities: the default set lacks NET_ADMIN; add gives it, drop ALL takes everything', async () => {
    const capPod = (name: string, capabilities: object | undefined): V1Pod => ({
      metadata: { name },
      spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: IMAGE, command: ['sh', '-c', 'grep CapEff /proc/self/status'], ...(capabilities === undefined ? {} : { securityContext: { capabilities } }) }] },
    });
    await create(capPod('caps-default', undefined));
    await create(capPod('caps-added', { add: ['NET_ADMIN'] }));
    await create(capPod('caps-none', { drop: ['ALL'] }));
    const mask = async (name: string): Promise<bigint> => {
      await phase(name, 'Succeeded');
      return BigInt(`0x${/CapEff:\s*([0-9a-f]+)/.exec(await logs(name))?.[1] ?? 'x'}`);
    };
    assert.equal((await mask('caps-default')) & NET_ADMIN, 0n);
    assert.equal((await mask('caps-added')) & NET_ADMIN, NET_ADMIN);
    assert.equal(await mask('caps-none'), 0n);
  });

  test('resources.limits.memory is enforced by the cgroup: the container is OOMKilled', async () => {
    await create({
      metadata: { name: 'hog' },
      spec: {
        restartPolicy: 'Never',
        // tail keeps the whole (endless, newline-free) line it reads in memory.
        containers: [{ name: 'main', image: IMAGE, command: ['tail', '/dev/zero'], resources: { limits: { memory: '32Mi' } } }],
      },
    });
    const done = await phase('hog', 'Failed');
    assert.equal(status(done)?.state?.terminated?.reason, 'OOMKilled');
    assert.equal(status(done)?.state?.terminated?.exitCode, 137);
  });

  test('an image the store does not have: ErrImagePull, then ImagePullBackOff, naming the image', async () => {
    await create({ metadata: { name: 'no-image' }, spec: { containers: [{ name: 'main', image: 'podvirt/does-not-exist:1' }] } });
    const waiting = await eventually(async () => {
      const reason = status(await read('no-image'))?.state?.waiting?.reason;
      return reason === 'ErrImagePull' || reason === 'ImagePullBackOff' ? read('no-image') : undefined;
    }, { what: 'pull failure', deadlineMs: WAIT_MS });
    assert.match(status(waiting)?.state?.waiting?.message ?? '', /podvirt\/does-not-exist:1/);
    assert.equal(waiting.status?.phase, 'Pending');
    await core.deleteNamespacedPod({ namespace: 'default', name: 'no-image', gracePeriodSeconds: 0 });
  });

  test('an entrypoint the image does not have: terminated with StartError, exit code 128, and the runtime\'s words', async () => {
    await create({ metadata: { name: 'no-entry' }, spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: IMAGE, command: ['/usr/bin/not-there'] }] } });
    const done = await phase('no-entry', 'Failed');
    const terminated = status(done)?.state?.terminated;
    assert.equal(terminated?.reason, 'StartError');
    assert.equal(terminated?.exitCode, 128);
    assert.match(terminated?.message ?? '', /not-there.*no such file or directory/);
  });

  test('deletion: SIGTERM within terminationGracePeriodSeconds, then the container is gone from podman', async () => {
    await create({
      metadata: { name: 'graceful' },
      spec: {
        terminationGracePeriodSeconds: 20,
        volumes: [{ name: 'host', hostPath: { path: hostDir } }],
        containers: [{ name: 'main', image: IMAGE, command: ['bash', '-c', "trap 'echo TERM > /host/term; exit 0' TERM; while :; do sleep 0.1; done"], volumeMounts: [{ name: 'host', mountPath: '/host' }] }],
      },
    });
    const running = await phase('graceful', 'Running');
    const id = status(running)?.containerID?.replace('podman://', '') ?? '';
    const deleted = await kubectl(tb.kubeconfigPath, ['delete', 'pod', 'graceful']);
    assert.equal(deleted.code, 0, deleted.stderr);
    assert.equal(await readFile(join(hostDir, 'term'), 'utf8'), 'TERM\n');
    await assert.rejects(podman(['container', 'exists', id]));
  });
});
