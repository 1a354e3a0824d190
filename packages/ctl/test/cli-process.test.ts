// podvirtctl end to end: the built bin as a child process against a fake node API on a unix
// socket; what it prints on stdout and stderr and the exit code it returns.
import assert from 'node:assert/strict';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { eventually } from '@podvirt/test-support';
import { startFakeNodeServer, type FakeNodeServer } from './fake-node-server.js';
import { runCtl, startCtl } from './run-ctl.js';

describe('podvirtctl against a fake node API', () => {
  let fake: FakeNodeServer;
  before(async () => {
    fake = await startFakeNodeServer();
  });
  after(() => fake.close());
  const socket = (): string[] => ['--socket', fake.socket];

  test('pause prints one line and exits 0; the server got namespace and name', async () => {
    const run = await runCtl(['pause', 'vmi', 'testvmi', '-n', 'default', ...socket()]);
    assert.deepEqual([run.code, run.stdout, run.stderr], [0, 'VMI default/testvmi was paused\n', '']);
    assert.deepEqual(fake.calls.at(-1), ['pause', { namespace: 'default', name: 'testvmi' }]);
  });

  test('FAILED_PRECONDITION: the server message is the error, exit 1', async () => {
    const run = await runCtl(['pause', 'other/elsewhere', ...socket()]);
    assert.equal(run.code, 1);
    assert.equal(run.stdout, '');
    assert.equal(run.stderr, 'error: VMI other/elsewhere runs on node node-b, not on node-a\n');
  });

  test('NOT_FOUND: exit 1 with the hint to list', async () => {
    const run = await runCtl(['unpause', 'nope', ...socket()]);
    assert.equal(run.code, 1);
    assert.equal(run.stdout, '');
    assert.match(run.stderr, /^error: VMI default\/nope not found on this node\nhint: check the name with "podvirtctl list -A"/);
  });

  test('the socket comes from PODVIRT_NODE_SOCKET when --socket is absent', async () => {
    const run = await runCtl(['unpause', 'default/testvmi'], { PODVIRT_NODE_SOCKET: fake.socket });
    assert.deepEqual([run.code, run.stdout], [0, 'VMI default/testvmi was unpaused\n']);
  });

  test('freeze passes --unfreeze-timeout in seconds and says when it thaws', async () => {
    const run = await runCtl(['freeze', 'prod/db', '--unfreeze-timeout', '2m', ...socket()]);
    assert.deepEqual([run.code, run.stdout], [0, 'VMI prod/db was frozen; it thaws by itself in 2m\n']);
    assert.deepEqual(fake.calls.at(-1), ['freeze', { vmi: { namespace: 'prod', name: 'db' }, unfreezeTimeoutSeconds: 120 }]);
  });

  test('-o json prints the response, camelCase', async () => {
    const run = await runCtl(['fslist', 'db', '-n', 'prod', '-o', 'json', ...socket()]);
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(JSON.parse(run.stdout), {
      filesystems: [
        { diskName: 'vda1', mountPoint: '/', fileSystemType: 'ext4', usedBytes: 1_073_741_824, totalBytes: 4_294_967_296, disks: ['vda'] },
      ],
    });
    const ops = await runCtl(['soft-reboot', 'prod/db', '-o', 'json', ...socket()]);
    assert.deepEqual([ops.code, JSON.parse(ops.stdout)], [0, { uid: 'uid-db' }]);
  });

  test('list -A prints a kubectl-style table; -n filters on the server', async () => {
    const all = await runCtl(['list', '-A', ...socket()]);
    assert.equal(all.code, 0, all.stderr);
    const lines = all.stdout.trimEnd().split('\n');
    assert.match(lines[0] ?? '', /^NAMESPACE\s+NAME\s+PHASE\s+NODE\s+DOMAIN\s+AGENT\s+FROZEN$/);
    assert.deepEqual(lines.slice(1).map((line) => line.split(/\s+/).slice(0, 2).join('/')),
      ['default/hang', 'default/testvmi', 'other/elsewhere', 'prod/db']);
    assert.deepEqual(fake.calls.at(-1), ['list', { namespace: '' }]);
    const empty = await runCtl(['list', '-n', 'void', ...socket()]);
    assert.deepEqual([empty.code, empty.stdout, empty.stderr], [0, '', 'No resources found in void namespace.\n']);
  });

  test('guestosinfo prints key/values; no agent is a FAILED_PRECONDITION', async () => {
    const run = await runCtl(['guestosinfo', 'prod/db', ...socket()]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^Hostname:\s+db-0$/m);
    assert.match(run.stdout, /^OS:\s+Debian GNU\/Linux 12 \(bookworm\)$/m);
    const none = await runCtl(['userlist', 'default/testvmi', ...socket()]);
    assert.deepEqual([none.code, none.stderr], [1, 'error: VMI default/testvmi has no guest agent connected\n']);
  });

  test('a missing socket exits 3 and says how to fix it', async () => {
    const missing = join(fake.dir, 'absent.sock');
    const run = await runCtl(['pause', 'default/testvmi', '--socket', missing]);
    assert.equal(run.code, 3);
    assert.equal(run.stdout, '');
    assert.match(run.stderr, new RegExp(`^error: the node API socket ${missing} does not exist\\nhint: is podvirt-handler running`));
    assert.match(run.stderr, /--socket PATH or set PODVIRT_NODE_SOCKET/);
  });

  test('a socket file nobody listens on exits 3 as stale', async () => {
    const stale = join(fake.dir, 'stale.sock');
    await writeFile(stale, '');
    const run = await runCtl(['list', '--socket', stale]);
    assert.equal(run.code, 3);
    assert.match(run.stderr, /nothing is listening on .*stale\.sock/);
  });

  test('a socket this user may not open exits 3 as root-only', async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'podvirtctl-perm-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
    const path = join(dir, 'node.sock');
    const server = createServer();
    await new Promise<void>((resolve, reject) => server.once('error', reject).listen(path, resolve));
    t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
    // Root passes every permission check, so as root the CLI runs as nobody, who may not enter
    // the 0700 temp dir; anyone else is kept out by the socket's own mode.
    const asRoot = process.getuid?.() === 0;
    if (!asRoot) await chmod(path, 0o000);
    const run = await runCtl(['list', '--socket', path], {}, asRoot ? { uid: 65534, gid: 65534 } : undefined);
    assert.equal(run.code, 3);
    assert.match(run.stderr, /^error: permission denied on the node API socket .*node\.sock\nhint: the node API socket is root-only/);
  });

  test('a bad flag or value exits 2 with the usage, before connecting anywhere', async () => {
    const calls = fake.calls.length;
    const flag = await runCtl(['pause', 'default/testvmi', '--forcefully', ...socket()]);
    assert.equal(flag.code, 2);
    assert.equal(flag.stderr, 'error: unknown flag: --forcefully\nUsage: podvirtctl pause (NAMESPACE/NAME | [vmi] NAME [-n NAMESPACE]) [flags]\n' +
      'Run "podvirtctl pause --help" for more.\n');
    const duration = await runCtl(['freeze', 'prod/db', '--unfreeze-timeout', 'soon', ...socket()]);
    assert.equal(duration.code, 2);
    assert.match(duration.stderr, /^error: invalid --unfreeze-timeout "soon": want whole seconds such as 5m, 300s or 300/);
    const command = await runCtl(['shutdown', 'default/testvmi']);
    assert.deepEqual([command.code, command.stderr.split('\n')[0]], [2, 'error: unknown command "shutdown"']);
    assert.equal(fake.calls.length, calls);
  });

  test('--timeout bounds the call: DEADLINE_EXCEEDED exits 1 with a hint', async () => {
    const run = await runCtl(['reset', 'default/hang', '--timeout', '300ms', ...socket()]);
    assert.equal(run.code, 1);
    assert.match(run.stderr, /^error: .*\nhint: no answer within 300ms: .*--timeout\n$/);
  });

  test('SIGINT cancels the call on the wire and exits 130', async (t) => {
    const calls = fake.calls.length;
    const before = fake.cancelled.length;
    const ctl = startCtl(['pause', 'default/hang', ...socket()]);
    t.after(() => {
      if (ctl.child.exitCode === null && ctl.child.signalCode === null) ctl.child.kill('SIGKILL');
    });
    // Wait until the call has reached the server, so that the cancel has something to cancel.
    await eventually(() => fake.calls.length > calls, { what: 'the call at the server' });
    assert.deepEqual(fake.calls.at(-1), ['pause', { namespace: 'default', name: 'hang' }]);
    ctl.child.kill('SIGINT');
    const run = await ctl.done;
    assert.equal(run.code, 130);
    assert.match(run.stderr, /^error: interrupted/);
    await eventually(() => fake.cancelled.length > before, { what: 'the cancel at the server' });
    assert.deepEqual(fake.cancelled.slice(before), ['pause']);
  });

  test('help and version exit 0 without a server', async () => {
    const help = await runCtl(['freeze', '--help']);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /--unfreeze-timeout DURATION/);
    const version = await runCtl(['version', '-o', 'json']);
    assert.equal(version.code, 0);
    assert.deepEqual(JSON.parse(version.stdout), { clientVersion: '0.1.0', nodeApi: 'podvirt.node.v1' });
  });
});
