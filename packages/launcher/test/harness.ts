// Wires the cmd server, domain manager and agent ops over the fake libvirt on a real unix
// socket in a temp dir, plus a promise-based client; everything is closed by `t.after`.
import { MigrationSource } from '../src/migration/migration-source.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import type { VirtualMachineInstance } from '@podvirt/api';
import { cmd, promiseClient, type PromiseMethods } from '@podvirt/proto';
import { pino } from 'pino';
import { convertVmi } from '../src/convert/convert-vmi.js';
import type { PrepareStep } from '../src/convert/prepare-step.js';
import { DomainManager, type DomainManagerOptions } from '../src/domain/domain-manager.js';
import { GuestAgentOps } from '../src/domain/guest-agent-ops.js';
import { ReconnectingConnection } from '../src/domain/reconnecting-connection.js';
import { WatchHub } from '../src/domain/watch-hub.js';
import { CmdServer } from '../src/server/cmd-server.js';
import { FakeDomainConnection } from './fake-domain-connection.js';
import { context, rawVmi } from './vmi-fixture.js';

export interface Harness {
  readonly fakes: FakeDomainConnection[];
  readonly fake: () => FakeDomainConnection;
  readonly manager: DomainManager;
  readonly hub: WatchHub;
  readonly server: CmdServer;
  readonly client: cmd.CmdClient;
  /** The Cmd service's unary calls through @podvirt/proto's promise client, 5 s deadline by default. */
  readonly cmd: PromiseMethods<typeof cmd.CmdService>;
  readonly prepared: PrepareStep[];
  /** How many times the manager converted a VMI. */
  readonly conversions: () => number;
  /** The VMI as the handler sends it. */
  readonly vmi: VirtualMachineInstance;
  readonly dir: string;
}

export async function harness(t: TestContext, opts: { gracePeriodMs?: number; clockWait?: DomainManagerOptions['clockWait'] } = {}): Promise<Harness> {
  const dir = await mkdtemp(join(tmpdir(), 'podvirt-launcher-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const log = pino({ level: 'silent' });
  const fakes: FakeDomainConnection[] = [];
  let state: Pick<FakeDomainConnection, 'xml' | 'name' | 'status'> | undefined;
  // Each (re)connect gets a new fake that sees the same domain, as a restarted daemon would.
  const conn = new ReconnectingConnection({
    connect: () => {
      const f = new FakeDomainConnection();
      if (state) Object.assign(f, { xml: state.xml, name: state.name, status: state.status });
      fakes.push(f);
      state = f;
      return Promise.resolve(f);
    },
    retryDelayMs: 10,
  });
  const hub = new WatchHub();
  const identity = { namespace: 'mynamespace', name: 'testvmi', uid: 'test-uid', domain: 'mynamespace_testvmi' };
  const prepared: PrepareStep[] = [];
  let conversions = 0;
  const manager = new DomainManager({
    conn, identity, hub, log,
    convert: (vmi) => {
      conversions++;
      return Promise.resolve(convertVmi(vmi, context()));
    },
    prepare: (steps) => { prepared.push(...steps); return Promise.resolve(); },
    gracePeriodMs: opts.gracePeriodMs ?? 30_000,
    shutdownResendMs: 100,
    ...(opts.clockWait === undefined ? {} : { clockWait: opts.clockWait }),
  });
  await manager.tracker.start();
  const agent = new GuestAgentOps({ conn, tracker: manager.tracker, domain: identity.domain, log });
  // No daemon behind this socket: a Migrate call fails to connect (the migration e2e runs the real one).
  const migration = new MigrationSource({ socketPath: join(dir, 'no-daemon.sock'), domain: identity.domain, log, publish: () => undefined });
  const server = await CmdServer.listen({
    socketDir: join(dir, 'sockets'), manager, agent, hub, migration, log,
    versions: () => Promise.resolve({ launcher: 'test', libvirt: '9.0.0', qemu: '7.2.0' }),
  });
  await server.markReady();
  const client = new cmd.CmdClient(`unix:${server.socketPath}`, grpc.credentials.createInsecure());
  t.after(async () => {
    client.close();
    await server.close();
    agent.close();
    await manager.close();
    await conn.close();
    for (const f of fakes) f.assertClean();
  });
  const fake = (): FakeDomainConnection => {
    const f = fakes.at(-1);
    if (f === undefined) throw new Error('no connection yet');
    return f;
  };
  return { fakes, fake, manager, hub, server, client, cmd: promiseClient(cmd.CmdService, client, { timeoutMs: 5_000 }), prepared, conversions: () => conversions, vmi: rawVmi({}, { devices: { autoattachGraphicsDevice: false } }), dir };
}

export function vmiRequest(vmi: unknown): cmd.VmiRequest {
  return { vmiJson: Buffer.from(JSON.stringify(vmi)) };
}

/** Collects WatchDomain events until `until` returns true for the list so far. */
export async function watchUntil(
  client: cmd.CmdClient,
  until: (events: cmd.WatchDomainEvent[]) => boolean,
  timeoutMs = 5_000,
): Promise<cmd.WatchDomainEvent[]> {
  const stream = client.watchDomain({});
  const events: cmd.WatchDomainEvent[] = [];
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { stream.cancel(); reject(new Error(`watch timed out: ${JSON.stringify(events.map(describe))}`)); }, timeoutMs);
    stream.on('data', (ev: cmd.WatchDomainEvent) => {
      events.push(ev);
      if (until(events)) { clearTimeout(timer); stream.cancel(); resolve(events); }
    });
    stream.on('error', (err: grpc.ServiceError) => { if (err.code !== grpc.status.CANCELLED) { clearTimeout(timer); reject(err); } });
  });
}

export function describe(ev: cmd.WatchDomainEvent): string {
  switch (ev.event?.$case) {
    case 'domain': return `${ev.event.value.state}/${ev.event.value.reason}`;
    case 'notice': return `notice:${ev.event.value.reason}`;
    case 'noDomain': return 'none';
    default: return '?';
  }
}
