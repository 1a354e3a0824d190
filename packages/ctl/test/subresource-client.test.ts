// The VMI commands through the API server (KubeVirt's subresource paths) against an HTTP server
// of the test's own standing in for it: which way a command goes (a kubeconfig found: the API
// server; --node, --socket or --server: the node), the paths, methods and bodies, KubeVirt's
// guest-agent JSON read back into the same output, and a refusal printed as the API server gave it.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
import { after, before, beforeEach, describe, test } from 'node:test';
import { KubeClient, loadKubeConfig } from '@podvirt/kube-runtime';
import { eventually } from '@podvirt/test-support';
import { runCli } from '../src/cli.js';
import { NodeApiError } from '../src/node-api-error.js';
import { openApiGuestStream } from '../src/stream/api-guest-stream.js';

interface Seen {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

const BASE = '/apis/subresources.kubevirt.io/v1/namespaces';

describe('podvirtctl through the API server', () => {
  let server: Server;
  let dir: string;
  let kubeconfig: string;
  const seen: Seen[] = [];
  const answers = new Map<string, { status: number; body: unknown }>();
  const upgrades: Array<{ url: string; headers: IncomingHttpHeaders; socket: Duplex }> = [];
  const clientFrames = new Map<Duplex, Array<{ opcode: number; payload: Buffer }>>();
  /** Upgraded sockets still open: a test that fails midway leaves none behind. */
  const sockets = new Set<Duplex>();

  before(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
        const answer = answers.get(req.url ?? '') ?? { status: 200, body: undefined };
        const text = answer.body === undefined ? '' : JSON.stringify(answer.body);
        res.writeHead(answer.status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
        res.end(text);
      });
    });
    server.on('upgrade', (req, socket: Duplex) => {
      upgrades.push({ url: req.url ?? '', headers: req.headers, socket });
      sockets.add(socket);
      socket.on('end', () => socket.end());
      socket.on('close', () => sockets.delete(socket));
      const refusal = answers.get(req.url ?? '');
      if (refusal !== undefined) {
        const text = JSON.stringify(refusal.body);
        socket.end(`HTTP/1.1 ${refusal.status} Refused\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(text)}\r\n\r\n${text}`);
        return;
      }
      socket.write('HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: Upgrade\r\nsec-websocket-protocol: plain.kubevirt.io\r\n\r\n');
      // What the client sends, unmasked, one frame per entry.
      let buf = Buffer.alloc(0);
      const received: Array<{ opcode: number; payload: Buffer }> = [];
      clientFrames.set(socket, received);
      socket.on('data', (chunk: Buffer) => {
        buf = Buffer.concat([buf, chunk]);
        while (buf.length >= 6) {
          const len = (buf[1] ?? 0) & 0x7f;
          if (len >= 126 || buf.length < 6 + len) break;
          const mask = buf.subarray(2, 6);
          const payload = Buffer.from(buf.subarray(6, 6 + len).map((b, i) => b ^ (mask[i % 4] ?? 0)));
          received.push({ opcode: (buf[0] ?? 0) & 0x0f, payload });
          buf = buf.subarray(6 + len);
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    dir = await mkdtemp(join(tmpdir(), 'podvirtctl-api-'));
    kubeconfig = join(dir, 'kubeconfig');
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    await writeFile(kubeconfig, JSON.stringify({
      apiVersion: 'v1', kind: 'Config', 'current-context': 't',
      clusters: [{ name: 't', cluster: { server: url, 'insecure-skip-tls-verify': true } }],
      users: [{ name: 't', user: { token: 'alice' } }],
      contexts: [{ name: 't', context: { cluster: 't', user: 't' } }],
    }));
  });

  after(async () => {
    assert.equal(sockets.size, 0, 'every websocket was closed');
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await rm(dir, { recursive: true, force: true });
  });

  beforeEach(() => {
    seen.length = 0;
    answers.clear();
    upgrades.length = 0;
  });

  async function kube(): Promise<KubeClient> {
    return KubeClient.create(await loadKubeConfig({ kubeconfig, env: {}, homeDir: dir }));
  }

  test('console through the API server: a websocket as the kubeconfig\'s user; bytes both ways; detaching closes with 1000', async () => {
    const client = await kube();
    try {
      const stream = openApiGuestStream(client, 'console', { vmi: { namespace: 'prod', name: 'v1' }, takeover: true, attachTimeoutMs: 5000 });
      const got: Buffer[] = [];
      stream.onData((c) => got.push(c));
      assert.equal(await stream.attached, '');
      const up = upgrades[0];
      assert.ok(up !== undefined);
      assert.equal(up.url, `${BASE}/prod/virtualmachineinstances/v1/console?takeover=true`);
      assert.equal(up.headers.authorization, 'Bearer alice');
      assert.equal(up.headers['sec-websocket-protocol'], 'plain.kubevirt.io');
      up.socket.write(Buffer.concat([Buffer.from([0x82, 5]), Buffer.from('login')]));
      await eventually(() => Buffer.concat(got).toString() === 'login', { deadlineMs: 5000, what: 'the server\'s bytes' });
      stream.write(Buffer.from('root\r'));
      stream.end();
      const frames = clientFrames.get(up.socket) ?? [];
      await eventually(() => frames.length === 2, { deadlineMs: 5000, what: 'two frames from the client' });
      assert.deepEqual(frames.map((f) => [f.opcode, f.payload.toString('hex')]), [[0x2, Buffer.from('root\r').toString('hex')], [0x8, '03e8']]);
      up.socket.end(Buffer.from([0x88, 2, 0x03, 0xe8]));
      assert.deepEqual(await stream.ended, { kind: 'closed' });
      await eventually(() => sockets.size === 0, { deadlineMs: 5000, what: 'the websocket closed' });
    } finally {
      await client.close();
    }
  });

  test('a refused upgrade is the NodeApiError of its status; a close with 1001 ends the stream as UNAVAILABLE with the server\'s reason', async () => {
    const client = await kube();
    try {
      answers.set(`${BASE}/prod/virtualmachineinstances/v1/vnc`, { status: 409, body: { kind: 'Status', code: 409, message: 'VMI prod/v1 is not Running (phase Scheduling)' } });
      const refused = openApiGuestStream(client, 'vnc', { vmi: { namespace: 'prod', name: 'v1' }, takeover: false, attachTimeoutMs: 5000 });
      await assert.rejects(refused.attached, (err: unknown) => err instanceof NodeApiError && err.status === 'FAILED_PRECONDITION' && err.message === 'VMI prod/v1 is not Running (phase Scheduling)');
      const stream = openApiGuestStream(client, 'console', { vmi: { namespace: 'prod', name: 'v2' }, takeover: false, attachTimeoutMs: 5000 });
      await stream.attached;
      const reason = Buffer.from('podvirt-api is stopping; reconnect');
      upgrades.at(-1)?.socket.write(Buffer.concat([Buffer.from([0x88, 2 + reason.length, 0x03, 0xe9]), reason]));
      const end = await stream.ended;
      await eventually(() => sockets.size === 0, { deadlineMs: 5000, what: 'the websocket closed after the close handshake' });
      assert.equal(end.kind, 'failed');
      assert.ok(end.kind === 'failed' && end.error.status === 'UNAVAILABLE' && end.error.message === 'podvirt-api is stopping; reconnect');
    } finally {
      await client.close();
    }
  });

  async function ctl(argv: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
    let stdout = '';
    let stderr = '';
    const code = await runCli({
      argv, env: { socket: join(dir, 'no-such.sock') }, version: 'test', signal: new AbortController().signal,
      stdout: { write: (c: string) => (stdout += c) }, stderr: { write: (c: string) => (stderr += c) },
      kube: { env, homeDir: dir },
    });
    return { code, stdout, stderr };
  }

  test('pause, unpause, soft-reboot and reset: a PUT of the subresource, as the kubeconfig\'s user, the node API\'s output', async () => {
    for (const [command, sub, done] of [['pause', 'pause', 'paused'], ['unpause', 'unpause', 'unpaused'], ['soft-reboot', 'softreboot', ''], ['reset', 'reset', '']] as const) {
      const r = await ctl([command, 'vmi', 'v1', '-n', 'prod', '--kubeconfig', kubeconfig]);
      assert.equal(r.code, 0, r.stderr);
      if (done !== '') assert.equal(r.stdout, `VMI prod/v1 was ${done}\n`);
      const last = seen.at(-1);
      assert.equal(last?.method, 'PUT');
      assert.equal(last.url, `${BASE}/prod/virtualmachineinstances/v1/${sub}`);
      assert.equal(last.headers.authorization, 'Bearer alice');
    }
    assert.equal(seen.length, 4);
  });

  test('freeze sends KubeVirt\'s unfreezeTimeout; $KUBECONFIG is found without the flag', async () => {
    const r = await ctl(['freeze', 'prod/v1', '--unfreeze-timeout', '2m'], { KUBECONFIG: kubeconfig });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(seen.length, 1);
    assert.equal(seen[0]?.url, `${BASE}/prod/virtualmachineinstances/v1/freeze`);
    assert.deepEqual(JSON.parse(seen[0]?.body ?? ''), { unfreezeTimeout: '120s' });
  });

  test('guestosinfo, userlist and fslist: KubeVirt\'s JSON read back into the node API\'s output', async () => {
    answers.set(`${BASE}/prod/virtualmachineinstances/v1/guestosinfo`, { status: 200, body: {
      apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstanceGuestAgentInfo', guestAgentVersion: '8.1', hostname: 'guest-one', timezone: 'UTC, 0',
      os: { name: 'Debian GNU/Linux', kernelRelease: '6.1.0' }, supportedCommands: [{ name: 'guest-ping', enabled: true }], userList: [], fsInfo: { disks: [] }, fsFreezeStatus: 'thawed',
    } });
    answers.set(`${BASE}/prod/virtualmachineinstances/v1/userlist`, { status: 200, body: { kind: 'VirtualMachineInstanceGuestOSUserList', items: [{ userName: 'root', domain: '', loginTime: 1700000000 }] } });
    answers.set(`${BASE}/prod/virtualmachineinstances/v1/filesystemlist`, { status: 200, body: { kind: 'VirtualMachineInstanceFileSystemList', items: [{ diskName: 'vda1', mountPoint: '/', fileSystemType: 'ext4', usedBytes: 1024, totalBytes: 4096 }] } });
    const info = await ctl(['guestosinfo', 'prod/v1', '-o', 'json', '--kubeconfig', kubeconfig]);
    assert.equal(info.code, 0, info.stderr);
    const parsed = JSON.parse(info.stdout) as { hostname: string; os: { name: string }; supportedCommands: unknown[] };
    assert.equal(parsed.hostname, 'guest-one');
    assert.equal(parsed.os.name, 'Debian GNU/Linux');
    assert.deepEqual(parsed.supportedCommands, [{ name: 'guest-ping', enabled: true }]);
    const users = await ctl(['userlist', 'prod/v1', '--kubeconfig', kubeconfig]);
    assert.equal(users.code, 0, users.stderr);
    assert.match(users.stdout, /root/);
    const fs = await ctl(['fslist', 'prod/v1', '-o', 'json', '--kubeconfig', kubeconfig]);
    assert.deepEqual(JSON.parse(fs.stdout), { filesystems: [{ diskName: 'vda1', mountPoint: '/', fileSystemType: 'ext4', usedBytes: 1024, totalBytes: 4096, disks: [] }] });
    assert.deepEqual(seen.map((s) => s.method), ['GET', 'GET', 'GET']);
  });

  test('a refusal is printed as the API server words it, exit 1', async () => {
    const message = 'virtualmachineinstances.subresources.kubevirt.io "v1" is forbidden: User "alice" cannot update resource "virtualmachineinstances/pause" in API group "subresources.kubevirt.io" in the namespace "prod"';
    answers.set(`${BASE}/prod/virtualmachineinstances/v1/pause`, { status: 403, body: { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Forbidden', code: 403, message } });
    const r = await ctl(['pause', 'prod/v1', '--kubeconfig', kubeconfig]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /User "alice" cannot update resource "virtualmachineinstances\/pause"/);
  });

  test('start, stop --force, restart and migrate of a VM: a PUT of virtualmachines/NAME/<sub> (202, no body); what was asked and what to watch', async () => {
    for (const [argv, sub, body] of [
      [['start', 'vm', 'prod/vm1'], 'start', ''],
      [['stop', 'vm', 'vm1', '-n', 'prod', '--force', '--grace-period', '5'], 'stop', '{"gracePeriod":5}'],
      [['stop', 'vm', 'prod/vm1'], 'stop', ''],
      [['restart', 'vm', 'prod/vm1'], 'restart', ''],
      [['migrate', 'vm', 'prod/vm1'], 'migrate', ''],
    ] as const) {
      answers.set(`${BASE}/prod/virtualmachines/vm1/${sub}`, { status: 202, body: undefined });
      const r = await ctl([...argv, '--kubeconfig', kubeconfig]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, `VM vm1 was scheduled to ${sub}\n`);
      assert.equal(r.stderr, sub === 'migrate' ? 'follow it with: kubectl get vmim -n prod -w\n' : 'follow it with: kubectl get vm vm1 -n prod -w\n');
      const last = seen.at(-1);
      assert.deepEqual([last?.method, last?.url, last?.body, last?.headers.authorization], ['PUT', `${BASE}/prod/virtualmachines/vm1/${sub}`, body, 'Bearer alice']);
    }
    const json = await ctl(['start', 'vm', 'prod/vm1', '-o', 'json', '--kubeconfig', kubeconfig]);
    assert.deepEqual(JSON.parse(json.stdout), { name: 'vm1', namespace: 'prod', action: 'start' });
    assert.equal(seen.length, 6);
  });

  test('a VM request refused (409, 404, 403): the API server\'s message, exit 1', async () => {
    const message = 'Operation cannot be fulfilled on virtualmachines.kubevirt.io "vm1": VM is already running';
    answers.set(`${BASE}/prod/virtualmachines/vm1/start`, { status: 409, body: { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Conflict', code: 409, message } });
    const r = await ctl(['start', 'vm', 'prod/vm1', '--kubeconfig', kubeconfig]);
    assert.deepEqual([r.code, r.stdout, r.stderr], [1, '', `error: ${message}\n`]);
  });

  test('addvolume and removevolume: virtualmachineinstances/NAME/<sub> with KubeVirt\'s options; --persist the VM\'s; a 400 names the flags', async () => {
    const add = await ctl(['addvolume', 'vmi', 'prod/v1', '--volume-name', 'data', '--claim', 'claim-1', '--serial', 'D1', '--kubeconfig', kubeconfig]);
    assert.equal(add.code, 0, add.stderr);
    assert.equal(add.stdout, 'volume data added to VMI prod/v1\n');
    assert.match(add.stderr, /^follow it with: kubectl get vmi v1 -n prod/);
    assert.equal(seen.at(-1)?.url, `${BASE}/prod/virtualmachineinstances/v1/addvolume`);
    assert.deepEqual(JSON.parse(seen.at(-1)?.body ?? ''), { name: 'data', disk: { name: 'data', disk: { bus: 'scsi' }, serial: 'D1' }, volumeSource: { persistentVolumeClaim: { claimName: 'claim-1' } } });
    const persisted = await ctl(['removevolume', 'vmi', 'prod/v1', '--volume-name', 'data', '--persist', '--kubeconfig', kubeconfig]);
    assert.equal(persisted.code, 0, persisted.stderr);
    assert.equal(persisted.stdout, 'volume data removed from VMI prod/v1 and its VM\n');
    assert.deepEqual([seen.at(-1)?.method, seen.at(-1)?.url, seen.at(-1)?.body], ['PUT', `${BASE}/prod/virtualmachines/v1/removevolume`, '{"name":"data"}']);
    const message = 'VMI prod/v1 refuses the change: name: Duplicate value: "data" is already the name of a volume or disk of this VMI; volumeSource.persistentVolumeClaim.claimName: Duplicate value: claim "claim-1" is already volume "old" of this VMI';
    answers.set(`${BASE}/prod/virtualmachineinstances/v1/addvolume`, { status: 400, body: { kind: 'Status', code: 400, reason: 'BadRequest', message } });
    const clash = await ctl(['addvolume', 'vmi', 'prod/v1', '--volume-name', 'data', '--claim', 'claim-1', '--kubeconfig', kubeconfig]);
    assert.equal(clash.code, 1);
    assert.equal(clash.stderr, 'error: VMI prod/v1 refuses the change: --volume-name: Duplicate value: "data" is already the name of a volume or disk of this VMI; --claim: Duplicate value: claim "claim-1" is already volume "old" of this VMI\n');
  });

  test('--node, --socket, or no kubeconfig anywhere: the node API; --kubeconfig with --node is a usage error', async () => {
    const node = await ctl(['pause', 'prod/v1', '--node'], { KUBECONFIG: kubeconfig });
    assert.equal(node.code, 3, node.stderr);
    assert.match(node.stderr, /no-such\.sock/);
    const socket = await ctl(['pause', 'prod/v1', '--socket', join(dir, 'other.sock')], { KUBECONFIG: kubeconfig });
    assert.equal(socket.code, 3, socket.stderr);
    const none = await ctl(['pause', 'prod/v1']);
    assert.equal(none.code, 3, none.stderr);
    assert.equal(seen.length, 0);
    const both = await ctl(['pause', 'prod/v1', '--node', '--kubeconfig', kubeconfig]);
    assert.equal(both.code, 2);
    assert.match(both.stderr, /--kubeconfig goes through the API server, --node to the node: give one or the other/);
  });
});
