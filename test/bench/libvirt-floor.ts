// The floors podvirt's start-up and operation latencies are measured against, in the same run:
// the launcher's own domain XML for the test guest defined and started straight through
// @podvirt/libvirt on one daemon, and suspend+resume of a booted guest the same way.
import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { decodeVmi } from '@podvirt/api';
import { convertVmi } from '@podvirt/launcher';
import { LibvirtClient, type DomainRef } from '@podvirt/libvirt';
import { guestVmi } from '../e2e/vmi-stack.js';
import { guestXml } from '../integration/libvirt-fixture.js';
import { closeOnSignal, guestImage, startLibvirtDaemon, waitForConsoleText, type GuestImage, type TestLibvirtDaemon } from '../testbed/index.js';
import { sample } from './latency-sample.js';

const run = promisify(execFile);
const RUNNING_TIMEOUT_MS = 600_000;

/**
 * A libvirt daemon of a floor's own, in a temp dir, with a client: the domains pushed to
 * `domains` are destroyed and undefined at close (also on a stop signal, and when the start
 * fails halfway), then the daemon stops and the dir goes.
 */
interface FloorDaemon {
  readonly dir: string;
  readonly socketPath: string;
  readonly client: LibvirtClient;
  readonly domains: DomainRef[];
  close(): Promise<void>;
}

async function floorDaemon(prefix: string): Promise<FloorDaemon> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  const domains: DomainRef[] = [];
  let daemon: TestLibvirtDaemon | undefined;
  let client: LibvirtClient | undefined;
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => (closing ??= (async () => {
    forget();
    for (const dom of domains) {
      await client?.domainDestroy(dom).catch(() => undefined);
      await client?.domainUndefine(dom).catch(() => undefined);
    }
    await client?.close();
    await daemon?.close();
    await rm(dir, { recursive: true, force: true });
  })());
  const forget = closeOnSignal(close);
  try {
    daemon = await startLibvirtDaemon({ stateDir: join(dir, 'daemon') });
    client = await LibvirtClient.connect({ socketPath: daemon.socketPath });
    return { dir, socketPath: daemon.socketPath, client, domains, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/**
 * The launcher's domain XML for the test guest (the converter's output, with the prepare step of
 * a containerDisk: a qcow2 overlay over its own copy of the image), in `dir`/vm-`i`.
 */
async function launcherDomain(guest: GuestImage, dir: string, i: number): Promise<{ xml: string; serialLog: string }> {
  const uid = `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
  const vmi = guestVmi(guest, `floor-${i}`) as { metadata: Record<string, unknown> };
  vmi.metadata['uid'] = uid;
  const vmDir = join(dir, `vm-${i}`);
  await mkdir(join(vmDir, 'private', uid), { recursive: true });
  const disk = join(vmDir, 'disk.img');
  await copyFile(guest.dataDisk, disk);
  const converted = convertVmi(decodeVmi(vmi), {
    domainType: 'qemu',
    privateDir: join(vmDir, 'private'),
    ephemeralDiskDir: join(vmDir, 'ephemeral'),
    libvirtRunDir: join(vmDir, 'run'),
    containerDisks: new Map([['data', { path: disk, format: 'raw' as const }]]),
    kernelBoot: { kernel: guest.kernel, initrd: guest.initrd },
    persistentDisks: new Map(),
    emulator: '/usr/bin/qemu-system-x86_64',
  });
  for (const step of converted.prepare) {
    if (step.kind !== 'overlay') continue;
    await mkdir(join(step.path, '..'), { recursive: true });
    await run('qemu-img', ['create', '-q', '-f', 'qcow2', '-F', step.backingFormat, '-b', step.backingFile, step.path]);
  }
  return { xml: converted.xml, serialLog: join(vmDir, 'private', uid, 'virt-serial0-log') };
}

/** The floor: N copies of the launcher's domain XML for the guest, defined and started at once on one daemon. */
export async function floor(guest: GuestImage, count: number): Promise<{ running: number[]; ready: number[] }> {
  const { dir, client, domains, close } = await floorDaemon('podvirt-floor-');
  try {
    const prepared = await Promise.all(Array.from({ length: count }, (_, i) => launcherDomain(guest, dir, i)));
    const t0 = Date.now();
    const results = await Promise.all(prepared.map(async ({ xml, serialLog }) => {
      const dom = await client.domainCreate(await client.domainDefineXml(xml));
      domains.push(dom);
      const running = Date.now() - t0;
      await waitForConsoleText(serialLog, guest.readyMarker, { timeoutMs: RUNNING_TIMEOUT_MS });
      return { running, ready: Date.now() - t0 };
    }));
    return { running: results.map((r) => r.running), ready: results.map((r) => r.ready) };
  } finally {
    await close();
  }
}

/**
 * Two booted test guests on a libvirt daemon of their own, for the suspend+resume floor: the
 * launcher's own domain XML (`domain`: the same devices and disks, a qcow2 overlay whose flush
 * qemu's stop waits for) and the testbed's plain one (`plainDomain`: a raw disk with cache none).
 */
export interface RawGuest {
  readonly socketPath: string;
  readonly domain: string;
  readonly plainDomain: string;
  /** This process's connection to the daemon, and the launcher-XML guest's domain on it. */
  readonly client: LibvirtClient;
  readonly dom: DomainRef;
  /** Destroys the domains, stops the daemon, removes its files. */
  close(): Promise<void>;
}

/** Starts a daemon and boots both guests on it; resolves once both are ready. */
export async function bootRawGuest(): Promise<RawGuest> {
  const { dir, socketPath, client, domains, close } = await floorDaemon('pvb-raw-');
  const plainDomain = 'pause-bench';
  try {
    const plain = await guestXml(dir, plainDomain);
    const own = await launcherDomain(guestImage(), dir, 0);
    const booted = await Promise.all([plain, own].map(async ({ xml, serialLog }) => {
      const dom = await client.domainCreate(await client.domainDefineXml(xml));
      domains.push(dom);
      await waitForConsoleText(serialLog, guestImage().readyMarker, { timeoutMs: 120_000 });
      return dom;
    }));
    const dom = booted[1] as DomainRef;
    return { socketPath, domain: dom.name, plainDomain, client, dom, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/** suspend+resume straight through @podvirt/libvirt on a daemon of its own: the floor. */
export async function rawSuspendResume(iterations: number): Promise<number[]> {
  const { client, dom, close } = await bootRawGuest();
  try {
    return await sample(iterations, async () => {
      await client.domainSuspend(dom);
      await client.domainResume(dom);
    });
  } finally {
    await close();
  }
}
