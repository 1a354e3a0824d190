import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { masqueradeRules } from '../src/network/masquerade-rules.js';
import { derivedMac, NetworkPlanError, planNetwork, type PlanInput } from '../src/network/network-plan.js';
import { renderRuleset } from '../src/network/nft-ruleset.js';
import { parsePodLink } from '../src/network/pod-link.js';
import { parseResolvConf } from '../src/network/resolv-conf.js';


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
    assert.equal(plan.lease?.router, '10.0.2.1');
    assert.equal(plan.lease?.serverIP, '10.0.2.1');
    assert.equal(plan.lease?.mtu, 1450);
    const ips = plan.steps.filter((s) => s.kind === 'ip').map((s) => (s.kind === 'ip' ? s.args.join(' ') : ''));
    assert.ok(ips.includes('addr replace 10.0.2.1/24 dev k6t-eth0'));
    assert.ok(ips.includes('link set tap0 mtu 1450 master k6t-eth0 up'));
    assert.ok(!ips.some((s) => / eth0( |$)/.test(s.replace('k6t-eth0', ''))), 'nothing is done to eth0');
    const nft = plan.steps.find((s) => s.kind === 'nft');
    assert.match(nft?.kind === 'nft' ? nft.ruleset : '', /tcp dport \{ 8080 \} counter dnat to 10\.0\.2\.2/);
  });

  test('masquerade on a dual-stack pod: fd10:0:2::2 behind NAT66 as well, the pod IPv6 reported, DHCPv6 lease', () => {
    const dual = { ...input({ name: 'default', binding: 'masquerade', ports: [{ port: 8080 }] }), link: { ...link, hasIPv6: true, ipv6: { address: 'fd70:6f64:7669:1::5', prefix: 64 } } };
    const plan = planNetwork({ ...dual, resolver: { ...dual.resolver, nameservers6: ['fd70:6f64:7669:1::53'] } }, 0);
    assert.deepEqual(plan.attachment.reportedIPs, ['10.200.1.5', 'fd70:6f64:7669:1::5']);
    assert.equal(plan.attachment.guestIP, '10.0.2.2');
    assert.deepEqual(plan.lease6, { clientIP: 'fd10:0:2::2', prefix: 120, gateway: 'fd10:0:2::1', dnsServers: ['fd70:6f64:7669:1::53'], serverIface: 'k6t-eth0', serverMac: '02:00:00:00:00:00' });
    const ips = plan.steps.map((s) => (s.kind === 'ip' ? s.args.join(' ') : s.kind === 'sysctl' ? `${s.key}=${s.value}` : ''));
    assert.ok(ips.includes('-6 addr replace fd10:0:2::1/120 dev k6t-eth0 nodad'));
    assert.ok(ips.includes('net/ipv6/conf/all/forwarding=1'));
    assert.ok(ips.indexOf('net/ipv6/conf/k6t-eth0/disable_ipv6=0') < ips.indexOf('-6 addr replace fd10:0:2::1/120 dev k6t-eth0 nodad'));
    const nft = plan.steps.find((s) => s.kind === 'nft');
    const text = nft?.kind === 'nft' ? nft.ruleset : '';
    assert.match(text, /^table ip nat \{$/m);
    assert.match(text, /^table ip6 nat \{$/m);
    assert.match(text, /^ {4}ip6 saddr fd10:0:2::2 counter masquerade$/m);
    assert.match(text, /^ {4}tcp dport \{ 8080 \} counter dnat to fd10:0:2::2$/m);
  });

  test('masquerade on an IPv6-only pod: fd10:0:2::2 behind NAT66 alone, no IPv4 on the bridge, no DHCPv4', () => {
    const only6 = { ...input({ name: 'default', binding: 'masquerade', ports: [{ port: 8080 }] }), link: { name: 'eth0', mac: link.mac, mtu: 1450, hasIPv6: true, ipv6: { address: 'fd70:6f64:7669:1::5', prefix: 64 } } };
    const plan = planNetwork(only6, 0);
    assert.equal(plan.lease, undefined, 'no DHCPv4 server');
    assert.deepEqual(plan.lease6, { clientIP: 'fd10:0:2::2', prefix: 120, gateway: 'fd10:0:2::1', dnsServers: [], serverIface: 'k6t-eth0', serverMac: '02:00:00:00:00:00' });
    assert.deepEqual(plan.attachment.reportedIPs, ['fd70:6f64:7669:1::5']);
    assert.equal(plan.attachment.guestIP, 'fd10:0:2::2');
    const steps = plan.steps.map((s) => (s.kind === 'ip' ? s.args.join(' ') : s.kind === 'sysctl' ? `${s.key}=${s.value}` : ''));
    assert.ok(steps.includes('-6 addr replace fd10:0:2::1/120 dev k6t-eth0 nodad'));
    assert.ok(steps.includes('net/ipv6/conf/all/forwarding=1'));
    assert.ok(steps.includes('link set tap0 mtu 1450 master k6t-eth0 up'));
    assert.ok(!steps.some((s) => s.startsWith('net/ipv4') || /^(addr|route) /.test(s)), `no IPv4 step: ${steps.join('; ')}`);
    const nft = plan.steps.find((s) => s.kind === 'nft');
    const text = nft?.kind === 'nft' ? nft.ruleset : '';
    assert.match(text, /^table ip6 nat \{$/m);
    assert.doesNotMatch(text, /^table ip nat/m);
    assert.match(text, /^ {4}tcp dport \{ 8080 \} counter dnat to fd10:0:2::2$/m);
  });

  test('masquerade on a pod with no global address at all names the network', () => {
    const none = { ...input({ name: 'default', binding: 'masquerade' }), link: { name: 'eth0', mac: link.mac, mtu: 1500, hasIPv6: false } };
    assert.throws(() => planNetwork(none, 0), (e: unknown) => e instanceof NetworkPlanError && e.field === 'spec.networks' && /no global IPv4 or IPv6 address/.test(e.message));
  });

  test('masquerade on an IPv4-only pod has no IPv6 at all', () => {
    const plan = planNetwork(input({ name: 'default', binding: 'masquerade' }), 0);
    assert.equal(plan.lease6, undefined);
    assert.ok(!plan.steps.some((s) => (s.kind === 'ip' && s.args.includes('-6')) || (s.kind === 'sysctl' && s.key.startsWith('net/ipv6')) || (s.kind === 'nft' && s.ruleset.includes('ip6'))));
  });

  test('masquerade honours vmNetworkCIDR and refuses one without room', () => {
    const plan = planNetwork({ ...input({ name: 'default', binding: 'masquerade' }), vmNetworkCIDR: '10.11.0.0/24' }, 0);
    assert.equal(plan.attachment.guestIP, '10.11.0.2');
    assert.throws(() => planNetwork({ ...input({ name: 'default', binding: 'masquerade' }), vmNetworkCIDR: '10.11.0.0/31' }, 0), NetworkPlanError);
  });

  test('bridge: the guest takes the pod IP and MAC; the pod link is renamed and enslaved', () => {
    const plan = planNetwork(input({ name: 'default', binding: 'bridge' }), 0);
    assert.equal(plan.attachment.mac, link.mac);
    assert.equal(plan.lease?.clientIP, '10.200.1.5');
    assert.equal(plan.lease?.router, '10.200.1.1');
    assert.equal(plan.lease?.prefix, 24);
    const ips = plan.steps.map((s) => (s.kind === 'ip' ? s.args.join(' ') : ''));
    assert.ok(ips.some((s) => /^link set eth0 name eth0-nic address 02:00:00:/.test(s)));
    assert.ok(ips.includes('addr flush dev eth0'));
    assert.ok(ips.includes('link set eth0-nic type bridge_slave learning off'), 'the pod link never learns the guest MAC');
    assert.equal(plan.steps.some((s) => s.kind === 'nft'), false);
  });

  test('bridge on a pod without IPv4 names the field', () => {
    const noV4 = { ...input({ name: 'default', binding: 'bridge' }), link: { name: 'eth0', mac: link.mac, mtu: 1500, hasIPv6: true, ipv6: { address: 'fd70:6f64:7669:1::5', prefix: 64 } } };
    assert.throws(() => planNetwork(noV4, 2), (e: unknown) => e instanceof NetworkPlanError && e.field === 'spec.domain.devices.interfaces[2].bridge');
  });

  test('the pod link is read from ip -j output', () => {
    const addr = JSON.stringify([{ ifname: 'eth0', mtu: 1500, address: '0A:58:00:00:00:01', addr_info: [{ family: 'inet', local: '10.200.3.4', prefixlen: 24, scope: 'global' }, { family: 'inet6', local: 'fe80::1', prefixlen: 64, scope: 'link' }] }]);
    const route = JSON.stringify([{ dst: 'default', gateway: '10.200.3.1', dev: 'eth0' }]);
    assert.deepEqual(parsePodLink(addr, route), { name: 'eth0', mac: '0a:58:00:00:00:01', mtu: 1500, ipv4: { address: '10.200.3.4', prefix: 24 }, hasIPv6: false, gateway: '10.200.3.1' });
    const dual = JSON.stringify([{ ifname: 'eth0', mtu: 1500, address: '0a:58:00:00:00:01', addr_info: [{ family: 'inet', local: '10.200.3.4', prefixlen: 24, scope: 'global' }, { family: 'inet6', local: 'fd70:6f64:7669:3::4', prefixlen: 64, scope: 'global' }, { family: 'inet6', local: 'fe80::1', prefixlen: 64, scope: 'link' }] }]);
    assert.deepEqual(parsePodLink(dual, route)?.ipv6, { address: 'fd70:6f64:7669:3::4', prefix: 64 });
    assert.equal(parsePodLink('[]', '[]'), undefined);
  });

  test("resolv.conf: nameservers by family and the last search line", () => {
    assert.deepEqual(parseResolvConf('nameserver 10.0.0.10\nnameserver FD00::10\nsearch a b\nsearch ns.svc.cluster.local svc.cluster.local # x\noptions ndots:5\n'), {
      nameservers: ['10.0.0.10'],
      nameservers6: ['fd00::10'],
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
  test('ip6: the same chains in an ip6 table, the guest behind NAT66, loopback as ::1', () => {
    const text = renderRuleset([masqueradeRules({ family: 'ip6', podIface: 'eth0', bridge: 'k6t-eth0', guestIP: 'fd10:0:2::2', gatewayIP: 'fd10:0:2::1', ports: [] })]);
    assert.match(text, /^table ip6 nat\ndelete table ip6 nat\ntable ip6 nat \{$/m);
    assert.match(text, /^ {4}iifname "eth0" counter jump KUBEVIRT_PREINBOUND$/m);
    assert.match(text, /chain KUBEVIRT_PREINBOUND \{\n {4}counter dnat to fd10:0:2::2\n/);
    assert.match(text, /^ {4}ip6 saddr fd10:0:2::2 counter masquerade$/m);
    assert.match(text, /^ {4}ip6 saddr \{ ::1 \} counter snat to fd10:0:2::1$/m);
    assert.match(text, /^ {4}ip6 daddr \{ ::1 \} counter dnat to fd10:0:2::2$/m);
    assert.doesNotMatch(text, /\bip (s|d)addr/);
  });
  test('a token cannot carry a second statement', () => {
    assert.throws(() => renderRuleset([masqueradeRules({ ...base, podIface: 'eth0"; flush ruleset; "', ports: [] })]), { code: 'HANDLER_ERR_POD_NETWORK' });
  });
});
