// IPv6 guest networking with a real VM on the testbed's opt-in dual-stack pod network
// (PODVIRT_TESTBED_IPV6=1): a masquerade VMI's guest takes fd10:0:2::2 from the launcher's
// DHCPv6 server with Debian's dhcpcd (the test guest's podvirt.ipv6=dhcp), the host reaches its
// boot_id through the pod's IPv6 address on the listed port, the guest reaches the host over
// IPv6 through NAT66, status.interfaces lists both pod IPs, and deletion leaves nothing of
// either family.
import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { before, describe, test } from 'node:test';
import type { VirtualMachineInstance } from '@podvirt/api';
import { readTcp, waitForConsoleText } from '../testbed/index.js';
import { runCommand } from '../testbed/sandbox/run-command.js';
import { stackNetwork, type StackNetwork } from '../testbed/sandbox/stack-network.js';
import { BOOT_TIMEOUT_MS, guestVmi, VmiSuite } from './vmi-stack.js';

/** What the masquerade NAT puts in a ruleset: KubeVirt's chain names and both guest networks. */
const OURS = /KUBEVIRT_|10\.0\.2\.|fd10:0:2:/;

/**
 * A stack on the testbed's IPv6 pod network (`mode`: PODVIRT_TESTBED_IPV6) and an HTTP server on
 * the host side of its bridge, the only host address a guest is sent to; `seen` maps each request
 * path to the peer address the host saw (the NAT66 source). Filled in by the describe's `before`;
 * after the stack closed, nothing of it, its bridge included, is left.
 */
interface Ipv6Bed {
  readonly suite: VmiSuite;
  net: StackNetwork;
  hostIP6: string;
  port: number;
  readonly seen: Map<string, string>;
}

function ipv6Bed(mode: '1' | 'only'): Ipv6Bed {
  let http: Server | undefined;
  let bridge = '';
  const suite = VmiSuite.setUp({
    before: async () => {
      assert.doesNotMatch((await runCommand(['nft', '-s', 'list', 'ruleset'])).stdout, OURS, 'no masquerade rule on the host before the test');
      process.env['PODVIRT_TESTBED_IPV6'] = mode;
      return undefined;
    },
    beforeClose: async () => {
      const server = http;
      if (server !== undefined) await new Promise((r) => server.close(r));
    },
    after: async () => {
      delete process.env['PODVIRT_TESTBED_IPV6'];
      if (bridge !== '') assert.equal((await runCommand(['ip', 'link', 'show', bridge])).code, 1, 'the stack bridge is gone');
    },
  });
  const bed = { suite, net: undefined as unknown as StackNetwork, hostIP6: '', port: 0, seen: new Map<string, string>() };
  before(async () => {
    delete process.env['PODVIRT_TESTBED_IPV6'];
    bed.net = stackNetwork(suite.stack.testbed.kubeletRoot);
    bridge = bed.net.bridge;
    const addr = await runCommand(['ip', '-o', '-6', 'addr', 'show', 'dev', bridge, 'scope', 'global']);
    bed.hostIP6 = /inet6 ([0-9a-f:]+)\//.exec(addr.stdout)?.[1] ?? '';
    assert.notEqual(bed.hostIP6, '');
    const server = createServer((req, res) => {
      bed.seen.set(req.url ?? '', req.socket.remoteAddress ?? '');
      res.end(`hello-from-host ${req.url ?? ''}`);
    });
    http = server;
    await new Promise<void>((resolve) => server.listen(0, bed.hostIP6, resolve));
    bed.port = (server.address() as { port: number }).port;
  });
  return bed;
}

describe('IPv6 guest networking on the dual-stack testbed', () => {
  const bed = ipv6Bed('1');

  test('masquerade: DHCPv6 gives the guest fd10:0:2::2; the pod IPv6 reaches its boot_id on 8080; it reaches the host through NAT66; status lists both pod IPs', async () => {
    const { suite, hostIP6, port, seen } = bed;
    const vmi = guestVmi(suite.guest, 'vm-masq6', {
      extraKernelArgs: `podvirt.ipv6=dhcp podvirt.fetch6=http://[${hostIP6}]:${port}/masq6`,
      devices: { interfaces: [{ name: 'default', masquerade: {}, ports: [{ name: 'http', port: 8080 }] }] },
    });
    (vmi['spec'] as Record<string, unknown>)['networks'] = [{ name: 'default', pod: {} }];
    await suite.apply(vmi);
    const running = await suite.waitForPhase('vm-masq6', 'Running');
    const bootId = /boot_id=(\S+)/.exec(await suite.waitForGuestReady(running))?.[1] ?? '';
    const serial = suite.serialLog(running, Object.keys(running.status?.activePods ?? {})[0] ?? '');
    const consoleLine = async (text: string): Promise<string> => (await waitForConsoleText(serial, text, { timeoutMs: BOOT_TIMEOUT_MS })).line;

    const pod = (await suite.podsOf(running))[0];
    const podIPs = pod?.status?.podIPs?.map((p) => p.ip) ?? [];
    const [podIP4 = '', podIP6 = ''] = podIPs;
    assert.match(podIP4, /^\d+\.\d+\.\d+\.\d+$/);
    assert.match(podIP6, /^fd70:6f64:7669:/);

    // Both leases, each from the launcher's own server: DHCPv4 (busybox udhcpc), DHCPv6 (dhcpcd).
    assert.match(await consoleLine('PODVIRT-GUEST-NET eth0'), /PODVIRT-GUEST-NET eth0 ip=10\.0\.2\.2\/24 /);
    assert.match(await consoleLine('PODVIRT-GUEST-NET6'), /PODVIRT-GUEST-NET6 eth0 ip=fd10:0:2::2\/128 /);

    // The host reaches the guest's responder through the pod's IPv6 address (DNAT66 on the listed port).
    assert.equal((await suite.eventually('boot_id over IPv6 on 8080', () => readTcp(podIP6, 8080).catch(() => undefined))).trim(), bootId);
    // The guest reaches the host over IPv6, seen there as the pod's IPv6 address (NAT66).
    assert.match(await consoleLine('PODVIRT-GUEST-FETCH6'), /PODVIRT-GUEST-FETCH6 hello-from-host \/masq6/);
    assert.equal(seen.get('/masq6'), podIP6, 'the host saw the pod address: the guest went out through NAT66');

    // As KubeVirt reports masquerade: the pod's IPs, IPv4 first, also once the agent's view is
    // merged (the agent is re-read every 10 s; a report from before the guest's leases clears
    // the IPs for a while, as in KubeVirt, so the merged state with both is awaited).
    const merged = await suite.eventually("vm-masq6: the agent's view merged, with both pod IPs", async () => {
      const v = await suite.vmi('vm-masq6');
      const i = v?.status?.interfaces?.[0];
      return i?.infoSource === 'domain, guest-agent' && i.ipAddresses?.length === 2 ? v : undefined;
    });
    const iface = merged.status?.interfaces?.[0];
    assert.equal(iface?.name, 'default');
    assert.equal(iface?.ipAddress, podIP4);
    assert.deepEqual(iface?.ipAddresses, [podIP4, podIP6]);
    assert.equal(iface?.interfaceName, 'eth0');
    assert.equal(iface?.podInterfaceName, 'eth0');
  });

  test('deleting the VMI leaves no namespace, tap, bridge, NAT rule or host-local allocation of either family', async () => {
    const { suite, net } = bed;
    const v: VirtualMachineInstance = (await suite.vmi('vm-masq6')) ?? assert.fail('vm-masq6');
    assert.equal((await suite.kubectl(['delete', 'vmi', 'vm-masq6', '--wait=false'])).code, 0);
    await suite.waitForPodsGone(v, 120_000);
    const netns = (await readdir('/run/netns').catch(() => [] as string[])).filter((n) => n.startsWith(net.netnsPrefix));
    assert.deepEqual(netns, []);
    const allocations = (await readdir(`${net.ipamDir}/${net.networkName}`).catch(() => [] as string[])).filter((f) => /^\d+\.\d+\.\d+\.\d+$|:/.test(f));
    assert.deepEqual(allocations, [], "host-local's state dir holds no allocation of either family");
    const links = (await runCommand(['ip', '-o', 'link', 'show'])).stdout;
    assert.doesNotMatch(links, /: (tap0|k6t-eth0|eth0-nic)[:@]/);
    // Other stacks on this machine change the host's ruleset meanwhile: only the absence of ours is checked.
    assert.doesNotMatch((await runCommand(['nft', '-s', 'list', 'ruleset'])).stdout, OURS, "the host's ruleset holds no masquerade rule");
  });
});

// The same on an IPv6-only pod network (PODVIRT_TESTBED_IPV6=only: host-local has the stack's
// /64 alone). Masquerade works on IPv6 alone, as KubeVirt's does: no 10.0.2.0/24, no DHCPv4,
// the guest at fd10:0:2::2 behind NAT66. The bridge binding, which hands the pod's IPv4 address
// to the guest, is refused naming the field.
describe('IPv6 guest networking on an IPv6-only pod network', () => {
  const bed = ipv6Bed('only');

  test('masquerade: the guest gets fd10:0:2::2 and no IPv4; the pod IPv6 reaches it on 8080; it reaches the host; status and kubectl show the pod IPv6', async () => {
    const { suite, net, hostIP6, port, seen } = bed;
    const vmi = guestVmi(suite.guest, 'vm-only6', {
      extraKernelArgs: `podvirt.ipv6=dhcp podvirt.fetch6=http://[${hostIP6}]:${port}/only6`,
      devices: { interfaces: [{ name: 'default', masquerade: {}, ports: [{ name: 'http', port: 8080 }] }] },
    });
    (vmi['spec'] as Record<string, unknown>)['networks'] = [{ name: 'default', pod: {} }];
    await suite.apply(vmi);
    const running = await suite.waitForPhase('vm-only6', 'Running');
    const bootId = /boot_id=(\S+)/.exec(await suite.waitForGuestReady(running))?.[1] ?? '';
    const serial = suite.serialLog(running, Object.keys(running.status?.activePods ?? {})[0] ?? '');
    const consoleLine = async (text: string): Promise<string> => (await waitForConsoleText(serial, text, { timeoutMs: BOOT_TIMEOUT_MS })).line;
    const pod = (await suite.podsOf(running))[0];
    const podIPs = pod?.status?.podIPs?.map((p) => p.ip) ?? [];
    assert.equal(podIPs.length, 1);
    const podIP6 = podIPs[0] ?? '';
    assert.match(podIP6, /^fd70:6f64:7669:/);
    assert.equal(pod?.status?.podIP, podIP6);

    assert.match(await consoleLine('PODVIRT-GUEST-NET6'), /PODVIRT-GUEST-NET6 eth0 ip=fd10:0:2::2\/128 /);
    assert.equal((await suite.eventually('boot_id over IPv6 on 8080', () => readTcp(podIP6, 8080).catch(() => undefined))).trim(), bootId);
    assert.match(await consoleLine('PODVIRT-GUEST-FETCH6'), /PODVIRT-GUEST-FETCH6 hello-from-host \/only6/);
    assert.equal(seen.get('/only6'), podIP6, 'the host saw the pod address: NAT66');
    // No DHCPv4 server answers: busybox's client gives up.
    assert.match(await consoleLine('PODVIRT-GUEST-NET eth0'), /PODVIRT-GUEST-NET eth0 dhcp-failed/);

    const reported = await suite.eventually('vm-only6 reports the pod IPv6', async () => {
      const v = await suite.vmi('vm-only6');
      return v?.status?.interfaces?.[0]?.ipAddress === podIP6 ? v : undefined;
    });
    assert.deepEqual(reported.status?.interfaces?.[0]?.ipAddresses, [podIP6]);
    const table = await suite.kubectl(['get', 'vmi', 'vm-only6']);
    assert.match(table.stdout, new RegExp(`vm-only6\\s+\\S+\\s+Running\\s+${podIP6}\\s`));

    assert.equal((await suite.kubectl(['delete', 'vmi', 'vm-only6', '--wait=false'])).code, 0);
    await suite.waitForPodsGone(running, 120_000);
    const allocations = (await readdir(`${net.ipamDir}/${net.networkName}`).catch(() => [] as string[])).filter((f) => /^\d+\.\d+\.\d+\.\d+$|:/.test(f));
    assert.deepEqual(allocations, [], 'the IPv6 allocation is released');
    assert.deepEqual((await readdir('/run/netns').catch(() => [] as string[])).filter((n) => n.startsWith(net.netnsPrefix)), []);
  });

  test('bridge on the IPv6-only pod: Synchronized=False and a Warning SyncFailed naming the interface field; no qemu', async () => {
    const { suite } = bed;
    const vmi = guestVmi(suite.guest, 'vm-bridge6', { devices: { interfaces: [{ name: 'default', bridge: {} }] } });
    (vmi['spec'] as Record<string, unknown>)['networks'] = [{ name: 'default', pod: {} }];
    await suite.apply(vmi);
    const field = /spec\.domain\.devices\.interfaces\[0\]\.bridge: Invalid value: the pod interface eth0 has no IPv4 address/;
    const reported = await suite.eventually('Synchronized=False on vm-bridge6', async () => {
      const found = await suite.vmi('vm-bridge6');
      return found?.status?.conditions?.find((c) => c.type === 'Synchronized' && c.status === 'False');
    });
    assert.match(reported.message ?? '', field);
    const syncFailed = await suite.eventually('SyncFailed Event', async () => (await suite.events('vm-bridge6')).find((e) => e.type === 'Warning' && e.reason === 'SyncFailed'));
    assert.match(syncFailed.message ?? '', field);
    assert.deepEqual(await suite.qemuPids('vm-bridge6'), [], 'no qemu was started');
    assert.equal((await suite.kubectl(['delete', 'vmi', 'vm-bridge6', '--wait=false'])).code, 0);
    await suite.waitForGone('vm-bridge6');
  });
});
