// The launcher's pod network set-up against the real kernel, without a VM: a "pod" namespace
// (eth0 on a bridge in an "outside" namespace) and a "guest" namespace whose veth stands in
// for the tap. busybox udhcpc gets its lease from the launcher's DHCP server; traffic flows
// in through the pod IP and out through the NAT (masquerade) or the bridge. Only namespaces
// and addresses made here are used.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { describe, test, type TestContext } from 'node:test';
import { runCommand } from '../testbed/sandbox/run-command.js';

const runner = fileURLToPath(new URL('./pod-network-run.js', import.meta.url));
const udhcpcScript = fileURLToPath(new URL('../../testbed/guest/rootfs/etc/udhcpc.script', import.meta.url));

async function sh(ns: string | undefined, argv: string[]): Promise<string> {
  const res = await runCommand(ns === undefined ? argv : ['ip', 'netns', 'exec', ns, ...argv], { timeoutMs: 20_000 });
  if (res.code !== 0) throw new Error(`${argv.join(' ')} (in ${ns ?? 'host'}): ${res.stderr}`);
  return res.stdout;
}

/** outside (10.199.x.1 on a bridge) ── veth ── pod (eth0 10.199.x.5) ; guest (eth0, to be bridged). */
async function namespaces(t: TestContext): Promise<{ out: string; pod: string; guest: string; outIP: string; podIP: string }> {
  const id = randomBytes(3).toString('hex');
  const [out, pod, guest] = ['o', 'p', 'g'].map((k) => `pvnt-${id}-${k}`) as [string, string, string];
  const third = parseInt(id.slice(0, 2), 16);
  const outIP = `10.199.${third}.1`;
  const podIP = `10.199.${third}.5`;
  for (const ns of [out, pod, guest]) {
    await sh(undefined, ['ip', 'netns', 'add', ns]);
    t.after(() => runCommand(['ip', 'netns', 'delete', ns]));
    await sh(ns, ['ip', 'link', 'set', 'lo', 'up']);
  }
  await sh(out, ['ip', 'link', 'add', 'br0', 'type', 'bridge']);
  await sh(out, ['ip', 'addr', 'add', `${outIP}/24`, 'dev', 'br0']);
  await sh(out, ['ip', 'link', 'set', 'br0', 'up']);
  await sh(out, ['ip', 'link', 'add', 'v0', 'type', 'veth', 'peer', 'name', 'eth0', 'netns', pod]);
  await sh(out, ['ip', 'link', 'set', 'v0', 'master', 'br0', 'up']);
  await sh(pod, ['ip', 'link', 'set', 'eth0', 'up']);
  await sh(pod, ['ip', 'addr', 'add', `${podIP}/24`, 'dev', 'eth0']);
  await sh(pod, ['ip', 'route', 'add', 'default', 'via', outIP]);
  return { out, pod, guest, outIP, podIP };
}

function startSetup(t: TestContext, pod: string, vmi: unknown): Promise<{ child: ChildProcess; result: Record<string, unknown> | Array<Record<string, unknown>> }> {
  const child = spawn('ip', ['netns', 'exec', pod, process.execPath, runner, JSON.stringify(vmi)], { stdio: ['pipe', 'pipe', 'inherit'] });
  t.after(() => child.kill());
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (c: Buffer) => {
      out += c.toString();
      const line = out.split('\n')[0];
      if (out.includes('\n') && line !== undefined) resolve({ child, result: JSON.parse(line) as Record<string, unknown> });
    });
    child.once('exit', (code) => reject(new Error(`set-up exited with ${String(code)}: ${out}`)));
  });
}

const vmi = (binding: 'masquerade' | 'bridge', extra: Record<string, unknown> = {}): unknown => ({
  metadata: { name: 'netvm', uid: 'uid-net' },
  spec: { networks: [{ name: 'default', pod: {} }], domain: { devices: { interfaces: [{ name: 'default', [binding]: {}, ...extra }] } } },
});

/** Attaches the guest namespace's eth0 (with the NIC's MAC) to the in-pod bridge, then runs udhcpc there. */
async function guestLease(ns: { pod: string; guest: string }, mac: string): Promise<string> {
  await sh(ns.pod, ['ip', 'link', 'add', 'gv0', 'type', 'veth', 'peer', 'name', 'eth0', 'netns', ns.guest]);
  await sh(ns.pod, ['ip', 'link', 'set', 'gv0', 'master', 'k6t-eth0', 'up']);
  await sh(ns.guest, ['ip', 'link', 'set', 'eth0', 'address', mac]);
  const res = await runCommand(['ip', 'netns', 'exec', ns.guest, 'busybox', 'udhcpc', '-i', 'eth0', '-s', udhcpcScript, '-f', '-q', '-n', '-t', '10', '-T', '1'], { timeoutMs: 30_000 });
  assert.match(res.stderr, /lease of \S+ obtained/, res.stderr);
  return /inet (\S+)/.exec(await sh(ns.guest, ['ip', '-o', '-4', 'addr', 'show', 'eth0']))?.[1] ?? '';
}

/** One TCP exchange: a busybox nc server in `serverNs` answering `text`, a client in `clientNs`. */
async function exchange(serverNs: string, clientNs: string, ip: string, port: number, text: string): Promise<string> {
  const server = spawn('ip', ['netns', 'exec', serverNs, 'busybox', 'nc', '-l', '-p', String(port), '-e', 'echo', text], { stdio: 'ignore' });
  try {
    for (let i = 0; i < 50; i++) {
      const res = await runCommand(['ip', 'netns', 'exec', clientNs, 'busybox', 'nc', '-w', '2', ip, String(port)], { timeoutMs: 10_000 });
      if (res.stdout !== '') return res.stdout.trim();
      await new Promise((r) => setTimeout(r, 100));
    }
    return '';
  } finally {
    server.kill();
  }
}

describe('pod network set-up in real namespaces', () => {
  test('masquerade: the guest leases 10.0.2.2; the pod IP reaches it on the listed port; it reaches out through NAT', async (t) => {
    const ns = await namespaces(t);
    const { result } = await startSetup(t, ns.pod, vmi('masquerade', { ports: [{ port: 8080 }] }));
    const [nic] = result as Array<{ mac: string; tap: string }>;
    assert.equal(nic?.tap, 'tap0');
    assert.equal(await guestLease(ns, nic?.mac ?? ''), '10.0.2.2/24');
    assert.equal(await exchange(ns.guest, ns.out, ns.podIP, 8080, 'guest-8080'), 'guest-8080');
    assert.equal(await exchange(ns.out, ns.guest, ns.outIP, 9000, 'outside'), 'outside');
    const rules = await sh(ns.pod, ['nft', 'list', 'table', 'ip', 'nat']);
    assert.match(rules, /ip saddr 10\.0\.2\.2 counter packets [1-9]\d* bytes \d+ masquerade/, 'egress went through the NAT');
  });

  test('bridge: the guest leases the pod IP and MAC; traffic reaches it directly', async (t) => {
    const ns = await namespaces(t);
    const podMac = /link\/ether (\S+)/.exec(await sh(ns.pod, ['ip', 'link', 'show', 'eth0']))?.[1];
    const { result } = await startSetup(t, ns.pod, vmi('bridge'));
    const [nic] = result as Array<{ mac: string }>;
    assert.equal(nic?.mac, podMac);
    assert.equal(await guestLease(ns, nic?.mac ?? ''), `${ns.podIP}/24`);
    assert.equal(await exchange(ns.guest, ns.out, ns.podIP, 8080, 'guest-bridge'), 'guest-bridge');
    assert.equal(await exchange(ns.out, ns.guest, ns.outIP, 9000, 'outside'), 'outside');
  });

  test('a namespace that is not a pod\'s is refused before anything is changed', async (t) => {
    const ns = await namespaces(t);
    await sh(ns.pod, ['ip', 'link', 'add', 'extra0', 'type', 'bridge']);
    const { result } = await startSetup(t, ns.pod, vmi('masquerade'));
    assert.match(String((result as { error?: string }).error), /refusing to wire the pod network: .*extra0/);
    assert.doesNotMatch(await sh(ns.pod, ['ip', '-o', 'link', 'show']), /k6t-eth0|tap0/);
  });

  test('bridge on a pod without IPv4 names the interface field', async (t) => {
    const ns = await namespaces(t);
    await sh(ns.pod, ['ip', 'addr', 'flush', 'dev', 'eth0']);
    const { result } = await startSetup(t, ns.pod, vmi('bridge'));
    assert.equal((result as { field?: string }).field, 'spec.domain.devices.interfaces[0].bridge');
  });
});
