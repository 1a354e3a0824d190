import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { podNetworkConfig } from './cni-config.js';
import { podIPFamilies } from './pod-network.js';
import { ipv6Range, stackNetwork, subnetCandidate } from './stack-network.js';

describe('stack network names', () => {
  test('two stacks get different bridges, namespace prefixes and state dirs', () => {
    const a = stackNetwork('/tmp/stack-a/kubelet');
    const b = stackNetwork('/tmp/stack-b/kubelet');
    assert.notEqual(a.bridge, b.bridge);
    assert.notEqual(a.netnsPrefix, b.netnsPrefix);
    assert.notEqual(a.ipamDir, b.ipamDir);
    assert.ok(a.bridge.length <= 15, 'a Linux interface name has at most 15 characters');
    assert.equal(a.ipamDir, '/tmp/stack-a/kubelet/cni/ipam');
  });

  test('subnets stay inside 10.200.0.0/13 and the next candidate differs', () => {
    for (const id of ['00000000', 'ffffffff', '7fff0000', '07ff1234']) {
      for (const attempt of [0, 1, 2047]) {
        const { subnet, gateway } = subnetCandidate(id, attempt);
        assert.match(subnet, /^10\.20[0-7]\.\d{1,3}\.0\/24$/);
        assert.equal(gateway, subnet.replace('.0/24', '.1'));
      }
      assert.notEqual(subnetCandidate(id, 0).subnet, subnetCandidate(id, 1).subnet);
    }
    // The pool wraps around instead of leaving 10.200.0.0/13.
    assert.equal(subnetCandidate('07ff0000', 1).subnet, '10.200.0.0/24');
  });

  test('the conflist keeps the host out of routing: no gateway mode, no masquerading', () => {
    const list = podNetworkConfig({ name: 'n', bridge: 'br', subnet: '10.200.1.0/24', gateway: '10.200.1.1', ipamDir: '/x' });
    assert.equal(list.cniVersion, '1.0.0');
    assert.deepEqual(list.plugins.map((p) => [p.type, p['isGateway'], p['ipMasq']]), [['bridge', false, false]]);
    assert.deepEqual((list.plugins[0]?.['ipam'] as { dataDir: string }).dataDir, '/x');
  });

  test('dual-stack: the /64 follows the /24, so a claimed /24 settles the /64 too', () => {
    assert.deepEqual(ipv6Range('10.200.0.0/24'), { subnet: 'fd70:6f64:7669::/64', gateway: 'fd70:6f64:7669::1' });
    assert.deepEqual(ipv6Range('10.207.255.0/24'), { subnet: 'fd70:6f64:7669:7ff::/64', gateway: 'fd70:6f64:7669:7ff::1' });
    const list = podNetworkConfig({ name: 'n', bridge: 'br', subnet: '10.200.1.0/24', gateway: '10.200.1.1', ipamDir: '/x', ipv6: ipv6Range('10.200.1.0/24') });
    const ipam = list.plugins[0]?.['ipam'] as { ranges: unknown; routes: unknown };
    assert.deepEqual(ipam.ranges, [[{ subnet: '10.200.1.0/24', gateway: '10.200.1.1' }], [{ subnet: 'fd70:6f64:7669:1::/64', gateway: 'fd70:6f64:7669:1::1' }]]);
    assert.deepEqual(ipam.routes, [{ dst: '0.0.0.0/0' }, { dst: '::/0' }]);
    assert.deepEqual(list.plugins.map((p) => [p['isGateway'], p['ipMasq']]), [[false, false]]);
  });

  test('IPv6-only: the /64 alone, with the IPv6 default route', () => {
    const list = podNetworkConfig({ name: 'n', bridge: 'br', subnet: '10.200.1.0/24', gateway: '10.200.1.1', ipamDir: '/x', ipv6: ipv6Range('10.200.1.0/24'), ipv4: false });
    const ipam = list.plugins[0]?.['ipam'] as { ranges: unknown; routes: unknown };
    assert.deepEqual(ipam.ranges, [[{ subnet: 'fd70:6f64:7669:1::/64', gateway: 'fd70:6f64:7669:1::1' }]]);
    assert.deepEqual(ipam.routes, [{ dst: '::/0' }]);
    // Without an IPv6 range there is no such thing as leaving IPv4 out.
    const v4 = podNetworkConfig({ name: 'n', bridge: 'br', subnet: '10.200.1.0/24', gateway: '10.200.1.1', ipamDir: '/x', ipv4: false });
    assert.deepEqual((v4.plugins[0]?.['ipam'] as { ranges: unknown }).ranges, [[{ subnet: '10.200.1.0/24', gateway: '10.200.1.1' }]]);
  });

  test('PODVIRT_TESTBED_IPV6: 1 is dual-stack, only is IPv6 only, unset is IPv4; anything else is an error naming it', () => {
    assert.equal(podIPFamilies(undefined), 'ipv4');
    assert.equal(podIPFamilies(''), 'ipv4');
    assert.equal(podIPFamilies('1'), 'dual');
    assert.equal(podIPFamilies(true), 'dual');
    assert.equal(podIPFamilies('only'), 'ipv6');
    assert.throws(() => podIPFamilies('yes'), /PODVIRT_TESTBED_IPV6=yes: expected 1 \(dual-stack\) or only \(IPv6 only\)/);
  });
});
