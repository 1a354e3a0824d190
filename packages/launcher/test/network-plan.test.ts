import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { convertVmi } from '../src/convert/convert-vmi.js';
import { findAll, findElement } from '../src/convert/xml.js';
import { VmiInvalidError } from '@podvirt/api';
import { buildDhcpReply, encodeClasslessRoutes, encodeSearchDomains, MessageType, parseDhcpRequest, prefixToMask } from '../src/network/dhcp-packet.js';
import { leaseOptions } from '../src/network/dhcp-server.js';
import { masqueradeRules } from '../src/network/masquerade-rules.js';
import { derivedMac, NetworkPlanError, planNetwork, type NicAttachment, type PlanInput } from '../src/network/network-plan.js';
import { renderRuleset } from '../src/network/nft-ruleset.js';
import { parsePodLink } from '../src/network/pod-link.js';
import { parseResolvConf } from '../src/network/resolv-conf.js';
import { baseVmi, context } from './vmi-fixture.js';

const link = { name: 'eth0', mac: '0a:58:0a:c8:01:05', mtu: 1450, ipv4: { address: '10.200.1.5', prefix: 24 }, hasIPv6: false, gateway: '10.200.1.1' };
const input = (iface: PlanInput['iface']): PlanInput => ({
  vmiUid: 'uid-1',
  hostname: 'testvm',
  iface,
  link,
  resolver: { nameservers: ['10.200.1.53'], searchDomains: ['default.svc.cluster.local', 'cluster.local'] },
});

describe('pod network plan', () => {
  test('masquerade: 10.0.2.1 on the bridge, the guest at 10.0.2.2 behind NAT, the pod link untouched', () => {
    const plan = planNetwork(input({ name: 'default', binding: 'masquerade', ports: [{ port: 8080 }] }), 0);
    assert.equal(plan.attachment.guestIP, '10.0.2.2');
    assert.deepEqual(plan.attachment.reportedIPs, ['10.200.1.5']);
    assert.equal(plan.attachment.mac, derivedMac('uid-1', 'default'));
    assert.equal(plan.lease.router, '10.0.2.1');
    assert.equal(plan.lease.serverIP, '10.0.2.1');
    assert.equal(plan.lease.mtu, 1450);
    const ips = plan.steps.filter((s) => s.kind === 'ip').map((s) => (s.kind === 'ip' ? s.args.join(' ') : ''));
    assert.ok(ips.includes('addr add 10.0.2.1/24 dev k6t-eth0'));
    assert.ok(ips.includes('link set tap0 mtu 1450 master k6t-eth0 up'));
    assert.ok(!ips.some((s) => / eth0( |$)/.test(s.replace('k6t-eth0', ''))), 'nothing is done to eth0');
    const nft = plan.steps.find((s) => s.kind === 'nft');
    assert.match(nft?.kind === 'nft' ? nft.ruleset : '', /tcp dport \{ 8080 \} counter dnat to 10\.0\.2\.2/);
  });

  test('masquerade honours vmNetworkCIDR and refuses one without room', () => {
    const plan = planNetwork({ ...input({ name: 'default', binding: 'masquerade' }), vmNetworkCIDR: '10.11.0.0/24' }, 0);
    assert.equal(plan.attachment.guestIP, '10.11.0.2');
    assert.throws(() => planNetwork({ ...input({ name: 'default', binding: 'masquerade' }), vmNetworkCIDR: '10.11.0.0/31' }, 0), NetworkPlanError);
  });

  test('bridge: the guest takes the pod IP and MAC; the pod link is renamed and enslaved', () => {
    const plan = planNetwork(input({ name: 'default', binding: 'bridge' }), 0);
    assert.equal(plan.attachment.mac, link.mac);
    assert.equal(plan.lease.clientIP, '10.200.1.5');
    assert.equal(plan.lease.router, '10.200.1.1');
    assert.equal(plan.lease.prefix, 24);
    const ips = plan.steps.map((s) => (s.kind === 'ip' ? s.args.join(' ') : ''));
    assert.ok(ips.some((s) => /^link set eth0 name eth0-nic address 02:00:00:/.test(s)));
    assert.ok(ips.includes('addr flush dev eth0'));
    assert.ok(ips.includes('link set eth0-nic type bridge_slave learning off'), 'the pod link never learns the guest MAC');
    assert.equal(plan.steps.some((s) => s.kind === 'nft'), false);
  });

  test('bridge on a pod without IPv4 names the field', () => {
    const noV4 = { ...input({ name: 'default', binding: 'bridge' }), link: { name: 'eth0', mac: link.mac, mtu: 1500, hasIPv6: true } };
    assert.throws(() => planNetwork(noV4, 2), (e: unknown) => e instanceof NetworkPlanError && e.field === 'spec.domain.devices.interfaces[2].bridge');
  });

  test('the pod link is read from ip -j output', () => {
    const addr = JSON.stringify([{ ifname: 'eth0', mtu: 1500, address: '0A:58:00:00:00:01', addr_info: [{ family: 'inet', local: '10.200.3.4', prefixlen: 24, scope: 'global' }, { family: 'inet6', local: 'fe80::1', prefixlen: 64, scope: 'link' }] }]);
    const route = JSON.stringify([{ dst: 'default', gateway: '10.200.3.1', dev: 'eth0' }]);
    assert.deepEqual(parsePodLink(addr, route), { name: 'eth0', mac: '0a:58:00:00:00:01', mtu: 1500, ipv4: { address: '10.200.3.4', prefix: 24 }, hasIPv6: false, gateway: '10.200.3.1' });
    assert.equal(parsePodLink('[]', '[]'), undefined);
  });

  test("resolv.conf: IPv4 nameservers and the last search line", () => {
    assert.deepEqual(parseResolvConf('nameserver 10.0.0.10\nnameserver fd00::10\nsearch a b\nsearch ns.svc.cluster.local svc.cluster.local # x\noptions ndots:5\n'), {
      nameservers: ['10.0.0.10'],
      searchDomains: ['ns.svc.cluster.local', 'svc.cluster.local'],
    });
  });
});

describe('masquerade nftables rules', () => {
  const base = { family: 'ip' as const, podIface: 'eth0', bridge: 'k6t-eth0', guestIP: '10.0.2.2', gatewayIP: '10.0.2.1' };
  test('no ports listed: every port goes to the guest', () => {
    const text = renderRuleset([masqueradeRules({ ...base, ports: [] })]);
    assert.match(text, /chain KUBEVIRT_PREINBOUND \{\n {4}counter dnat to 10\.0\.2\.2\n/);
    assert.match(text, /type nat hook postrouting priority 100; policy accept;\n {4}ip saddr 10\.0\.2\.2 counter masquerade\n/);
  });
  test('listed ports only, by protocol', () => {
    const text = renderRuleset([masqueradeRules({ ...base, ports: [{ protocol: 'tcp', port: 80 }, { protocol: 'udp', port: 53 }] })]);
    assert.match(text, /tcp dport \{ 80 \} counter dnat to 10\.0\.2\.2/);
    assert.match(text, /udp dport \{ 53 \} counter dnat to 10\.0\.2\.2/);
    assert.doesNotMatch(text, /^ {4}counter dnat/m);
  });
  test('a token cannot carry a second statement', () => {
    assert.throws(() => renderRuleset([masqueradeRules({ ...base, podIface: 'eth0"; flush ruleset; "', ports: [] })]), RangeError);
  });
});

describe('DHCP packets', () => {
  const discover = (): Buffer => {
    const b = Buffer.alloc(244);
    b[0] = 1;
    b[1] = 1;
    b[2] = 6;
    b.writeUInt32BE(0xdeadbeef, 4);
    Buffer.from([0x52, 0x54, 0, 1, 2, 3]).copy(b, 28);
    b.writeUInt32BE(0x63825363, 236);
    Buffer.from([53, 1, MessageType.Discover, 255]).copy(b, 240);
    return b;
  };
  test('a DISCOVER is read and answered with an OFFER carrying the lease', () => {
    const req = parseDhcpRequest(discover());
    assert.equal(req?.messageType, MessageType.Discover);
    assert.equal(req?.xid, 0xdeadbeef);
    const lease = { clientMac: '52:54:00:01:02:03', clientIP: '10.0.2.2', prefix: 24, serverIP: '10.0.2.1', router: '10.0.2.1', dnsServers: ['10.200.1.53'], searchDomains: ['cluster.local'], mtu: 1450, hostname: 'testvm' };
    const reply = buildDhcpReply(req ?? assert.fail(), MessageType.Offer, '10.0.2.1', '10.0.2.2', leaseOptions(lease));
    assert.equal(reply[0], 2);
    assert.deepEqual([...reply.subarray(16, 20)], [10, 0, 2, 2]);
    assert.deepEqual([...reply.subarray(240, 249)], [53, 1, MessageType.Offer, 54, 4, 10, 0, 2, 1]);
    const text = reply.toString('latin1');
    assert.ok(text.includes('testvm'));
  });
  test('option encodings', () => {
    assert.equal(prefixToMask(24), '255.255.255.0');
    assert.equal(prefixToMask(0), '0.0.0.0');
    assert.deepEqual([...encodeSearchDomains(['a.bc'])], [1, 97, 2, 98, 99, 0]);
    assert.deepEqual([...encodeClasslessRoutes([{ dst: '0.0.0.0', prefix: 0, gateway: '10.0.2.1' }])], [0, 10, 0, 2, 1]);
    assert.equal(parseDhcpRequest(Buffer.alloc(100)), undefined);
  });
});

describe('interfaces in the domain XML', () => {
  const at: NicAttachment = { ifaceName: 'default', binding: 'masquerade', tap: 'tap0', mac: '52:54:00:aa:bb:cc', mtu: 1450, guestIP: '10.0.2.2', reportedIPs: ['10.200.1.5'], podInterfaceName: 'eth0' };
  const vmi = (iface: Record<string, unknown>): ReturnType<typeof baseVmi> =>
    ({ ...baseVmi({ volumes: [], networks: [{ name: 'default', pod: {} }] }, { devices: { interfaces: [{ name: 'default', masquerade: {}, ...iface }] } }) });
  test('an ethernet interface on the tap with model, MAC, MTU and alias; no option ROM', () => {
    const d = convertVmi(vmi({ model: 'e1000' }), context({ interfaces: new Map([['default', at]]) })).domain;
    const nics = findAll(d, 'devices/interface');
    assert.equal(nics.length, 1);
    assert.equal(nics[0]?.attrs['type'], 'ethernet');
    assert.equal(findElement(d, 'devices/interface/target')?.attrs['dev'], 'tap0');
    assert.equal(findElement(d, 'devices/interface/target')?.attrs['managed'], 'no');
    assert.equal(findElement(d, 'devices/interface/model')?.attrs['type'], 'e1000');
    assert.equal(findElement(d, 'devices/interface/mac')?.attrs['address'], '52:54:00:aa:bb:cc');
    assert.equal(findElement(d, 'devices/interface/mtu')?.attrs['size'], 1450);
    assert.equal(findElement(d, 'devices/interface/alias')?.attrs['name'], 'ua-default');
    assert.equal(findElement(d, 'devices/interface/rom')?.attrs['enabled'], 'no');
  });
  test('virtio is the non-transitional model; bootOrder and pciAddress are honoured', () => {
    const d = convertVmi(vmi({ bootOrder: 2, pciAddress: '0000:05:01.0' }), context({ interfaces: new Map([['default', at]]) })).domain;
    assert.equal(findElement(d, 'devices/interface/model')?.attrs['type'], 'virtio-non-transitional');
    assert.equal(findElement(d, 'devices/interface/boot')?.attrs['order'], 2);
    assert.equal(findElement(d, 'devices/interface/rom'), undefined);
    assert.deepEqual(findElement(d, 'devices/interface/address')?.attrs, { type: 'pci', domain: '0x0000', bus: '0x05', slot: '0x01', function: '0x0' });
  });
  test('an interface the network set-up did not wire is refused by its path', () => {
    assert.throws(() => convertVmi(vmi({}), context({ interfaces: new Map() })), (e: unknown) => e instanceof VmiInvalidError && e.field === 'spec.domain.devices.interfaces[0]');
  });
});
