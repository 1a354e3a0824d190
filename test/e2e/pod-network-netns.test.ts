// The pod network's two phases against the real kernel, without a VM: a "pod" namespace (eth0
// on a bridge in an "outside" namespace) holding a stand-in launcher, and a "guest" namespace
// whose veth stands in for the tap. The handler's PodNetworkWiring enters the pod namespace by
// the stand-in's pid and wires it; the launcher's PodNetworkSetup there serves DHCP, and busybox
// udhcpc gets its lease from it; traffic flows in through the pod IP and out through the NAT
// (masquerade) or the bridge. Only namespaces and addresses made here are used.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, test, type TestContext } from 'node:test';
import { decodeVmi, POD_NETWORK_HANDOFF_FILE, VmiInvalidError } from '@podvirt/api';
import { PodNetworkWiring } from '@podvirt/handler';
import { pino } from 'pino';
import { runCommand } from '../testbed/sandbox/run-command.js';

const runner = fileURLToPath(new URL('./pod-network-run.js', import.meta.url));
const udhcpcScript = fileURLToPath(new URL('../../testbed/guest/rootfs/etc/udhcpc.script', import.meta.url));

async function sh(ns: string | undefined, argv: string[]): Promise<string> {
  const res = await runCommand(ns === undefined ? argv : ['ip', 'netns', 'exec', ns, ...argv], { timeoutMs: 20_000 });
  if (res.code !== 0) throw new Error(`${argv.join(' ')} (in ${ns ?? 'host'}): ${res.stderr}`);
  return res.stdout;
}

/**
 * outside (10.199.x.1 on a bridge) ── veth ── pod (eth0 10.199.x.5) ; guest (eth0, to be bridged).
 * With `ipv6`, dual-stack: fd70:6f64:7699:x::1 outside and ::5 in the pod (a ULA /64 made here).
 */
async function namespaces(t: TestContext, opts: { ipv6?: boolean } = {}): Promise<{ out: string; pod: string; guest: string; outIP: string; podIP: string; outIP6: string; podIP6: string }> {
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
  const outIP6 = opts.ipv6 === true ? `fd70:6f64:7699:${third.toString(16)}::1` : '';
  const podIP6 = opts.ipv6 === true ? `fd70:6f64:7699:${third.toString(16)}::5` : '';
  if (opts.ipv6 === true) {
    await sh(out, ['ip', '-6', 'addr', 'add', `${outIP6}/64`, 'dev', 'br0', 'nodad']);
    await sh(pod, ['ip', '-6', 'addr', 'add', `${podIP6}/64`, 'dev', 'eth0', 'nodad']);
    await sh(pod, ['ip', '-6', 'route', 'add', 'default', 'via', outIP6]);
  }
  return { out, pod, guest, outIP, podIP, outIP6, podIP6 };
}

interface PodLauncher {
  /** Runs the launcher's phase (DHCP) once the handler wired the pod; its attachments or error. */
  serve(): Promise<Record<string, unknown> | Array<Record<string, unknown>>>;
  readonly privateDir: string;
}

/** The stand-in launcher in `ns` (the host's namespace when undefined), with a private directory of its own. */
async function startLauncher(t: TestContext, ns: string | undefined, vmi: { metadata: { uid: string } }): Promise<PodLauncher> {
  const privateDir = await mkdtemp(join(tmpdir(), 'podvirt-netns-'));
  t.after(() => rm(privateDir, { recursive: true, force: true }));
  await mkdir(join(privateDir, vmi.metadata.uid));
  const argv = [process.execPath, runner, privateDir, JSON.stringify(vmi), 'podvirt-launcher', '--uid', vmi.metadata.uid];
  const child = spawn(ns === undefined ? argv[0] ?? '' : 'ip', ns === undefined ? argv.slice(1) : ['netns', 'exec', ns, ...argv], { stdio: ['pipe', 'pipe', 'inherit'] });
  t.after(() => child.kill());
  const lines: string[] = [];
  const waiters: Array<() => void> = [];
  let out = '';
  child.stdout?.on('data', (c: Buffer) => {
    out += c.toString();
    for (let i = out.indexOf('\n'); i >= 0; i = out.indexOf('\n')) {
      lines.push(out.slice(0, i));
      out = out.slice(i + 1);
      waiters.splice(0).forEach((w) => w());
    }
  });
  const line = (n: number): Promise<string> =>
    new Promise((resolve, reject) => {
      const check = (): void => {
        if (lines[n] !== undefined) resolve(lines[n]);
        else waiters.push(check);
      };
      child.once('exit', (code) => reject(new Error(`the stand-in launcher exited with ${String(code)}`)));
      check();
    });
  assert.equal(await line(0), 'ready');
  return {
    privateDir,
    serve: async () => {
      child.stdin?.write('go\n');
      return JSON.parse(await line(1)) as Record<string, unknown>;
    },
  };
}

const vmi = (binding: 'masquerade' | 'bridge', extra: Record<string, unknown> = {}): { metadata: { name: string; namespace: string; uid: string } } & Record<string, unknown> => ({
  apiVersion: 'kubevirt.io/v1',
  kind: 'VirtualMachineInstance',
  metadata: { name: 'netvm', namespace: 'e2e', uid: `uid-net-${randomBytes(4).toString('hex')}` },
  spec: {
    networks: [{ name: 'default', pod: {} }],
    domain: { resources: { requests: { memory: '128Mi' } }, devices: { interfaces: [{ name: 'default', [binding]: {}, ...extra }] } },
  },
});

const wiring = (privateDir: string): PodNetworkWiring => new PodNetworkWiring({ log: pino({ level: 'warn' }), launcherPrivateDir: privateDir });

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
    const v = vmi('masquerade', { ports: [{ port: 8080 }] });
    const launcher = await startLauncher(t, ns.pod, v);
    await wiring(launcher.privateDir).ensure(decodeVmi(v));
    const [nic] = (await launcher.serve()) as Array<{ mac: string; tap: string }>;
    assert.equal(nic?.tap, 'tap0');
    assert.equal(await guestLease(ns, nic?.mac ?? ''), '10.0.2.2/24');
    assert.equal(await exchange(ns.guest, ns.out, ns.podIP, 8080, 'guest-8080'), 'guest-8080');
    assert.equal(await exchange(ns.out, ns.guest, ns.outIP, 9000, 'outside'), 'outside');
    const rules = await sh(ns.pod, ['nft', 'list', 'table', 'ip', 'nat']);
    assert.match(rules, /ip saddr 10\.0\.2\.2 counter packets [1-9]\d* bytes \d+ masquerade/, 'egress went through the NAT');
  });

  test('masquerade on a dual-stack pod: fd10:0:2::2 behind NAT66 is reached through the pod IPv6 and reaches out', async (t) => {
    const ns = await namespaces(t, { ipv6: true });
    const v = vmi('masquerade', { ports: [{ port: 8080 }] });
    const launcher = await startLauncher(t, ns.pod, v);
    await wiring(launcher.privateDir).ensure(decodeVmi(v));
    const [nic] = (await launcher.serve()) as Array<{ mac: string; reportedIPs: string[] }>;
    assert.deepEqual(nic?.reportedIPs, [ns.podIP, ns.podIP6]);
    assert.equal(await guestLease(ns, nic?.mac ?? ''), '10.0.2.2/24');
    // The guest side as the handoff's DHCPv6 lease describes it.
    const handoff = JSON.parse(await readFile(join(launcher.privateDir, v.metadata.uid, POD_NETWORK_HANDOFF_FILE), 'utf8')) as Array<{ lease6?: { clientIP: string; prefix: number; gateway: string } }>;
    const lease6 = handoff[0]?.lease6;
    assert.deepEqual(lease6, { clientIP: 'fd10:0:2::2', prefix: 120, gateway: 'fd10:0:2::1', dnsServers: [], serverIface: 'k6t-eth0', serverMac: '02:00:00:00:00:00' });
    // Debian's dhcpcd, DHCPv6 only and without waiting for router advertisements (none are sent,
    // as in KubeVirt), gets fd10:0:2::2 from the launcher's DHCPv6 server; the default route
    // goes through the lease's gateway, as KubeVirt's guests set it.
    const conf = join(launcher.privateDir, 'dhcpcd.conf');
    await writeFile(conf, 'noipv6rs\nia_na\nscript /bin/true\nnohook resolv.conf\n');
    const dhcpcd = await runCommand(['ip', 'netns', 'exec', ns.guest, 'dhcpcd', '-f', conf, '-6', '-1', '-B', '-t', '20', '--noipv6rs', '--nobackground', '-j', '/dev/stderr', 'eth0'], { timeoutMs: 30_000 });
    assert.match(await sh(ns.guest, ['ip', '-6', 'addr', 'show', 'dev', 'eth0']), /inet6 fd10:0:2::2\/128 /, `${dhcpcd.stdout}${dhcpcd.stderr}`);
    // IA_NA carries a /128: the /120 the gateway sits in is on the link, as KubeVirt's guests configure it.
    await sh(ns.guest, ['ip', '-6', 'route', 'add', `fd10:0:2::/${lease6.prefix}`, 'dev', 'eth0']);
    await sh(ns.guest, ['ip', '-6', 'route', 'add', 'default', 'via', lease6.gateway]);
    assert.equal(await exchange(ns.guest, ns.out, ns.podIP6, 8080, 'guest-v6'), 'guest-v6');
    assert.equal(await exchange(ns.out, ns.guest, ns.outIP6, 9000, 'outside-v6'), 'outside-v6');
    // Still IPv4 too.
    assert.equal(await exchange(ns.guest, ns.out, ns.podIP, 8080, 'guest-v4'), 'guest-v4');
    const rules = await sh(ns.pod, ['nft', 'list', 'table', 'ip6', 'nat']);
    assert.match(rules, /ip6 saddr fd10:0:2::2 counter packets [1-9]\d* bytes \d+ masquerade/, 'egress went through NAT66');
    assert.match(rules, /^\s+tcp dport 8080 counter packets [1-9]\d* bytes \d+ dnat to fd10:0:2::2$/m, 'ingress was DNATed to the guest');
  });

  test('wiring again changes nothing: a repeated Sync, and a handler restarted before it left the handoff', async (t) => {
    const ns = await namespaces(t);
    const v = vmi('masquerade', { ports: [{ port: 8080 }] });
    const launcher = await startLauncher(t, ns.pod, v);
    // Links, their masters and IPv4 addresses, IPv4 routes and rules; not what the kernel moves
    // on by itself meanwhile (operational states, IPv6 link-local addresses and their routes).
    const state = async (): Promise<unknown[]> => [
      (JSON.parse(await sh(ns.pod, ['ip', '-j', 'link', 'show'])) as Array<{ ifname: string; master?: string }>).map((l) => [l.ifname, l.master]),
      (JSON.parse(await sh(ns.pod, ['ip', '-4', '-j', 'addr', 'show'])) as Array<{ ifname: string; addr_info: Array<{ local: string; prefixlen: number }> }>).map((l) => [
        l.ifname,
        l.addr_info.map((a) => `${a.local}/${a.prefixlen}`),
      ]),
      await sh(ns.pod, ['ip', '-4', 'route', 'show', 'table', 'all']),
      await sh(ns.pod, ['nft', '-s', 'list', 'ruleset']),
    ];
    const first = wiring(launcher.privateDir);
    await first.ensure(decodeVmi(v));
    const wired = await state();
    await first.ensure(decodeVmi(v));
    assert.deepEqual(await state(), wired, 'a second ensure does nothing');
    // Every step done, but the handoff not yet written: a new handler applies the kept plan again.
    await rm(join(launcher.privateDir, v.metadata.uid, POD_NETWORK_HANDOFF_FILE));
    await wiring(launcher.privateDir).ensure(decodeVmi(v));
    assert.deepEqual(await state(), wired, 'steps applied twice leave one bridge, one address, one set of rules');
    const [nic] = (await launcher.serve()) as Array<{ mac: string }>;
    assert.equal(await guestLease(ns, nic?.mac ?? ''), '10.0.2.2/24');
  });

  test('bridge: the guest leases the pod IP and MAC; traffic reaches it directly; a restarted handler finishes the same plan', async (t) => {
    const ns = await namespaces(t);
    const podMac = /link\/ether (\S+)/.exec(await sh(ns.pod, ['ip', 'link', 'show', 'eth0']))?.[1];
    const v = vmi('bridge');
    const launcher = await startLauncher(t, ns.pod, v);
    await wiring(launcher.privateDir).ensure(decodeVmi(v));
    // eth0 is renamed by now; the kept plan, not a new look at eth0, drives the second handler.
    await rm(join(launcher.privateDir, v.metadata.uid, POD_NETWORK_HANDOFF_FILE));
    await wiring(launcher.privateDir).ensure(decodeVmi(v));
    const [nic] = (await launcher.serve()) as Array<{ mac: string }>;
    assert.equal(nic?.mac, podMac);
    assert.equal(await guestLease(ns, nic?.mac ?? ''), `${ns.podIP}/24`);
    assert.equal(await exchange(ns.guest, ns.out, ns.podIP, 8080, 'guest-bridge'), 'guest-bridge');
    assert.equal(await exchange(ns.out, ns.guest, ns.outIP, 9000, 'outside'), 'outside');
  });

  test("a launcher in the node's own network namespace is refused before anything is changed", async (t) => {
    const v = vmi('masquerade');
    // Other engineers' stacks add and remove links on this host meanwhile: only ours are looked for.
    const ours = /: (k6t-eth0|eth0-nic)[:@]/;
    assert.doesNotMatch((await runCommand(['ip', '-o', 'link', 'show'])).stdout, ours);
    const launcher = await startLauncher(t, undefined, v);
    await assert.rejects(wiring(launcher.privateDir).ensure(decodeVmi(v)), /refusing to wire the pod network: .*shares the node's network namespace/);
    assert.doesNotMatch((await runCommand(['ip', '-o', 'link', 'show'])).stdout, ours);
    assert.match(String((await launcher.serve() as { error?: string }).error), /the pod network is not wired yet/);
  });

  test('bridge on a pod without IPv4 names the interface field', async (t) => {
    const ns = await namespaces(t);
    await sh(ns.pod, ['ip', 'addr', 'flush', 'dev', 'eth0']);
    const v = vmi('bridge');
    const launcher = await startLauncher(t, ns.pod, v);
    await assert.rejects(wiring(launcher.privateDir).ensure(decodeVmi(v)), (e: unknown) => e instanceof VmiInvalidError && e.field === 'spec.domain.devices.interfaces[0].bridge');
  });
});
