// Shared setup of the libvirt integration tests: a private daemon in a temp dir, a connected
// client, and an event recorder. Every resource registers its cleanup as it is created.
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { LibvirtClient } from '@podvirt/libvirt';
import type { ConnectOptions, DomainEvent } from '@podvirt/libvirt';
import { eventually } from '@podvirt/test-support';
import { guestDomainXml, guestImage, startLibvirtDaemon } from '../testbed/index.js';
import type { DaemonSettings, TestLibvirtDaemon } from '../testbed/index.js';

export interface LibvirtFixture {
  readonly dir: string;
  readonly daemon: TestLibvirtDaemon;
  readonly client: LibvirtClient;
}

export async function libvirtFixture(
  t: TestContext,
  opts: { settings?: DaemonSettings; client?: Partial<ConnectOptions> } = {},
): Promise<LibvirtFixture> {
  const dir = await mkdtemp(join(tmpdir(), 'podvirt-libvirt-it-'));
  // One hook, in order: node:test runs a test's after hooks in the order they were added, and the
  // directory removed while the daemon still ran failed now and then (ENOTEMPTY: it wrote into it).
  const held: { daemon?: TestLibvirtDaemon; client?: LibvirtClient } = {};
  t.after(async () => {
    await held.client?.destroy();
    await held.daemon?.close();
    await rm(dir, { recursive: true, force: true });
  });
  const daemon = await startLibvirtDaemon({ stateDir: join(dir, 'daemon'), ...(opts.settings ? { settings: opts.settings } : {}) });
  held.daemon = daemon;
  const client = await LibvirtClient.connect({ socketPath: daemon.socketPath, timeoutMs: 30_000, ...opts.client });
  held.client = client;
  return { dir, daemon, client };
}

/** The test guest's domain XML, with its own copy of the data disk and console log. */
export async function guestXml(dir: string, name: string): Promise<{ xml: string; serialLog: string }> {
  const image = guestImage();
  const disk = join(dir, `${name}.ext4`);
  await copyFile(image.dataDisk, disk);
  const serialLog = join(dir, `${name}.serial.log`);
  const xml = guestDomainXml({ name, image, dataDisk: disk, serialSocket: join(dir, `${name}.serial`), serialLog });
  return { xml, serialLog };
}

/** Records every decoded event and lets a test wait for one. */
export class EventRecorder {
  readonly events: DomainEvent[] = [];
  readonly #client: LibvirtClient;
  readonly #listener = (e: DomainEvent): void => { this.events.push(e); };

  constructor(client: LibvirtClient) {
    this.#client = client;
    client.on('event', this.#listener);
  }

  waitFor(pred: (e: DomainEvent) => boolean, what: string, deadlineMs = 30_000): Promise<DomainEvent> {
    return eventually(() => this.events.find(pred), { what: `${what} event`, deadlineMs, stepMs: 20, detail: () => `saw ${this.describe().join(', ')}` });
  }

  /** LIFECYCLE events as EVENT/DETAIL, other kinds by name. */
  describe(filter: (e: DomainEvent) => boolean = () => true): string[] {
    return this.events.filter(filter).map((e) => {
      if (e.kind === 'LIFECYCLE') return `${e.event}/${e.detail}`;
      if (e.kind === 'AGENT_LIFECYCLE') return `AGENT/${e.state}`;
      return e.kind;
    });
  }

  stop(): void {
    this.#client.off('event', this.#listener);
  }
}
