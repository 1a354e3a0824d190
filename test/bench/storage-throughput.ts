// Persistent storage costs on the testbed, each against a floor measured in the same run:
//  - guest sequential write (O_DIRECT + fsync) and read (O_DIRECT) throughput on a filesystem
//    PVC (disk.img on the claim's directory) vs a containerDisk's qcow2 overlay, with the same
//    bytes written and read on the host directly (dd with the same flags into a file in the same
//    filesystem as the PVC) as the floor;
//  - start latency (create → Running, create → guest ready marker) of a VMI with a PVC vs one
//    without.
// The guest's podvirt.diskbench switch does the I/O and prints its times. Prints; asserts nothing.
//
//   node test/dist/bench/storage-throughput.js [MiB per round] [rounds]   (default 12 MiB × 4)
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { VirtualMachineInstance } from '@podvirt/api';
import { BOOT_TIMEOUT_MS, guestVmi, NS, VmiSuite } from '../e2e/vmi-stack.js';

const run = promisify(execFile);
// The containerDisk behind the overlay is the 16 MiB test disk: a round must fit in it.
const mib = Number(process.argv[2] ?? '12');
const rounds = Number(process.argv[3] ?? '4');

interface GuestBench {
  readonly writeMs: number;
  readonly readMs: number;
}

function benchVmi(suite: VmiSuite, name: string, source: Record<string, unknown>): Record<string, unknown> {
  const vmi = guestVmi(suite.guest, name, { extraKernelArgs: `podvirt.diskbench=vdb:${mib}:${rounds}` });
  const spec = vmi['spec'] as { domain: { devices: { disks: unknown[] } }; volumes: unknown[] };
  spec.domain.devices.disks.push({ name: 'bench', disk: { bus: 'virtio' } });
  spec.volumes.push({ name: 'bench', ...source });
  return vmi;
}

async function consoleMatch(suite: VmiSuite, vmi: VirtualMachineInstance, pattern: RegExp): Promise<RegExpExecArray> {
  const log = suite.serialLog(vmi, Object.keys(vmi.status?.activePods ?? {})[0] ?? '');
  return suite.eventually(`${String(pattern)} on ${vmi.metadata.name ?? ''}`, async () => {
    const lines = (await readFile(log, 'utf8').catch(() => '')).split('\n').slice(0, -1);
    for (const line of lines) {
      const m = pattern.exec(line.replace(/\r$/, ''));
      if (m !== null) return m;
    }
    return undefined;
  }, 300_000);
}

async function measure(suite: VmiSuite, name: string, source: Record<string, unknown>): Promise<GuestBench & { runningMs: number; readyMs: number }> {
  const t0 = Date.now();
  await suite.apply(benchVmi(suite, name, source));
  const running = await suite.waitForPhase(name, 'Running', BOOT_TIMEOUT_MS);
  const runningMs = Date.now() - t0;
  await consoleMatch(suite, running, /PODVIRT-GUEST-READY/);
  const readyMs = Date.now() - t0;
  const m = await consoleMatch(suite, running, /PODVIRT-GUEST-DISKBENCH .* write_ms=(\d+) read_ms=(\d+)/);
  await suite.custom.deleteNamespacedCustomObject({ group: 'kubevirt.io', version: 'v1', namespace: NS, plural: 'virtualmachineinstances', name });
  await suite.waitForGone(name);
  return { writeMs: Number(m[1]), readMs: Number(m[2]), runningMs, readyMs };
}

/** The same bytes, the same flags, on the host, into a file next to the PVC's disk.img. */
async function hostFloor(dir: string): Promise<GuestBench> {
  const file = join(dir, 'host-floor.img');
  const t0 = performance.now();
  for (let i = 0; i < rounds; i++) await run('dd', ['if=/dev/zero', `of=${file}`, 'bs=1M', `count=${mib}`, 'oflag=direct', 'conv=fsync,notrunc', 'status=none']);
  const t1 = performance.now();
  for (let i = 0; i < rounds; i++) await run('dd', [`if=${file}`, 'of=/dev/null', 'bs=1M', `count=${mib}`, 'iflag=direct', 'status=none']);
  const t2 = performance.now();
  await rm(file, { force: true });
  return { writeMs: t1 - t0, readMs: t2 - t1 };
}

const mbps = (ms: number): string => `${((mib * rounds) / (ms / 1000)).toFixed(1).padStart(7)} MiB/s`;

async function main(): Promise<void> {
  const suite = await VmiSuite.start();
  const scratch = await mkdtemp(join(suite.stack.testbed.kubeletRoot, 'bench-'));
  try {
    await suite.apply(
      { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: 'local' }, provisioner: 'podvirt.io/testbed-local', reclaimPolicy: 'Delete' },
      { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'bench', namespace: NS },
        spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'local', resources: { requests: { storage: '64Mi' } } } },
    );
    // One boot before measuring, so that neither case pays for a cold page cache of the guest files.
    await measure(suite, 'bench-warm', { containerDisk: { image: 'podvirt/test-guest:latest' } });
    const overlay = await measure(suite, 'bench-overlay', { containerDisk: { image: 'podvirt/test-guest:latest' } });
    const pvc = await measure(suite, 'bench-pvc', { persistentVolumeClaim: { claimName: 'bench' } });
    const claim = await suite.core.readNamespacedPersistentVolumeClaim({ namespace: NS, name: 'bench' });
    const pvDir = (await suite.core.readPersistentVolume({ name: claim.spec?.volumeName ?? '' })).spec?.hostPath?.path ?? scratch;
    const host = await hostFloor(pvDir);
    console.log(`sequential I/O, ${rounds} × ${mib} MiB, O_DIRECT (write + fsync per round):`);
    console.log(`  host file (floor)   write ${mbps(host.writeMs)}   read ${mbps(host.readMs)}`);
    console.log(`  guest, PVC          write ${mbps(pvc.writeMs)}   read ${mbps(pvc.readMs)}   (host/guest: write ${(pvc.writeMs / host.writeMs).toFixed(1)}x, read ${(pvc.readMs / host.readMs).toFixed(1)}x slower)`);
    console.log(`  guest, overlay      write ${mbps(overlay.writeMs)}   read ${mbps(overlay.readMs)}   (PVC vs overlay: write ${(overlay.writeMs / pvc.writeMs).toFixed(2)}x, read ${(overlay.readMs / pvc.readMs).toFixed(2)}x the PVC's time)`);
    console.log('start latency (create → Running / → guest ready):');
    console.log(`  without PVC  ${overlay.runningMs} ms / ${overlay.readyMs} ms`);
    console.log(`  with PVC     ${pvc.runningMs} ms / ${pvc.readyMs} ms   (ratio ${(pvc.runningMs / overlay.runningMs).toFixed(2)} / ${(pvc.readyMs / overlay.readyMs).toFixed(2)})`);
  } finally {
    await rm(scratch, { recursive: true, force: true });
    await suite.close();
  }
}

await main();
