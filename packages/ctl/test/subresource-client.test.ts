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
import { after, before, beforeEach, describe, test } from 'node:test';
import { runCli } from '../src/cli.js';

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
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await rm(dir, { recursive: true, force: true });
  });

  beforeEach(() => {
    seen.length = 0;
    answers.clear();
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
