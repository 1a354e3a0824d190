#!/usr/bin/env node
// Steady-state memory of one VMI's own processes with one idle VM: RSS and PSS (from
// /proc/<pid>/smaps_rollup) of the monitor (node, PID 1 of the pod's compute container), the
// launcher (node) and its libvirt daemon, with qemu for reference; and how long the daemon took
// from the launcher's start to its socket. Runs the monitor in its own mount and PID namespaces
// via the testbed, boots the test guest, waits for it to idle, measures, then stops everything:
// once with Debian's libvirtd and, when tools/build-virtqemud has built it, once with virtqemud.
// Needs a build (`pnpm run build`) and the guest image (`test/testbed/guest/build`).
// Usage: node packages/launcher/bench/memory.mjs [--settle-seconds N]
import { mkdir, mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const { guestImage, startContainer, waitForConsoleText, processesInMountNamespace } = await import(join(root, 'test', 'dist', 'testbed', 'index.js'));
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
    (out[comm] ??= []).push(pid);
  }
  return out;
}

const guest = guestImage();

function virtqemudDir() {
  try {
    return execFileSync(join(root, 'tools', 'build-virtqemud'), ['--dir'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return undefined;
  }
}

async function measure(daemon, built) {
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
  const caps = built === undefined ? join(root, '.cache', 'libvirt-caps') : join(built, 'caps');
  const container = await startContainer({
    command: [process.execPath, join(root, 'packages', 'launcher-monitor', 'bin', 'podvirt-launcher-monitor.js'),
      '--launcher-bin', join(root, 'packages', 'launcher', 'bin', 'podvirt-launcher.js'),
      '--name', 'bench', '--namespace', 'bench', '--uid', uid,
      '--kubevirt-share-dir', join(dir, 'share'), '--ephemeral-disk-dir', join(dir, 'eph'), '--container-disk-dir', cdisks,
      '--private-dir', join(dir, 'private'), '--allow-emulation', '--libvirt-caps-cache', caps],
    stateDir: join(dir, 'container'),
    pidNamespace: true,
    env: {
      PATH: `${dirname(process.execPath)}:${process.env.PATH ?? '/usr/bin:/bin'}`, STANDALONE_VMI: JSON.stringify(vmi),
      ...(built === undefined ? {} : { PODVIRT_VIRTQEMUD: join(built, 'sbin', 'virtqemud') }),
    },
  });
  let out = '';
  container.stdout.on('data', (c) => (out += c.toString()));
  container.stderr.resume();
  try {
    await waitForConsoleText(join(dir, 'private', uid, 'virt-serial0-log'), guest.readyMarker, { timeoutMs: 90_000 });
    await sleep(settleSeconds * 1000);
    const lines = out.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
    const at = (msg) => new Date(lines.find((l) => l.msg === msg)?.time ?? NaN).getTime();
    const startMs = at('libvirt daemon started') - at('launcher starting');
    const procs = await byComm(container.mountNamespace);
    const rows = [];
    const launcher = (procs.node ?? []).find((pid) => pid !== container.pid);
    for (const [name, pid] of [['monitor (node)', container.pid], ['launcher (node)', launcher], [daemon, procs[daemon]?.[0]], ['qemu (reference)', procs['qemu-system-x86']?.[0]]]) {
      if (pid === undefined) continue;
      rows.push({ daemon, process: name, pid, ...(await memory(pid)) });
    }
    return { daemon, startMs, rows };
  } finally {
    await container.stop({ graceMs: 30_000 });
    await rm(dir, { recursive: true, force: true });
  }
}

const built = virtqemudDir();
const results = [await measure('libvirtd', undefined), ...(built === undefined ? [] : [await measure('virtqemud', built)])];
console.log(`steady state after ready + ${settleSeconds} s, one idle 128 MiB TCG guest:`);
console.table(results.flatMap((r) => r.rows).map((r) => ({ ...r, rssMiB: r.rssMiB.toFixed(1), pssMiB: r.pssMiB.toFixed(1) })));
for (const r of results) {
  const own = r.rows.filter((row) => !row.process.startsWith('qemu')).reduce((sum, row) => sum + row.pssMiB, 0);
  console.log(`${r.daemon}: monitor + launcher + daemon PSS ${own.toFixed(1)} MiB; daemon up ${Math.round(r.startMs)} ms after the launcher's start`);
}
console.log(JSON.stringify(results));
