import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { VmiInvalidError, type NicAttachment } from '@podvirt/api';
import { convertVmi } from '../src/convert/convert-vmi.js';
import { findAll, findElement } from '../src/convert/xml.js';
import { buildDhcpReply, encodeClasslessRoutes, encodeSearchDomains, MessageType, parseDhcpRequest, prefixToMask } from '../src/network/dhcp-packet.js';
import { leaseOptions } from '../src/network/dhcp-server.js';
import { baseVmi, context } from './vmi-fixture.js';

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
