// Volume hotplug costs on the testbed, each against a floor measured in the same run:
//  - `podvirtctl addvolume` → the volume's status Ready (the claim written into the VMI, its
//    attachment pod run, the disk bind-mounted into the launcher pod, attached to the domain) and
//    `podvirtctl removevolume` → gone (detached, unmounted, the pod and the status entry gone), on
//    a running test guest; the floor: a raw libvirt attach-device / detach-device (until the guest
//    released it) of a disk file of the same size on the scsi bus of the launcher's domain XML for
//    the test guest, straight through @podvirt/libvirt on a daemon of its own;
//  - guest sequential write throughput (O_DIRECT, fsync per round) on the hotplugged disk against
//    the same claim attached at boot (also on the scsi bus), the same dd in the same guest image.
// Prints; asserts nothing.
//
//   node test/dist/bench/hotplug.js [rounds] [MiB per write round]   (default 5, 8 MiB; 4 write rounds)
import { mkdtemp, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { VirtualMachineInstance } from '@podvirt/api';
import { BOOT_TIMEOUT_MS, guestVmi, NS, VmiSuite } from '../e2e/vmi-stack.js';
import { DemoShell } from '../testbed/demo/demo-shell.js';
import { repoRoot } from '../testbed/guest/repo-root.js';
import { bootRawGuest } from './libvirt-floor.js';
import { pct } from './latency-sample.js';

const rounds = Number(process.argv[2] ?? '5');
const mib = Number(process.argv[3] ?? '8');
const WRITE_ROUNDS = 4;
const CLAIM_MIB = 64;
const DETACH_DEADLINE_MS = 30_000;

const VMI_API = { group: 'kubevirt.io', version: 'v1', namespace: NS, plural: 'virtualmachineinstances' };

/** Raw attach-device and detach-device (until the live XML lost the disk) on a plain domain. */
async function floor(): Promise<{ attach: number[]; detach: number[] }> {
  const raw = await bootRawGuest();
  const dir = await mkdtemp(join(tmpdir(), 'pvb-hotplug-'));
  try {
    const file = join(dir, 'disk.img');
    await writeFile(file, '');
    await truncate(file, CLAIM_MIB * 1024 * 1024);
    const xml = `<disk type='file' device='disk'><driver name='qemu' type='raw' cache='none' error_policy='stop' discard='unmap'/><source file='${file}'/><target dev='sda' bus='scsi'/><serial>FLOOR</serial><alias name='ua-floor'/></disk>`;
    // The launcher's own domain XML for the test guest (its virtio-scsi controller; the testbed's
    // plain domain has no PCI slot left for the controller libvirt would add).
    const dom = raw.dom;
    const has = async (): Promise<boolean> => (await raw.client.domainGetXmlDesc(dom)).includes("'ua-floor'");
    const attach: number[] = [];
    const detach: number[] = [];
    // One untimed round first.
    for (let i = 0; i <= rounds; i++) {
      const t0 = performance.now();
      await raw.client.domainAttachDevice(dom, xml);
      const t1 = performance.now();
      await raw.client.domainDetachDevice(dom, xml);
      const deadline = Date.now() + DETACH_DEADLINE_MS;
      while (await has()) {
        if (Date.now() > deadline) throw new Error(`the plain guest did not release the floor disk within ${DETACH_DEADLINE_MS} ms`);
        await new Promise((r) => setTimeout(r, 10));
      }
      if (i === 0) continue;
      attach.push(t1 - t0);
      detach.push(performance.now() - t1);
    }
    return { attach: attach.sort((a, b) => a - b), detach: detach.sort((a, b) => a - b) };
  } finally {
    await rm(dir, { recursive: true, force: true });
    await raw.close();
  }
}

function shell(suite: VmiSuite): DemoShell {
  const quiet = { step: () => undefined, detail: () => undefined };
  return new DemoShell({ out: quiet, env: process.env, node: process.execPath, repoRoot: repoRoot(import.meta.url), kubeconfig: suite.stack.kubeconfigPath, nodeApiSocket: suite.stack.nodeApiSocket });
}

/** The guest's scsi disk with this serial. */
async function diskWithSerial(suite: VmiSuite, vmi: string, serial: string): Promise<string> {
  const answer = new RegExp(`hp-disk=(sd[a-z]+) serial=\\S*${serial}`);
  const out = await shell(suite).console(vmi, 'for d in /sys/block/sd*; do echo "hp-disk=${d##*/} serial=$(tr -dc A-Za-z0-9 < $d/device/vpd_pg80)"; done', answer);
  const dev = answer.exec(out)?.[1];
  if (dev === undefined) throw new Error(`no disk with serial ${serial} in ${vmi}`);
  return dev;
}

/**
 * WRITE_ROUNDS × `mib` MiB written to /dev/`dev` with O_DIRECT and an fsync per round, run in the
 * background (a long command on the console would be typed again) and timed by the guest's
 * uptime; the result line is read from the serial log.
 */
async function guestWriteMs(suite: VmiSuite, vmi: VirtualMachineInstance, dev: string, tag: string): Promise<number> {
  const name = vmi.metadata.name ?? '';
  const ms = 'cut -d" " -f1 /proc/uptime | tr -d .';
  const dd = `dd if=/dev/zero of=/dev/${dev} bs=1M count=${mib} oflag=direct conv=fsync status=none`;
  const script = `t0=$(${ms}); for _ in $(seq ${WRITE_ROUNDS}); do ${dd}; done; t1=$(${ms}); echo "HPBENCH tag=${tag} write_ms=$(( (t1 - t0) * 10 ))"`;
  await shell(suite).console(name, `(${script}) > /dev/ttyS0 2>&1 & echo started=$((6 * 7))`, /started=42/);
  const log = suite.serialLog(vmi, Object.keys(vmi.status?.activePods ?? {})[0] ?? '');
  const line = new RegExp(`HPBENCH tag=${tag} write_ms=(\\d+)`);
  return suite.eventually(`the write round ${tag} on ${name}`, async () => {
    const m = line.exec(await readFile(log, 'utf8').catch(() => ''));
    return m === null ? undefined : Number(m[1]);
  }, 300_000);
}

const stats = (xs: readonly number[]): string => `median ${pct(xs, 50).toFixed(0).padStart(6)} ms  max ${(xs.at(-1) ?? NaN).toFixed(0).padStart(6)} ms`;
const mbps = (ms: number): string => `${((mib * WRITE_ROUNDS) / (ms / 1000)).toFixed(1).padStart(6)} MiB/s`;

async function main(): Promise<void> {
  const load = loadavg().map((l) => l.toFixed(1)).join(' ');
  const raw = await floor();
  const suite = await VmiSuite.start();
  try {
    const name = 'hp-bench';
    await suite.apply(
      { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'hp-bench', namespace: NS }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: `${CLAIM_MIB}Mi` } } } },
      guestVmi(suite.guest, name),
    );
    const running = await suite.waitForPhase(name, 'Running');
    await suite.waitForGuestReady(running);
    const phase = async (): Promise<string | undefined> => (await suite.vmi(name))?.status?.volumeStatus?.find((s) => s.name === 'hp-data')?.phase;
    const ctl = async (...args: string[]): Promise<void> => {
      const out = await suite.podvirtctl(...args, '-n', NS, '--volume-name=hp-data');
      if (out.code !== 0) throw new Error(`podvirtctl ${args.join(' ')}: ${out.stderr}`);
    };
    /** The operation's duration in ms. */
    const add = async (): Promise<number> => {
      const t0 = performance.now();
      await ctl('addvolume', 'vmi', name, '--claim=hp-bench', '--serial=HPHOT');
      await suite.eventually('hp-data Ready', async () => ((await phase()) === 'Ready' ? true : undefined), BOOT_TIMEOUT_MS);
      return performance.now() - t0;
    };
    const mounts = async (): Promise<boolean> => (await readFile('/proc/self/mountinfo', 'utf8')).includes('/hotplug-disks/hp-data.img');
    const remove = async (): Promise<number> => {
      const t0 = performance.now();
      await ctl('removevolume', 'vmi', name);
      await suite.eventually('hp-data gone', async () => ((await phase()) === undefined && !(await mounts()) ? true : undefined), BOOT_TIMEOUT_MS);
      return performance.now() - t0;
    };
    const added: number[] = [];
    const removed: number[] = [];
    // One untimed round first, as for the floor.
    for (let i = 0; i <= rounds; i++) {
      const a = await add();
      if (i === rounds) break;
      const r = await remove();
      if (i === 0) continue;
      added.push(a);
      removed.push(r);
    }
    added.sort((x, y) => x - y);
    removed.sort((x, y) => x - y);
    // The last add stays: the write rounds on the hotplugged disk (one untimed round first).
    const hotDev = await diskWithSerial(suite, name, 'HPHOT');
    await guestWriteMs(suite, running, hotDev, 'warm');
    const hot = await guestWriteMs(suite, running, hotDev, 'hot');
    await remove();
    await suite.custom.deleteNamespacedCustomObject({ ...VMI_API, name });
    await suite.waitForGone(name);
    await suite.waitForPodsGone(running);

    // The same claim attached at boot, on the same bus, in a guest of its own.
    const bootName = 'hp-bench-boot';
    const boot = guestVmi(suite.guest, bootName) as { spec: { domain: { devices: { disks: unknown[] } }; volumes: unknown[] } };
    boot.spec.domain.devices.disks.push({ name: 'hp-data', disk: { bus: 'scsi' }, serial: 'HPBOOT' });
    boot.spec.volumes.push({ name: 'hp-data', persistentVolumeClaim: { claimName: 'hp-bench' } });
    await suite.apply(boot as unknown as Record<string, unknown>);
    const booted = await suite.waitForPhase(bootName, 'Running');
    await suite.waitForGuestReady(booted);
    const bootDev = await diskWithSerial(suite, bootName, 'HPBOOT');
    await guestWriteMs(suite, booted, bootDev, 'warm');
    const cold = await guestWriteMs(suite, booted, bootDev, 'boot');
    await suite.custom.deleteNamespacedCustomObject({ ...VMI_API, name: bootName });
    await suite.waitForGone(bootName);

    const ratio = (xs: readonly number[], ys: readonly number[]): string => `${(pct(xs, 50) / pct(ys, 50)).toFixed(1)}x`;
    console.log(`volume hotplug, ${rounds} rounds after one untimed, load average ${load} at the start:`);
    console.log(`  raw attach-device (floor)           ${stats(raw.attach)}`);
    console.log(`  addvolume → Ready                   ${stats(added)}   (${ratio(added, raw.attach)} the floor)`);
    console.log(`  raw detach-device → released (floor) ${stats(raw.detach)}`);
    console.log(`  removevolume → gone                 ${stats(removed)}   (${ratio(removed, raw.detach)} the floor)`);
    console.log(`guest sequential write, ${WRITE_ROUNDS} × ${mib} MiB, O_DIRECT, fsync per round, on the same claim:`);
    console.log(`  attached at boot (scsi)   ${mbps(cold)}`);
    console.log(`  hotplugged (scsi)         ${mbps(hot)}   (${(hot / cold).toFixed(2)}x the boot disk's time)`);
    console.log(`load average at the end: ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  } finally {
    await suite.close();
  }
}

await main();
