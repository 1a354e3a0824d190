// podvirtctl console and vnc as child processes against the fake node API (its guest echoes in
// upper case): relay, detach on Ctrl+], the exit codes of each way a stream can fail or end,
// and the VNC proxy's port line. The pseudo-terminal path (raw mode) is test/e2e/console-*.
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { eventually } from '@podvirt/test-support';
import { startFakeNodeServer, type FakeNodeServer } from './fake-node-server.js';
import { runCtl, startCtl } from './run-ctl.js';

describe('podvirtctl console and vnc against a fake node API', () => {
  let fake: FakeNodeServer;
  before(async () => {
    fake = await startFakeNodeServer();
  });
  after(() => fake.close());
  const socket = (): string[] => ['--socket', fake.socket];

  test('console relays keys and output; Ctrl+] detaches with exit 0 and nothing after it is sent', async () => {
    const ctl = startCtl(['console', 'vmi', 'testvmi', ...socket()]);
    ctl.child.stderr?.once('data', () => {
      ctl.child.stdin?.write('uname\r');
      setTimeout(() => ctl.child.stdin?.write(Buffer.from([0x1d, 0x61, 0x62])), 200);
    });
    const run = await ctl.done;
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, 'UNAME\r');
    assert.match(run.stderr, /^Connected to the console of VMI default\/testvmi\. Press Ctrl\+\] to detach\.\n/);
    assert.match(run.stderr, /Detached from the console of VMI default\/testvmi\.\n$/);
  });

  test('no such VMI: one line, exit 4; on another node: exit 5; bad flags: exit 2', async () => {
    const missing = await runCtl(['console', 'nope', ...socket()]);
    assert.equal(missing.code, 4);
    assert.match(missing.stderr, /^error: VMI default\/nope not found on this node\n/);
    const elsewhere = await runCtl(['console', 'other/elsewhere', ...socket()]);
    assert.deepEqual([elsewhere.code, elsewhere.stderr], [5, 'error: VMI other/elsewhere runs on node node-b, not on node-a\n']);
    const usage = await runCtl(['console', 'testvmi', '--proxy-only', ...socket()]);
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /"console" does not take --proxy-only/);
  });

  test('the console closing from the far side (the VM stopped) is exit 6 with the reason', async () => {
    const ctl = startCtl(['console', 'testvmi', ...socket()]);
    ctl.child.stderr?.once('data', () => ctl.child.stdin?.write('poweroff\r'));
    const run = await ctl.done;
    assert.equal(run.code, 6);
    assert.equal(run.stdout, 'POWEROFF\r');
    assert.match(run.stderr, /error: disconnected from the console of VMI default\/testvmi: the VMI's serial console closed: the VM stopped/);
  });

  test('not attached within --timeout: exit 1 naming the deadline; SIGINT while attaching: exit 130', async () => {
    const slow = await runCtl(['console', 'hang', '--timeout', '1', ...socket()]);
    assert.equal(slow.code, 1);
    assert.match(slow.stderr, /not attached within 1000 ms/);
    const cancelledBefore = fake.cancelled.length;
    const consoleCalls = (): number => fake.calls.filter(([m]) => m === 'console').length;
    const callsBefore = consoleCalls();
    const ctl = startCtl(['console', 'hang', ...socket()]);
    // Once the server holds the call, podvirtctl has its SIGINT handler.
    await eventually(() => consoleCalls() > callsBefore, { what: 'the console call held', deadlineMs: 10_000 });
    ctl.child.kill('SIGINT');
    assert.equal((await ctl.done).code, 130);
    await eventually(() => fake.cancelled.length > cancelledBefore, { what: 'the stream cancelled', deadlineMs: 10_000 });
  });

  test('vnc --proxy-only prints {"port":N} and relays a TCP client; without --proxy-only it is a usage error', async () => {
    const usage = await runCtl(['vnc', 'testvmi', ...socket()]);
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /pass --proxy-only/);

    const ctl = startCtl(['vnc', 'vmi', 'testvmi', '--proxy-only', ...socket()]);
    const line = await new Promise<string>((resolve) => ctl.child.stdout?.once('data', (b: Buffer) => resolve(b.toString())));
    const { port } = JSON.parse(line) as { port: number };
    assert.ok(port > 0);
    const viewer = connect(port, '127.0.0.1');
    viewer.write('rfb 003.008\n');
    const answer = await new Promise<string>((resolve) => viewer.once('data', (b: Buffer) => resolve(b.toString())));
    assert.equal(answer, 'RFB 003.008\n');
    viewer.destroy();
    ctl.child.kill('SIGINT');
    const run = await ctl.done;
    assert.equal(run.code, 0, run.stderr);
  });
});
