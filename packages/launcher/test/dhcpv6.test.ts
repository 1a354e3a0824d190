import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { describe, test } from 'node:test';
import { pino } from 'pino';
import { Dhcpv6Option, Dhcpv6Type, encodeDhcpv6, findOption, ipv6Bytes, option, parseDhcpv6 } from '../src/network/dhcpv6-packet.js';
import { dhcpv6Reply, Dhcpv6Server } from '../src/network/dhcpv6-server.js';

const lease = { clientIP: 'fd10:0:2::2', prefix: 120, gateway: 'fd10:0:2::1', dnsServers: ['fd00::10'], serverIface: 'lo', serverMac: '02:00:00:00:00:00' };
const clientId = Buffer.from('000300015254000a0b0c', 'hex');
const iaid = Buffer.from('0000abcd', 'hex');
const solicit = (extra: Array<readonly [number, Buffer]> = []): Buffer =>
  encodeDhcpv6({ type: Dhcpv6Type.Solicit, transactionId: 0x123456, options: [[Dhcpv6Option.ClientId, clientId], [Dhcpv6Option.IaNa, Buffer.concat([iaid, Buffer.alloc(8)])], ...extra] });

/** The IA_NA's IAID and its one address with lifetimes. */
function iaAddress(ia: Buffer | undefined): { iaid: string; address: string; preferred: number; valid: number } | undefined {
  if (ia === undefined) return undefined;
  const inner = parseDhcpv6(Buffer.concat([Buffer.alloc(4), ia.subarray(12)]));
  const addr = inner === undefined ? undefined : findOption(inner, Dhcpv6Option.IaAddr);
  if (addr === undefined) return undefined;
  return { iaid: ia.subarray(0, 4).toString('hex'), address: addr.subarray(0, 16).toString('hex'), preferred: addr.readUInt32BE(16), valid: addr.readUInt32BE(20) };
}

describe('DHCPv6 codec', () => {
  test('IPv6 addresses to bytes, :: expanded; garbage refused', () => {
    assert.equal(ipv6Bytes('fd10:0:2::2').toString('hex'), 'fd100000000200000000000000000002');
    assert.equal(ipv6Bytes('::1').toString('hex'), '00000000000000000000000000000001');
    assert.equal(ipv6Bytes('1:2:3:4:5:6:7:8').toString('hex'), '00010002000300040005000600070008');
    assert.throws(() => ipv6Bytes('10.0.2.2'), { code: 'LAUNCHER_ERR_PREPARE' });
    assert.throws(() => ipv6Bytes('1::2::3'), { code: 'LAUNCHER_ERR_PREPARE' });
  });

  test('a message round-trips; truncated options are refused', () => {
    const bytes = solicit();
    const m = parseDhcpv6(bytes);
    assert.equal(m?.type, Dhcpv6Type.Solicit);
    assert.equal(m?.transactionId, 0x123456);
    assert.deepEqual(m === undefined ? undefined : findOption(m, Dhcpv6Option.ClientId), clientId);
    assert.equal(parseDhcpv6(bytes.subarray(0, bytes.length - 1)), undefined);
    assert.equal(parseDhcpv6(Buffer.from([1, 0, 0])), undefined);
    assert.deepEqual(option(23, Buffer.alloc(0)), Buffer.from([0, 23, 0, 0]));
  });
});

describe('DHCPv6 answers', () => {
  test('Solicit → Advertise with the client id, a DUID-LL, the IA_NA (client IAID, infinite) and DNS', () => {
    const reply = dhcpv6Reply(parseDhcpv6(solicit()) ?? assert.fail(), lease, '02:00:00:00:00:00');
    assert.equal(reply?.type, Dhcpv6Type.Advertise);
    assert.equal(reply?.transactionId, 0x123456);
    assert.deepEqual(reply === undefined ? undefined : findOption(reply, Dhcpv6Option.ClientId), clientId);
    assert.equal(reply === undefined ? '' : findOption(reply, Dhcpv6Option.ServerId)?.toString('hex'), '00030001020000000000');
    assert.deepEqual(iaAddress(reply === undefined ? undefined : findOption(reply, Dhcpv6Option.IaNa)), { iaid: '0000abcd', address: 'fd100000000200000000000000000002', preferred: 0xffffffff, valid: 0xffffffff });
    assert.equal(reply === undefined ? '' : findOption(reply, Dhcpv6Option.DnsServers)?.toString('hex'), 'fd000000000000000000000000000010');
  });

  test('rapid commit: Solicit → Reply carrying rapid commit; Request → Reply; no DNS option without servers', () => {
    const rapid = dhcpv6Reply(parseDhcpv6(solicit([[Dhcpv6Option.RapidCommit, Buffer.alloc(0)]])) ?? assert.fail(), { ...lease, dnsServers: [] }, '02:00:00:00:00:00');
    assert.equal(rapid?.type, Dhcpv6Type.Reply);
    assert.ok(rapid !== undefined && findOption(rapid, Dhcpv6Option.RapidCommit) !== undefined);
    assert.equal(rapid === undefined ? 'x' : findOption(rapid, Dhcpv6Option.DnsServers), undefined);
    const req = parseDhcpv6(solicit()) ?? assert.fail();
    assert.equal(dhcpv6Reply({ ...req, type: Dhcpv6Type.Request }, lease, '02:00:00:00:00:00')?.type, Dhcpv6Type.Reply);
  });

  test('server messages and messages without a client id get no answer', () => {
    const req = parseDhcpv6(solicit()) ?? assert.fail();
    assert.equal(dhcpv6Reply({ ...req, type: Dhcpv6Type.Advertise }, lease, '02:00:00:00:00:00'), undefined);
    assert.equal(dhcpv6Reply({ ...req, options: req.options.filter(([c]) => c !== Dhcpv6Option.ClientId) }, lease, '02:00:00:00:00:00'), undefined);
  });

  test('the server answers over a real UDP socket and stops cleanly', async () => {
    const server = await Dhcpv6Server.start({ lease, iface: 'lo', serverMac: '02:00:00:00:00:00', log: pino({ level: 'silent' }), port: 0, group: 'ff01::1:2' }).catch((err: unknown) => err as Error);
    assert.ok(!(server instanceof Error), String(server));
    const port = server.port;
    const client = createSocket('udp6');
    try {
      const answer = new Promise<Buffer>((resolve) => client.once('message', resolve));
      client.send(solicit(), port, '::1');
      const reply = parseDhcpv6(await answer);
      assert.equal(reply?.type, Dhcpv6Type.Advertise);
    } finally {
      client.close();
      await server.close();
    }
  });
});
