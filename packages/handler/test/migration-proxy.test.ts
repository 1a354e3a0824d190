// The migration proxy over real sockets: unix sockets in two "pods" (directories with paths
// longer than a socket address holds, as under the kubelet's pods dir), real mutual TLS with a
// CA made by openssl for the test. A peer with a certificate from another CA gets nothing
// through; close() ends piped connections and removes the sockets it made; a destination that
// stops reading stops the sender instead of the proxy buffering the stream.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as connectTls } from 'node:tls';
import { test, type TestContext } from 'node:test';
import { pino, type Logger } from 'pino';
import { eventually, makeMigrationCertificates } from '@podvirt/test-support';
import { connectGuestSocket } from '../src/guest-stream/guest-socket.js';
import { listenSource, listenTarget, loadMigrationTls, type MigrationTls } from '../src/migration-proxy/migration-proxy.js';
import { listenUnix } from '../src/migration-proxy/unix-listener.js';

interface Pki {
  readonly a: MigrationTls;
  readonly b: MigrationTls;
  readonly foreign: MigrationTls;
}

async function pki(t: TestContext): Promise<{ dir: string; certs: Pki }> {
  const dir = await mkdtemp(join(tmpdir(), 'pvh-migproxy-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const ours = await makeMigrationCertificates(join(dir, 'pki'), ['node-a', 'node-b']);
  const theirs = await makeMigrationCertificates(join(dir, 'foreign'), ['node-a'], { caName: 'someone else' });
  return {
    dir,
    certs: { a: await loadMigrationTls(ours.get('node-a') ?? ''), b: await loadMigrationTls(ours.get('node-b') ?? ''), foreign: await loadMigrationTls(theirs.get('node-a') ?? '') },
  };
}

/** A directory whose socket paths pass the 108 bytes of a socket address. */
async function podDir(root: string, name: string): Promise<string> {
  const dir = join(root, name, 'volumes', 'kubernetes.io~empty-dir', 'x'.repeat(60), 'public', 'migrationproxy');
  await mkdir(dir, { recursive: true });
  return dir;
}

interface Captured {
  readonly log: Logger;
  readonly lines: Array<{ msg: string; [k: string]: unknown }>;
}

function capture(): Captured {
  const lines: Captured['lines'] = [];
  const log = pino({ level: 'debug' }, { write: (s: string) => void lines.push(JSON.parse(s) as Captured['lines'][number]) });
  return { log, lines };
}

/** A pod-side unix server: answers each connection with its name, then echoes. */
async function podServer(t: TestContext, path: string, name: string): Promise<{ server: Server; accepted: Socket[] }> {
  const accepted: Socket[] = [];
  const server = createServer((s) => {
    accepted.push(s);
    s.on('error', () => undefined);
    s.write(`${name}:`);
    s.pipe(s);
  });
  await listenUnix(server, path);
  t.after(() => {
    for (const s of accepted) s.destroy();
    server.close();
  });
  return { server, accepted };
}

/** Dials like qemu in the pod would, through the handler's dialler for long paths. */
function dial(path: string): Promise<Socket> {
  return connectGuestSocket(path, new AbortController().signal);
}

function readUntil(s: Socket, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let got = '';
    const onData = (b: Buffer): void => {
      got += b.toString();
      if (got.includes(text)) {
        s.off('data', onData);
        resolve(got);
      }
    };
    s.on('data', onData);
    s.once('error', reject);
    s.once('close', () => reject(new Error(`closed after ${JSON.stringify(got)}`)));
  });
}

async function proxies(t: TestContext, tls: { source: MigrationTls; target: MigrationTls }, root: string) {
  const sourcePod = await podDir(root, 'pod-src');
  const targetPod = await podDir(root, 'pod-dst');
  const memoryTarget = await podServer(t, join(targetPod, 'uid-49152-source.sock'), 'memory');
  const disksTarget = await podServer(t, join(targetPod, 'uid-49153-source.sock'), 'disks');
  const targetLog = capture();
  const target = await listenTarget({
    address: '127.0.0.1', tls: tls.target, log: targetLog.log,
    streams: new Map([[49152, join(targetPod, 'uid-49152-source.sock')], [49153, join(targetPod, 'uid-49153-source.sock')]]),
  });
  t.after(() => target.close());
  const portOf = (stream: number): number => [...target.ports].find(([, s]) => s === stream)?.[0] ?? 0;
  const sourceLog = capture();
  const memorySource = join(sourcePod, 'uid-49152-source.sock');
  const disksSource = join(sourcePod, 'uid-49153-source.sock');
  const source = await listenSource({
    address: '127.0.0.1', tls: tls.source, log: sourceLog.log,
    streams: new Map([[memorySource, portOf(49152)], [disksSource, portOf(49153)]]),
  });
  t.after(() => source.close());
  return { target, source, targetLog, sourceLog, memorySource, disksSource, memoryTarget, disksTarget, portOf };
}

test('each source unix socket reaches its own stream in the target pod over mutual TLS', async (t) => {
  const { dir, certs } = await pki(t);
  const p = await proxies(t, { source: certs.a, target: certs.b }, dir);
  assert.equal(p.target.ports.size, 2);
  assert.ok(p.memorySource.length > 108, 'the socket path is longer than a socket address');
  const memory = await dial(p.memorySource);
  t.after(() => memory.destroy());
  const disks = await dial(p.disksSource);
  t.after(() => disks.destroy());
  memory.write('hello');
  disks.write('nbd');
  assert.equal(await readUntil(memory, 'hello'), 'memory:hello');
  assert.equal(await readUntil(disks, 'nbd'), 'disks:nbd');
});

test('a peer whose certificate comes from another CA gets nothing through, on either side', async (t) => {
  const { dir, certs } = await pki(t);
  // The source holds a foreign certificate: the target refuses the handshake.
  const p = await proxies(t, { source: certs.foreign, target: certs.b }, dir);
  const s = await dial(p.memorySource);
  await new Promise((resolve) => s.once('close', resolve));
  assert.equal(p.memoryTarget.accepted.length, 0, 'nothing reached the target pod');
  await eventually(() => p.targetLog.lines.some((l) => l.msg === 'migration peer refused: TLS handshake failed'), { what: 'the target logs the refusal' });
  // The target holds a foreign certificate: the source refuses to send to it.
  const dir2 = join(dir, 'second');
  const q = await proxies(t, { source: certs.a, target: certs.foreign }, dir2);
  const s2 = await dial(q.memorySource);
  await new Promise((resolve) => s2.once('close', resolve));
  assert.equal(q.memoryTarget.accepted.length, 0);
  await eventually(() => q.sourceLog.lines.some((l) => l.msg === 'migration stream refused: cannot reach the target over TLS'), { what: 'the source logs the refusal' });
  // A TLS client with no certificate at all (the CA trusted) is refused too.
  const bare = connectTls({ host: '127.0.0.1', port: p.portOf(49152), ca: certs.a.ca, checkServerIdentity: () => undefined });
  bare.on('error', () => undefined);
  await new Promise((resolve) => bare.once('close', resolve));
  assert.equal(p.memoryTarget.accepted.length, 0);
});

test('close() ends the piped connections and removes the unix sockets it made', async (t) => {
  const { dir, certs } = await pki(t);
  const p = await proxies(t, { source: certs.a, target: certs.b }, dir);
  const memory = await dial(p.memorySource);
  memory.write('x');
  await readUntil(memory, 'x');
  const ended = new Promise((resolve) => memory.once('close', resolve));
  const podSide = p.memoryTarget.accepted[0];
  assert.ok(podSide !== undefined);
  const podEnded = new Promise((resolve) => podSide.once('close', resolve));
  await p.source.close();
  await ended;
  await podEnded; // the target pipes the end on to the pod
  assert.equal(existsSync(p.memorySource), false);
  assert.equal(existsSync(p.disksSource), false);
  await p.source.close(); // idempotent
  // The target's close ends a connection it pipes and stops listening.
  const again = await listenSource({ address: '127.0.0.1', tls: certs.a, log: capture().log, streams: new Map([[p.memorySource, p.portOf(49152)]]) });
  t.after(() => again.close());
  const m2 = await dial(p.memorySource);
  m2.write('y');
  await readUntil(m2, 'y');
  const m2Ended = new Promise((resolve) => m2.once('close', resolve));
  await p.target.close();
  await m2Ended;
  const m3 = await dial(p.memorySource);
  await new Promise((resolve) => m3.once('close', resolve));
  assert.equal(p.memoryTarget.accepted.length, 2, 'no connection after the target closed');
});

test('a pod side that stops reading stops the sender: the proxy pipes, it does not buffer the stream', async (t) => {
  const { dir, certs } = await pki(t);
  const sourcePod = await podDir(dir, 'pod-src');
  const targetPod = await podDir(dir, 'pod-dst');
  const sink: Socket[] = [];
  const hash = createHash('sha256');
  let received = 0;
  const server = createServer((s) => {
    sink.push(s);
    s.pause();
    s.on('data', (b: Buffer) => {
      hash.update(b);
      received += b.length;
    });
    s.pause();
  });
  await listenUnix(server, join(targetPod, 'mem.sock'));
  t.after(() => server.close());
  const target = await listenTarget({ address: '127.0.0.1', tls: certs.b, log: capture().log, streams: new Map([[49152, join(targetPod, 'mem.sock')]]) });
  t.after(() => target.close());
  const [port] = [...target.ports.keys()];
  const source = await listenSource({ address: '127.0.0.1', tls: certs.a, log: capture().log, streams: new Map([[join(sourcePod, 'mem.sock'), port ?? 0]]) });
  t.after(() => source.close());
  const total = 256 * 1024 * 1024;
  const chunk = Buffer.alloc(256 * 1024);
  const sent = createHash('sha256');
  const writer = await dial(join(sourcePod, 'mem.sock'));
  t.after(() => writer.destroy());
  let written = 0;
  let waiting = false;
  const pump = (): void => {
    while (written < total) {
      chunk.fill(written / chunk.length);
      sent.update(chunk);
      written += chunk.length;
      if (!writer.write(chunk)) {
        waiting = true;
        writer.once('drain', () => {
          waiting = false;
          pump();
        });
        return;
      }
    }
    writer.end();
  };
  pump();
  // The sender comes to a stop waiting for 'drain' long before the whole stream is out.
  let last = -1;
  await eventually(() => {
    if (written >= total) return true; // everything went out: the assertion below says so
    const stuck = waiting && written === last;
    last = written;
    return stuck;
  }, { what: 'the sender blocked by backpressure', stepMs: 200, deadlineMs: 60_000 });
  assert.ok(written < total / 2, `the sender wrote ${written} bytes while nobody read`);
  assert.equal(received, 0);
  // Reading again lets everything through, in order.
  sink[0]?.resume();
  await eventually(() => received === total, { what: 'the whole stream received', deadlineMs: 120_000 });
  assert.equal(hash.digest('hex'), sent.digest('hex'));
});

test('close() does not wait for a peer stalled before its TLS handshake', { timeout: 60_000 }, async (t) => {
  const { dir, certs } = await pki(t);
  const p = await proxies(t, { source: certs.a, target: certs.b }, dir);
  const stalled = connect({ host: '127.0.0.1', port: p.portOf(49152) });
  stalled.on('error', () => undefined);
  await new Promise((resolve) => stalled.once('connect', resolve));
  const gone = new Promise((resolve) => stalled.once('close', resolve));
  await p.target.close();
  await gone;
});
