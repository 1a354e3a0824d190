// Console, VNC and the guest's own log on the testbed with a real VM, used as a person would:
// `podvirtctl console` in a real pseudo-terminal (node-pty) types a command into the guest's
// shell and reads the answer, detaches with Ctrl+] and leaves the terminal as it found it;
// `kubectl logs -c guest-console-log [-f]` shows and follows the boot; a real VNC client
// (vncsnapshot) takes a screenshot through `podvirtctl vnc --proxy-only`. Then the faults:
// refusals with their exit codes, 50 attach/detach cycles without a leaked descriptor, and a
// handler restart while attached (the client says so, the VM runs on).
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { before, describe, test } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import type { VirtualMachineInstance } from '@podvirt/api';
import { node } from '@podvirt/proto';
import { eventually } from '@podvirt/test-support';
import { spawn as spawnPty, type IPty } from 'node-pty';
import { repoRoot } from '../testbed/index.js';
import { nodeApiSocket, podvirtctl } from './handler-node.js';
import { guestVmi, NS, VmiSuite } from './vmi-stack.js';

const run = promisify(execFile);
const VM = 'vm-console';
const CTL = join(repoRoot(import.meta.url), 'packages/ctl/bin/podvirtctl.js');
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/;

/** A shell in a pseudo-terminal; everything it printed so far, and a wait for a pattern. */
class PtySession {
  output = '';
  readonly exited: Promise<number>;
  constructor(readonly pty: IPty) {
    pty.onData((d) => (this.output += d));
    this.exited = new Promise((resolve) => pty.onExit((e) => resolve(e.exitCode)));
  }

  /** Kills what still runs in the terminal (a failed test must not leave a client attached). */
  close(): void {
    try {
      this.pty.kill();
    } catch {
      // Already exited.
    }
  }

  async waitFor(pattern: RegExp, from: number, suite: VmiSuite, timeoutMs = 60_000): Promise<RegExpExecArray> {
    return suite.eventually(`${pattern} on the terminal (got ${JSON.stringify(this.output.slice(from, from + 2000))})`, () =>
      Promise.resolve(pattern.exec(this.output.slice(from)) ?? undefined), timeoutMs);
  }
}

function fdCount(pid: number): Promise<number> {
  return readdir(`/proc/${pid}/fd`).then((fds) => fds.length);
}

async function pidsMatching(word: string, uid: string): Promise<number[]> {
  const pids: number[] = [];
  for (const pid of await readdir('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    const argv = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    if (argv.includes(word) && argv.includes(uid)) pids.push(Number(pid));
  }
  return pids;
}

describe('console, VNC and guest-console-log on the testbed', () => {
  let tmp = '';
  const suite = VmiSuite.setUp({
    beforeClose: async (s) => {
      await s.kubectl(['delete', 'vmi', '--all', '--wait=false']);
      await s.waitForGone(VM).catch(() => undefined);
    },
    after: async () => {
      if (tmp !== '') await rm(tmp, { recursive: true, force: true });
    },
  });
  let vmi: VirtualMachineInstance;
  let socket: string;
  let bootId: string;
  let pod: string;

  before(async () => {
    socket = nodeApiSocket(suite.stack);
    tmp = await mkdtemp(join(tmpdir(), 'podvirt-console-e2e-'));
    await suite.apply(guestVmi(suite.guest, VM, { devices: { autoattachGraphicsDevice: true } }));
    vmi = await suite.waitForPhase(VM, 'Running');
    const ready = await suite.waitForGuestReady(vmi);
    bootId = /boot_id=(\S+)/.exec(ready)?.[1] ?? assert.fail(`no boot_id in ${ready}`);
    pod = (await suite.podsOf(vmi))[0]?.metadata?.name ?? assert.fail('no launcher pod');
  });

  test('kubectl logs -c guest-console-log shows the boot; -f follows what the guest prints later', async () => {
    // The sidecar ships the log a poll interval behind qemu.
    const marker = new RegExp(`${suite.guest.readyMarker} .*boot_id=${bootId}`);
    const logs = await suite.eventually('the ready marker in kubectl logs -c guest-console-log', async () => {
      const out = await suite.kubectl(['logs', pod, '-c', 'guest-console-log']);
      return marker.test(out.stdout) ? out : undefined;
    }, 30_000).catch(async (err: unknown) => {
      const status = await suite.kubectl(['get', 'pod', pod, '-o', 'jsonpath={.status.initContainerStatuses}']);
      throw new Error(`${(err as Error).message}\ninit container statuses: ${status.stdout}`);
    });
    assert.doesNotMatch(logs.stdout, /\r/, 'lines end at LF');

    const follow = spawn('kubectl', ['--kubeconfig', suite.stack.kubeconfigPath, 'logs', '-f', pod, '-c', 'guest-console-log']);
    let followed = '';
    follow.stdout.on('data', (b: Buffer) => (followed += b.toString()));
    try {
      // The heartbeat the guest prints every few seconds arrives on the followed log.
      const seen = (followed.match(/PODVIRT-GUEST-HEARTBEAT (\d+)/g) ?? []).length;
      await suite.eventually('a new heartbeat on kubectl logs -f', () =>
        Promise.resolve((followed.match(/PODVIRT-GUEST-HEARTBEAT (\d+)/g) ?? []).length > seen + 1 ? true : undefined), 60_000);
    } finally {
      follow.kill('SIGTERM');
    }
  });

  test('podvirtctl console in a pseudo-terminal: type a command, read the answer, Ctrl+] detaches, terminal restored', async (t) => {
    const script = `stty -g; echo START; ${process.execPath} ${CTL} console vmi ${VM} -n ${NS} --socket ${socket}; echo "EXIT=$?"; stty -g`;
    const s = new PtySession(spawnPty('/bin/sh', ['-c', script], { name: 'xterm', cols: 100, rows: 30 }));
    t.after(() => s.close());
    const start = await s.waitFor(/^(\S+)[\r\n]+START/m, 0, suite);
    const before = start[1];
    await s.waitFor(/Connected to the console of VMI default\/vm-console\. Press Ctrl\+\] to detach\./, 0, suite);
    const mark = s.output.length;
    s.pty.write('\r');
    await s.waitFor(/# /, mark, suite);
    const asked = s.output.length;
    s.pty.write('cat /proc/sys/kernel/random/boot_id\r');
    const answer = await s.waitFor(new RegExp(`cat /proc/sys/kernel/random/boot_id[\\r\\n]+(${UUID.source})`), asked, suite);
    assert.equal(answer[1], bootId, 'the guest answered with its own boot_id');
    s.pty.write('\x1d');
    const end = await s.waitFor(/EXIT=(\d+)[\r\n]+(\S+)/, asked, suite);
    assert.equal(end[1], '0', s.output);
    assert.equal(end[2], before, 'the terminal settings are the same as before the console');
    assert.match(s.output, /Detached from the console of VMI default\/vm-console\./);
    assert.equal(await s.exited, 0);

    // What was typed reached the guest's log too: the console output is never lost to it.
    const logs = await suite.kubectl(['logs', pod, '-c', 'guest-console-log']);
    assert.match(logs.stdout, /cat \/proc\/sys\/kernel\/random\/boot_id/);
  });

  test('a real VNC client takes a screenshot through podvirtctl vnc --proxy-only, and it shows the guest\'s text', async () => {
    const proxy = spawn(process.execPath, [CTL, 'vnc', 'vmi', VM, '--proxy-only', '--socket', socket]);
    let out = '';
    let err = '';
    proxy.stdout.on('data', (b: Buffer) => (out += b.toString()));
    proxy.stderr.on('data', (b: Buffer) => (err += b.toString()));
    const exited = new Promise<number | null>((resolve) => proxy.once('close', resolve));
    try {
      const port = await suite.eventually('the proxy port', () => Promise.resolve(/^\{"port":(\d+)\}$/m.exec(out)?.[1]));
      const jpeg = join(tmp, 'screen.jpg');
      await run('vncsnapshot', ['-quiet', '-allowblank', `127.0.0.1::${port}`, jpeg], { timeout: 60_000 });
      const { stdout: ppm } = await run('djpeg', ['-pnm', '-grayscale', jpeg], { encoding: 'buffer', maxBuffer: 64 << 20 });
      const { width, height, pixels } = parsePgm(ppm);
      assert.ok(width >= 640 && height >= 400, `a VGA-sized screen, got ${width}x${height}`);
      // Text on a dark background: a good share of bright pixels, far from blank.
      const bright = pixels.filter((p) => p > 128).length;
      assert.ok(bright > 500, `the screen shows text (${bright} bright pixels of ${pixels.length})`);
    } finally {
      proxy.kill('SIGINT');
    }
    assert.equal(await exited, 0, err);
  });

  test('refusals: a missing VMI exits 4, a VMI not running exits 5, each with one line', async () => {
    const missing = await podvirtctl(socket, 'console', `${NS}/no-such-vmi`);
    assert.deepEqual([missing.code, missing.stderr.split('\n')[0]], [4, 'error: VMI default/no-such-vmi not found']);
    await suite.apply({ ...guestVmi(suite.guest, 'vm-pending'), spec: { ...(guestVmi(suite.guest, 'vm-pending')['spec'] as object), nodeSelector: { 'no-such-label': 'x' } } });
    const pending = await podvirtctl(socket, 'console', `${NS}/vm-pending`);
    assert.equal(pending.code, 5, pending.stderr);
    assert.match(pending.stderr, /^error: VMI default\/vm-pending is not scheduled to a node yet/);
    await suite.kubectl(['delete', 'vmi', 'vm-pending', '--wait=false']);
  });

  test('50 attach/detach cycles (half of them abrupt) leave no descriptor behind in the handler, the launcher or qemu', async () => {
    const uid = vmi.metadata.uid ?? '';
    const [launcher] = await pidsMatching('podvirt-launcher.js', uid);
    const [qemu] = await suite.qemuPids(VM);
    assert.ok(launcher !== undefined && qemu !== undefined);
    const handler = suite.stack.handler.pid;
    const client = new node.NodeClient(`unix:${socket}`, grpc.credentials.createInsecure());
    // An abrupt end is seen by the handler a moment after the client: until then the VMI's
    // console is still taken, and a new attach is refused; try again then.
    const cycle = async (i: number): Promise<void> => {
      await eventually(async () => {
        try {
          await attachOnce(i);
          return true;
        } catch (err) {
          if (/another client is attached/.test((err as Error).message)) return undefined;
          throw err;
        }
      }, { what: `attach ${i} once the previous client's end is seen`, deadlineMs: 10_000, stepMs: 50 });
    };
    const attachOnce = async (i: number): Promise<void> => {
      const call = client.console();
      call.on('error', () => undefined);
      const status = new Promise<grpc.StatusObject>((resolve) => call.on('status', resolve));
      const attached = new Promise<void>((resolve, reject) => {
        call.on('data', (m: node.StreamOutput) => m.output?.$case === 'attached' && resolve());
        void status.then((st) => reject(new Error(`cycle ${i}: ${st.details}`)));
      });
      call.write({ input: { $case: 'open', value: { vmi: { namespace: NS, name: VM }, takeover: false } } });
      await attached;
      if (i % 2 === 0) call.end();
      else call.cancel();
      await status;
    };
    await cycle(0);
    const before = [await fdCount(handler), await fdCount(launcher), await fdCount(qemu)];
    for (let i = 1; i <= 50; i++) await cycle(i);
    client.close();
    const after = await suite.eventually('descriptors back to where they were', async () => {
      const now = [await fdCount(handler), await fdCount(launcher), await fdCount(qemu)];
      return now.every((n, i) => n <= (before[i] ?? 0)) ? now : undefined;
    }, 30_000);
    assert.ok(after.every((n, i) => n <= (before[i] ?? 0)), `fds before ${before.join('/')} after ${after.join('/')} (handler/launcher/qemu)`);
  });

  test('a handler restart while attached: the client ends with a clear message and exit 6; the VM runs on', async (t) => {
    const qemuBefore = await suite.qemuPids(VM);
    const s = new PtySession(spawnPty(process.execPath, [CTL, 'console', VM, '--socket', socket], { name: 'xterm', cols: 100, rows: 30 }));
    t.after(() => s.close());
    await s.waitFor(/Press Ctrl\+\] to detach\./, 0, suite);
    await suite.stack.handler.stop();
    const message = await s.waitFor(/error: disconnected from the console of VMI default\/vm-console: (.*)/, 0, suite);
    assert.match(message[1] ?? '', /handler is shutting down; the VM keeps running/);
    assert.equal(await s.exited, 6);
    await suite.stack.restartHandler();
    assert.deepEqual(await suite.qemuPids(VM), qemuBefore, 'the same qemu runs on');
    assert.equal((await suite.vmi(VM))?.status?.phase, 'Running');
    // Once back, the console works again.
    const again = new PtySession(spawnPty(process.execPath, [CTL, 'console', VM, '--socket', socket], { name: 'xterm', cols: 100, rows: 30 }));
    t.after(() => again.close());
    await again.waitFor(/Press Ctrl\+\] to detach\./, 0, suite, 120_000);
    again.pty.write('\x1d');
    assert.equal(await again.exited, 0);
  });
});

function parsePgm(buf: Buffer): { width: number; height: number; pixels: Uint8Array } {
  // P5\n<w> <h>\n<max>\n<bytes>
  const header = /^P5\s+(\d+)\s+(\d+)\s+(\d+)\s/.exec(buf.subarray(0, 64).toString('latin1'));
  if (header === null) throw new Error('djpeg did not write a PGM');
  const width = Number(header[1]);
  const height = Number(header[2]);
  return { width, height, pixels: new Uint8Array(buf.subarray(header[0].length)) };
}
