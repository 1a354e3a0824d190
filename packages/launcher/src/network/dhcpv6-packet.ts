// DHCPv6 messages (RFC 8415) as the launcher's single-client server reads and writes them:
// a 4-byte header (type, transaction id) and options as code/length/value.

import { LauncherError } from '../errors.js';

export const Dhcpv6Type = { Solicit: 1, Advertise: 2, Request: 3, Confirm: 4, Renew: 5, Rebind: 6, Reply: 7, Release: 8, InformationRequest: 11 } as const;

export const Dhcpv6Option = { ClientId: 1, ServerId: 2, IaNa: 3, IaAddr: 5, RapidCommit: 14, DnsServers: 23 } as const;

export interface Dhcpv6Message {
  readonly type: number;
  /** 24 bits. */
  readonly transactionId: number;
  readonly options: ReadonlyArray<readonly [number, Buffer]>;
}

/** Undefined for anything too short or with an option running past the end. */
export function parseDhcpv6(packet: Buffer): Dhcpv6Message | undefined {
  if (packet.length < 4) return undefined;
  const options: Array<readonly [number, Buffer]> = [];
  for (let i = 4; i < packet.length; ) {
    if (i + 4 > packet.length) return undefined;
    const code = packet.readUInt16BE(i);
    const len = packet.readUInt16BE(i + 2);
    if (i + 4 + len > packet.length) return undefined;
    options.push([code, packet.subarray(i + 4, i + 4 + len)]);
    i += 4 + len;
  }
  return { type: packet[0] ?? 0, transactionId: packet.readUIntBE(1, 3), options };
}

export function encodeDhcpv6(m: Dhcpv6Message): Buffer {
  const head = Buffer.alloc(4);
  head[0] = m.type;
  head.writeUIntBE(m.transactionId & 0xffffff, 1, 3);
  return Buffer.concat([head, ...m.options.map(([code, value]) => option(code, value))]);
}

export function option(code: number, value: Buffer): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt16BE(code);
  b.writeUInt16BE(value.length, 2);
  return Buffer.concat([b, value]);
}

export function findOption(m: Dhcpv6Message, code: number): Buffer | undefined {
  return m.options.find(([c]) => c === code)?.[1];
}

/** 16 bytes of an IPv6 address in any textual form `::` compresses (no embedded IPv4). */
export function ipv6Bytes(address: string): Buffer {
  const halves = address.split('::');
  if (halves.length > 2) throw new LauncherError('LAUNCHER_ERR_PREPARE', `${JSON.stringify(address)} is not an IPv6 address`);
  const [head = '', tail] = halves;
  const groups = (s: string): string[] => (s === '' ? [] : s.split(':'));
  const h = groups(head);
  const t = tail === undefined ? [] : groups(tail);
  const all = tail === undefined ? h : [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
  if (all.length !== 8 || all.some((g) => !/^[0-9a-fA-F]{1,4}$/.test(g))) throw new LauncherError('LAUNCHER_ERR_PREPARE', `${JSON.stringify(address)} is not an IPv6 address`);
  const b = Buffer.alloc(16);
  all.forEach((g, i) => b.writeUInt16BE(parseInt(g, 16), i * 2));
  return b;
}

/** DUID-LL (type 3) of an Ethernet MAC: the server identifier KubeVirt's server uses. */
export function duidLL(mac: string): Buffer {
  return Buffer.concat([Buffer.from([0, 3, 0, 1]), Buffer.from(mac.split(':').map((x) => parseInt(x, 16)))]);
}

/** IA_NA holding one address with the given lifetimes (T1/T2 0: the client picks). */
export function iaNa(iaid: Buffer, address: string, lifetime: number): Buffer {
  const addr = Buffer.alloc(24);
  ipv6Bytes(address).copy(addr, 0);
  addr.writeUInt32BE(lifetime >>> 0, 16);
  addr.writeUInt32BE(lifetime >>> 0, 20);
  return Buffer.concat([iaid, Buffer.alloc(8), option(Dhcpv6Option.IaAddr, addr)]);
}
