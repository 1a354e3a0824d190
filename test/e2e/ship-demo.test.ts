// The main job and its companions as a user runs them: the demo goes from apply to Succeeded
// and leaves nothing behind; testbed-up keeps a stack running that kubectl and podvirtctl
// reach with the printed settings, and testbed-down stops it completely.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { promisify } from 'node:util';
import { eventually } from '@podvirt/test-support';
import { ROOT } from './ship-manifests-helpers.js';

const run = promisify(execFile);
const MAIN = join(ROOT, 'test/dist/testbed/demo/main.js');

// The four run at once: each starts its own stack in its own temp dirs (testbed-up's in
// PODVIRT_TESTBED_DIR) and checks only what it started, and each mostly waits on its guest.
describe('scripts/demo, scripts/testbed-up and scripts/testbed-down', { concurrency: true }, () => {
  test('the demo runs a VMI from kubectl apply to Succeeded, shows its console log, types into its console, pauses it with podvirtctl, and leaves nothing behind', async () => {
    const { stdout } = await run(process.execPath, [MAIN], { timeout: 300_000 });
    for (const expected of [
      /\$ kubectl apply -f \S+manifests\/examples\/vmi-test-guest\.yaml/,
      /watch: VMI testvm is Running/,
      /PODVIRT-GUEST-READY/,
      /testvm\s+\S+\s+Running\s/,
      /virt-launcher\/qemu/,
      /\$ kubectl logs virt-launcher-testvm-\S+ -c guest-console-log/,
      /\$ podvirtctl console vmi testvm/,
      /random\/boot_id\s*\n[^\n]*[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/,
      /Detached from the console of VMI default\/testvm/,
      /Normal\s+Started\s+virtualmachineinstance\/testvm/,
      /VMI default\/testvm was paused/,
      /testvm\s+\S+\s+Running\s.*True\s*$/m,
      /VMI default\/testvm was unpaused/,
      /watch: VMI testvm is Succeeded/,
      /nothing left behind/,
    ]) {
      assert.match(stdout, expected);
    }
    const steps = stdout.split('\n').filter((l) => l.includes('▸'));
    assert.ok(steps.length >= 10, `the demo explains each step:\n${steps.join('\n')}`);
  });

  test('scripts/demo --control-plane real: the same demo on kube-apiserver, with its own kubectl', {
    skip: process.env['PODVIRT_SKIP_REAL_CONTROL_PLANE'] === '1' ? 'PODVIRT_SKIP_REAL_CONTROL_PLANE=1' : false,
  }, async () => {
    const { stdout } = await run(process.execPath, [MAIN, '--control-plane', 'real'], { timeout: 300_000 });
    for (const expected of [
      /starting the real control plane \(etcd, kube-apiserver/,
      /\$ kubectl version\n.*Client Version: v1\.34\.\d+\n.*\n.*Server Version: v1\.34\.\d+\n/,
      /watch: VMI testvm is Running/,
      /PODVIRT-GUEST-READY/,
      /Detached from the console of VMI default\/testvm/,
      /VMI default\/testvm was paused/,
      /watch: VMI testvm is Succeeded/,
      /nothing left behind/,
    ]) {
      assert.match(stdout, expected);
    }
  });

  test('scripts/demo --images: the launcher pod runs from podvirt/launcher in podman (runc), qemu inside its container', async () => {
    const { stdout } = await run(process.execPath, [MAIN, '--images'], { timeout: 300_000 });
    for (const expected of [
      /podman ps \| k8s_\S+-compute-0\s+localhost\/podvirt\/launcher:\S+\s+compute/,
      /podman ps \| k8s_\S+-guest-console-log-0\s+localhost\/podvirt\/launcher:\S+\s+guest-console-log/,
      /podman top \| 1\s+\d+\s+root\s+node \/usr\/bin\/podvirt-launcher-monitor/,
      /podman top \| \d+\s+\d+\s+\S+\s+\S*\/sbin\/virtqemud/,
      /qemu \(host pid \d+\) cgroup: \d+:memory:\/podvirt-testbed\/k8s_\S+-compute-0\/libpod-[0-9a-f]{64}/,
      /qemu root filesystem: overlay/,
      /PODVIRT-GUEST-READY/,
      /VMI default\/testvm was paused/,
      /watch: VMI testvm is Succeeded/,
      /nothing left behind/,
    ]) {
      assert.match(stdout, expected);
    }
  });

  test('testbed-up prints settings that reach the stack, passes flags after -- to the controller; testbed-down stops it and removes its state', async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'podvirt-testbed-up-'));
    const env = { ...process.env, PODVIRT_TESTBED_DIR: dir };
    let stopped = false;
    // One hook, in order: the stack down first (it needs the info file in `dir`), then `dir`.
    t.after(async () => {
      if (!stopped) await run(process.execPath, [MAIN, 'down'], { env, timeout: 180_000 }).catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    });
    const up = await run(process.execPath, [MAIN, 'up', '--', '--feature-gates=HostDisk', `--host-disk-allowed-dir=${dir}`], { env, timeout: 120_000 });
    assert.match(up.stdout, new RegExp(`podvirt-controller runs with the manifest's flags plus: --feature-gates=HostDisk --host-disk-allowed-dir=${dir}\n`));
    const started = await eventually(async () => (await readFile(join(dir, 'controller.log'), 'utf8').catch(() => '')).split('\n').find((l) => l.includes('"controller started"')), { what: 'the controller\'s start line in its log' });
    assert.deepEqual((JSON.parse(started) as { hostDisk?: unknown }).hostDisk, { enabled: true, allowedDirs: [dir] }, 'the flags reached the controller');
    const kubeconfig = /export KUBECONFIG=(\S+)/.exec(up.stdout)?.[1] ?? '';
    const socket = /export PODVIRT_NODE_SOCKET=(\S+)/.exec(up.stdout)?.[1] ?? '';
    const second = await run(process.execPath, [MAIN, 'up'], { env, timeout: 60_000 }).then(() => 'started', (err: { stderr?: string }) => err.stderr ?? '');
    assert.match(second, /already up/);

    const nodes = await run('kubectl', ['get', 'nodes', '-o', 'name'], { env: { ...env, KUBECONFIG: kubeconfig } });
    assert.match(nodes.stdout, /^node\//);
    // The handler answers on the printed socket (no VMIs yet: an empty list).
    const list = await run(process.execPath, [join(ROOT, 'packages/ctl/bin/podvirtctl.js'), 'list', '-o', 'json'], { env: { ...env, PODVIRT_NODE_SOCKET: socket } });
    assert.deepEqual(JSON.parse(list.stdout), { vmis: [] });

    const down = await run(process.execPath, [MAIN, 'down'], { env, timeout: 180_000 });
    stopped = true;
    assert.match(down.stdout, /stopped; nothing left running/);
    assert.equal(existsSync(kubeconfig), false, 'the stack state is removed');
    assert.equal(existsSync(join(dir, 'podvirt-stack.json')), false);
    await assert.rejects(run(process.execPath, [MAIN, 'down'], { env }), /not up/);
  });
});
