// `scripts/demo --libvirt-only`: the guest without Kubernetes, for looking at libvirt alone. A
// private libvirt daemon in its own mount namespace, the guest image defined and started under
// TCG through @podvirt/libvirt, its serial console streamed, the guest agent asked who it is,
// an ACPI power-off, and a teardown that leaves nothing behind.
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ShutdownFlags, LibvirtClient, isAgentUnresponsive } from '@podvirt/libvirt';
import type { DomainEvent, DomainRef } from '@podvirt/libvirt';
import { eventually } from '@podvirt/test-support';
import { guestDomainXml } from '../guest/guest-domain-xml.js';
import { guestImage } from '../guest/guest-image.js';
import { waitForConsoleText } from '../guest/wait-for-console-text.js';
import { startLibvirtDaemon } from '../libvirt-daemon/start-libvirt-daemon.js';
import { followFile } from './follow-file.js';

export interface DemoOutput {
  step(message: string): void;
  detail(message: string): void;
}

const DOMAIN = 'default_demo';
const EVENTS = ['LIFECYCLE', 'AGENT_LIFECYCLE'] as const;

export async function bootGuestDemo(out: DemoOutput, signal?: AbortSignal): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'podvirt-demo-'));
  const cleanups: (() => Promise<unknown>)[] = [() => rm(dir, { recursive: true, force: true })];
  try {
    const image = guestImage();
    out.step(`guest image: kernel ${image.kernel}`);

    const started = Date.now();
    const daemon = await startLibvirtDaemon({ stateDir: join(dir, 'daemon'), ...(signal ? { signal } : {}) });
    cleanups.unshift(() => daemon.close());
    out.step(`libvirt daemon up in its own mount namespace (pid ${daemon.pid}) in ${Date.now() - started} ms`);

    const client = await LibvirtClient.connect({ socketPath: daemon.socketPath, timeoutMs: 30_000 });
    cleanups.unshift(() => client.close());
    client.on('event', (e: DomainEvent) => out.detail(`event ${describeEvent(e)}`));
    for (const id of EVENTS) await client.registerDomainEvent(id);
    out.step(`connected to libvirt ${formatVersion(await client.getLibVersion())} over ${daemon.socketPath}`);

    const disk = join(dir, 'data.ext4');
    await copyFile(image.dataDisk, disk);
    const serialLog = join(dir, 'virt-serial0-log');
    const xml = guestDomainXml({ name: DOMAIN, image, dataDisk: disk, serialSocket: join(dir, 'virt-serial0'), serialLog });
    const dom = await client.domainDefineXml(xml);
    const boot = Date.now();
    await client.domainCreate(dom);
    out.step(`domain ${DOMAIN} defined and started (domain type qemu: TCG)`);

    const console = followFile(serialLog, (line) => out.detail(`console | ${line}`));
    cleanups.unshift(async () => console.close());
    await waitForConsoleText(serialLog, image.readyMarker, { timeoutMs: 90_000, ...(signal ? { signal } : {}) });
    out.step(`guest ready ${Date.now() - boot} ms after start`);

    const state = await client.domainGetState(dom);
    out.step(`state: ${state.state} (${state.reason})`);
    await showAgent(client, dom, out);

    const shutdownAt = Date.now();
    await client.domainShutdown(dom, { flags: ShutdownFlags.ACPI_POWER_BTN });
    await waitForShutoff(client, dom, 60_000);
    out.step(`ACPI power button → guest powered off in ${Date.now() - shutdownAt} ms`);
    await client.domainUndefine(dom);
    out.step('domain undefined');
  } finally {
    for (const cleanup of cleanups) await cleanup();
    out.step('daemon stopped, state removed: nothing left behind');
  }
}

async function showAgent(client: LibvirtClient, dom: DomainRef, out: DemoOutput): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      const reply = await client.domainAgentCommand(dom, '{"execute":"guest-get-osinfo"}', { timeoutSeconds: 5 });
      const info = (JSON.parse(reply ?? '{}') as { return?: { 'pretty-name'?: string; 'kernel-release'?: string } }).return;
      out.step(`guest agent: ${info?.['pretty-name'] ?? '?'}, kernel ${info?.['kernel-release'] ?? '?'}`);
      return;
    } catch (err) {
      if (!isAgentUnresponsive(err) || attempt >= 40) throw err;
      await sleep(250);
    }
  }
}

async function waitForShutoff(client: LibvirtClient, dom: DomainRef, deadlineMs: number): Promise<void> {
  await eventually(async () => (await client.domainGetState(dom)).state === 'SHUTOFF', { what: 'the guest powered off', deadlineMs, stepMs: 100 });
}

function describeEvent(e: DomainEvent): string {
  if (e.kind === 'LIFECYCLE') return `${e.event}/${e.detail}`;
  if (e.kind === 'AGENT_LIFECYCLE') return `agent ${e.state}`;
  return e.kind;
}

function formatVersion(v: number): string {
  return `${Math.floor(v / 1_000_000)}.${Math.floor(v / 1000) % 1000}.${v % 1000}`;
}
