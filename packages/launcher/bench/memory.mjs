#!/usr/bin/env node
// Steady-state memory of one launcher with one idle VM: RSS and PSS (from
// /proc/<pid>/smaps_rollup) of the launcher (node) and of its libvirt daemon, with qemu for
// reference. Runs the launcher in its own mount namespace via the testbed, boots the test guest,
// waits for it to idle, measures, then stops everything.
// Needs a build (`pnpm run build`) and the guest image (`test/testbed/guest/build`).
// Usage: node packages/launcher/bench/memory.mjs [--settle-seconds N]
import { mkdir, mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const { guestImage, launcherDaemon, launcherDaemonEnv, startContainer, waitForConsoleText, processesInMountNamespace } = await import(join(root, 'test', 'dist', 'testbed', 'index.js'));
// virtqemud unless PODVIRT_TESTBED_DAEMON=libvirtd, with its own capabilities cache.
const daemonEnv = launcherDaemonEnv(launcherDaemon(root));
const settleIdx = process.argv.indexOf('--settle-seconds');
const settleSeconds = settleIdx > 0 ? Number(process.argv[settleIdx + 1]) : 10;

async function memory(pid) {
  const text = await readFile(`/proc/${pid}/smaps_rollup`, 'utf8');
  const kb = (key) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? NaN);
  return { rssMiB: kb('Rss') / 1024, pssMiB: kb('Pss') / 1024 };
}

async function byComm(ns) {
  const out = {};
  for (const pid of await processesInMountNamespace(ns)) {
    const comm = (await readFile(`/proc/${pid}/comm`, 'utf8').catch(() => '')).trim();
    out[comm] = pid;
  }
  return out;
}

const guest = guestImage();
const dir = await mkdtemp(join(tmpdir(), 'podvirt-bench-'));
const uid = 'b3c0a7d2-0000-4000-8000-000000000001';
const cdisks = join(dir, 'share', 'container-disks');
await mkdir(join(cdisks, 'kernel-boot', 'boot'), { recursive: true });
await mkdir(join(cdisks, 'data'), { recursive: true });
await symlink(guest.kernel, join(cdisks, 'kernel-boot', 'boot', 'vmlinuz'));
await symlink(guest.initrd, join(cdisks, 'kernel-boot', 'boot', 'initrd.img'));
await symlink(guest.dataDisk, join(cdisks, 'data', 'disk.img'));
const vmi = {
  apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', metadata: { name: 'bench', namespace: 'bench', uid },
  spec: {
    domain: {
      resources: { requests: { memory: '128Mi' } },
      firmware: { kernelBoot: { kernelArgs: guest.kernelArgs, container: { image: 'guest', kernelPath: '/boot/vmlinuz', initrdPath: '/boot/initrd.img' } } },
      devices: { autoattachGraphicsDevice: false, autoattachMemBalloon: false, disks: [{ name: 'data' }] },
    },
    volumes: [{ name: 'data', containerDisk: { image: 'guest' } }],
  },
};
const container = await startContainer({
  command: [process.execPath, join(root, 'packages', 'launcher', 'bin', 'podvirt-launcher.js'), '--name', 'bench', '--namespace', 'bench', '--uid', uid,
    '--kubevirt-share-dir', join(dir, 'share'), '--ephemeral-disk-dir', join(dir, 'eph'), '--container-disk-dir', cdisks,
    '--private-dir', join(dir, 'private'), '--allow-emulation'],
  stateDir: join(dir, 'container'),
  env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...daemonEnv, STANDALONE_VMI: JSON.stringify(vmi) },
});
container.stdout.resume();
container.stderr.resume();
try {
  await waitForConsoleText(join(dir, 'private', uid, 'virt-serial0-log'), guest.readyMarker, { timeoutMs: 90_000 });
  await sleep(settleSeconds * 1000);
  const procs = await byComm(container.mountNamespace);
  const rows = [];
  for (const [name, comm] of [['launcher (node)', 'node'], ['libvirt daemon', procs.virtqemud ? 'virtqemud' : 'libvirtd'], ['qemu (reference)', 'qemu-system-x86']]) {
    const pid = procs[comm];
    if (pid === undefined) continue;
    rows.push({ process: name, pid, ...(await memory(pid)) });
  }
  console.log(`steady state after ready + ${settleSeconds} s, one idle 128 MiB TCG guest:`);
  console.table(rows.map((r) => ({ ...r, rssMiB: r.rssMiB.toFixed(1), pssMiB: r.pssMiB.toFixed(1) })));
  console.log(JSON.stringify(rows));
} finally {
  await container.stop({ graceMs: 30_000 });
  await rm(dir, { recursive: true, force: true });
}
