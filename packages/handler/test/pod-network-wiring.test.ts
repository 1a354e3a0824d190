// The handler's privileged network phase against a fake /proc (a directory) and a fake
// nsenter: what it runs in the launcher pod's namespace, what it leaves for the launcher, and
// that a repeated Sync or a restarted handler changes nothing more.
import assert from 'node:assert/strict';
import { link, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { decodeVmi, parsePodNetworkHandoff, POD_NETWORK_HANDOFF_FILE, VmiInvalidError, type DefaultedVmi } from '@podvirt/api';
import { pino } from 'pino';
import { isHandlerError } from '../src/handler-error.js';
import type { CommandResult, NetnsCommand } from '../src/network/netns-command.js';
import { pathInRoot } from '../src/network/path-in-root.js';
import { PodNetworkWiring } from '../src/network/pod-network-wiring.js';

const UID = 'vmi-uid-1';
const PID = 4242;

/** Records every command; answers `ip -j` reads from its pod link, fails what `failures` names. */
class FakeNetns implements NetnsCommand {
  readonly calls: string[] = [];
  podAddr: unknown[] = [{ ifname: 'eth0', mtu: 1450, address: '0a:58:0a:c8:00:05', addr_info: [{ family: 'inet', local: '10.200.0.5', prefixlen: 24, scope: 'global' }] }];
  readonly failures = new Map<string, string>();
  run(netnsPath: string, argv: readonly string[]): Promise<CommandResult> {
    const line = argv.join(' ');
    this.calls.push(line);
    assert.equal(netnsPath, join(procRoot, String(PID), 'ns', 'net'));
    if (line === 'ip -j addr show dev eth0') return Promise.resolve({ code: 0, stdout: JSON.stringify(this.podAddr), stderr: '' });
    if (line === 'ip -j -4 route show default') return Promise.resolve({ code: 0, stdout: JSON.stringify([{ dst: 'default', gateway: '10.200.0.1', dev: 'eth0' }]), stderr: '' });
    const failure = [...this.failures].find(([prefix]) => line.startsWith(prefix))?.[1];
    return Promise.resolve(failure === undefined ? { code: 0, stdout: '', stderr: '' } : { code: 2, stdout: '', stderr: failure });
  }
  changes(): string[] {
    return this.calls.filter((c) => !c.startsWith('ip -j'));
  }
}

let procRoot = '';
// As on Debian, /var/run is an absolute link to /run inside the launcher's filesystem.
const launcherDir = (): string => join(procRoot, String(PID), 'root', 'run', 'kubevirt-private', UID);

async function fakeProc(opts: { sameNetns?: boolean } = {}): Promise<void> {
  await mkdir(join(procRoot, 'self', 'ns'), { recursive: true });
  await writeFile(join(procRoot, 'self', 'ns', 'net'), '');
  const pid = join(procRoot, String(PID));
  await mkdir(join(pid, 'ns'), { recursive: true });
  if (opts.sameNetns === true) await link(join(procRoot, 'self', 'ns', 'net'), join(pid, 'ns', 'net'));
  else await writeFile(join(pid, 'ns', 'net'), '');
  await writeFile(join(pid, 'cmdline'), ['node', '/usr/lib/podvirt/podvirt-launcher.js', '--name', 'vm', '--uid', UID, ''].join('\0'));
  await writeFile(join(pid, 'status'), 'Name:\tnode\nUid:\t107\t107\t107\t107\nGid:\t108\t108\t108\t108\n');
  await mkdir(launcherDir(), { recursive: true });
  await mkdir(join(pid, 'root', 'var'), { recursive: true });
  await symlink('/run', join(pid, 'root', 'var', 'run'));
  await mkdir(join(pid, 'root', 'etc'), { recursive: true });
  await writeFile(join(pid, 'root', 'etc', 'resolv.conf'), 'nameserver 10.96.0.10\nsearch default.svc.cluster.local svc.cluster.local\n');
  // Another process that merely mentions the uid is not the launcher.
  await mkdir(join(procRoot, '17'), { recursive: true });
  await writeFile(join(procRoot, '17', 'cmdline'), ['grep', '--uid', UID, ''].join('\0'));
}

function vmi(devices: Record<string, unknown> = {}, networks?: unknown[]): DefaultedVmi {
  return decodeVmi({
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachineInstance',
    metadata: { name: 'vm', namespace: 'default', uid: UID },
    spec: { domain: { resources: { requests: { memory: '128Mi' } }, devices }, ...(networks === undefined ? {} : { networks }) },
  });
}
const masquerade = (): DefaultedVmi => vmi({ interfaces: [{ name: 'default', masquerade: {}, ports: [{ port: 8080 }] }] }, [{ name: 'default', pod: {} }]);

function wiring(netns: FakeNetns): PodNetworkWiring {
  return new PodNetworkWiring({ log: pino({ level: 'silent' }), procRoot, command: netns });
}

describe('the handler wires the pod network in the launcher pod', () => {
  beforeEach(async () => {
    procRoot = await mkdtemp(join(tmpdir(), 'podvirt-fake-proc-'));
  });
  afterEach(() => rm(procRoot, { recursive: true, force: true }));

  test("the launcher's files are found through its own absolute links, not the handler's", async () => {
    const root = join(procRoot, 'root');
    await mkdir(join(root, 'run', 'a'), { recursive: true });
    await mkdir(join(root, 'var'), { recursive: true });
    await symlink('/run', join(root, 'var', 'run'));
    await symlink('../run/a', join(root, 'var', 'rel'));
    assert.equal(await pathInRoot(root, '/var/run/a/file'), join(root, 'run', 'a', 'file'));
    assert.equal(await pathInRoot(root, '/var/rel/x'), join(root, 'run', 'a', 'x'));
    assert.equal(await pathInRoot(root, '/var/run/../../../etc'), join(root, 'etc'));
    await symlink('loop', join(root, 'loop'));
    await assert.rejects(pathInRoot(root, '/loop/x'), { code: 'HANDLER_ERR_POD_NETWORK', message: /too many symbolic links/ });
  });

  test('a VMI without interfaces needs no launcher and runs nothing', async () => {
    const netns = new FakeNetns();
    await wiring(netns).ensure(vmi({ autoattachPodInterface: false }));
    assert.deepEqual(netns.calls, []);
  });

  test('masquerade: tap owned by the launcher user, bridge, NAT; the handoff names the NIC and its lease; a second Sync and a new handler change nothing', async () => {
    await fakeProc();
    const netns = new FakeNetns();
    const w = wiring(netns);
    await w.ensure(masquerade());
    const changes = netns.changes();
    assert.ok(changes.includes('ip tuntap add dev tap0 mode tap user 107 group 108'), changes.join('\n'));
    assert.ok(changes.includes('ip link add k6t-eth0 type bridge'));
    assert.ok(changes.includes('sysctl -q -w net/ipv4/ip_forward=1'));
    const nft = join(launcherDir(), 'pod-network.nft');
    assert.ok(changes.includes(`nft -f ${nft}`));
    assert.match(await readFile(nft, 'utf8'), /^table ip nat\ndelete table ip nat\ntable ip nat \{/);
    const [nic] = parsePodNetworkHandoff(await readFile(join(launcherDir(), POD_NETWORK_HANDOFF_FILE), 'utf8'));
    assert.equal(nic?.attachment.tap, 'tap0');
    assert.deepEqual(nic?.attachment.reportedIPs, ['10.200.0.5']);
    assert.equal(nic?.lease?.clientIP, '10.0.2.2');
    assert.deepEqual(nic?.lease?.dnsServers, ['10.96.0.10']);
    assert.equal(nic?.lease?.mtu, 1450);

    const before = netns.calls.length;
    await w.ensure(masquerade());
    await wiring(netns).ensure(masquerade());
    assert.equal(netns.calls.length, before, 'wired already: nothing runs');
  });

  test('a handler stopped half-way: the kept plan is applied again, steps already done are accepted', async () => {
    await fakeProc();
    const netns = new FakeNetns();
    netns.failures.set('nft -f', 'Error: Could not process rule: No such file or directory');
    await assert.rejects(wiring(netns).ensure(masquerade()), (e: unknown) => isHandlerError(e, 'HANDLER_ERR_POD_NETWORK') && /nft -f .* failed .*No such file/.test(e.message));
    await assert.rejects(readFile(join(launcherDir(), POD_NETWORK_HANDOFF_FILE)), { code: 'ENOENT' });
    // The restarted handler finds the bridge and the tap there, and the pod link as it left it.
    const retry = new FakeNetns();
    retry.podAddr = [];
    retry.failures.set('ip link add k6t-eth0', 'RTNETLINK answers: File exists');
    retry.failures.set('ip tuntap add', 'ioctl(TUNSETIFF): Device or resource busy');
    await wiring(retry).ensure(masquerade());
    assert.ok(!retry.calls.includes('ip -j addr show dev eth0'), 'the kept plan, not a new look at the pod link');
    assert.equal(parsePodNetworkHandoff(await readFile(join(launcherDir(), POD_NETWORK_HANDOFF_FILE), 'utf8')).length, 1);
  });

  test('a step that fails for another reason is an error naming the command and its output', async () => {
    await fakeProc();
    const netns = new FakeNetns();
    netns.failures.set('ip link add k6t-eth0', 'RTNETLINK answers: Operation not permitted');
    await assert.rejects(wiring(netns).ensure(masquerade()), /ip link add k6t-eth0 type bridge failed in the launcher pod's network namespace: RTNETLINK answers: Operation not permitted/);
  });

  test("a launcher in the node's own network namespace is refused before anything runs", async () => {
    await fakeProc({ sameNetns: true });
    const netns = new FakeNetns();
    await assert.rejects(wiring(netns).ensure(masquerade()), (e: unknown) => isHandlerError(e, 'HANDLER_ERR_POD_NETWORK') && /shares the node's network namespace/.test(e.message));
    assert.deepEqual(netns.calls, []);
  });

  test('no launcher process yet: a retryable error, nothing runs', async () => {
    await mkdir(join(procRoot, 'self', 'ns'), { recursive: true });
    const netns = new FakeNetns();
    await assert.rejects(wiring(netns).ensure(masquerade()), (e: unknown) => isHandlerError(e, 'HANDLER_ERR_POD_NETWORK') && /no launcher process/.test(e.message));
    assert.deepEqual(netns.calls, []);
  });

  test('bridge on a pod without IPv4 names the interface field and changes nothing', async () => {
    await fakeProc();
    const netns = new FakeNetns();
    netns.podAddr = [{ ifname: 'eth0', mtu: 1500, address: '0a:58:0a:c8:00:05', addr_info: [] }];
    await assert.rejects(wiring(netns).ensure(vmi()), (e: unknown) => e instanceof VmiInvalidError && e.field === 'spec.domain.devices.interfaces[0].bridge');
    assert.deepEqual(netns.changes(), []);
    // The same on an IPv6-only pod: its IPv6 address is no help to the bridge binding.
    netns.podAddr = [{ ifname: 'eth0', mtu: 1500, address: '0a:58:0a:c8:00:05', addr_info: [{ family: 'inet6', local: 'fd70:6f64:7669::5', prefixlen: 64, scope: 'global' }] }];
    await assert.rejects(wiring(netns).ensure(vmi()), (e: unknown) => e instanceof VmiInvalidError && e.field === 'spec.domain.devices.interfaces[0].bridge' && /no IPv4 address/.test(e.message));
    assert.deepEqual(netns.changes(), []);
  });

  test('masquerade on an IPv6-only pod: NAT66 only; the handoff carries a DHCPv6 lease and no DHCPv4 one', async () => {
    await fakeProc();
    const netns = new FakeNetns();
    netns.podAddr = [{ ifname: 'eth0', mtu: 1450, address: '0a:58:0a:c8:00:05', addr_info: [{ family: 'inet6', local: 'fd70:6f64:7669::5', prefixlen: 64, scope: 'global' }, { family: 'inet6', local: 'fe80::858:aff:fec8:5', prefixlen: 64, scope: 'link' }] }];
    await wiring(netns).ensure(masquerade());
    const changes = netns.changes();
    assert.ok(changes.includes('sysctl -q -w net/ipv6/conf/all/forwarding=1'), changes.join('\n'));
    assert.ok(!changes.some((c) => c.includes('net/ipv4') || c.startsWith('ip addr ') || c.startsWith('ip route ')), changes.join('\n'));
    assert.match(await readFile(join(launcherDir(), 'pod-network.nft'), 'utf8'), /^table ip6 nat\ndelete table ip6 nat\ntable ip6 nat \{/);
    const [nic] = parsePodNetworkHandoff(await readFile(join(launcherDir(), POD_NETWORK_HANDOFF_FILE), 'utf8'));
    assert.equal(nic?.lease, undefined);
    assert.equal(nic?.lease6?.clientIP, 'fd10:0:2::2');
    assert.deepEqual(nic?.attachment.reportedIPs, ['fd70:6f64:7669::5']);
  });
});
