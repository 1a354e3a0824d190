// DHCPv4 messages (RFC 2131/2132) as the launcher's single-client server reads and writes them.

import { LauncherError } from '../errors.js';

export const DHCP_MAGIC = 0x63825363;
export const BOOTREQUEST = 1;
export const BOOTREPLY = 2;

export const MessageType = { Discover: 1, Offer: 2, Request: 3, Decline: 4, Ack: 5, Nak: 6, Release: 7, Inform: 8 } as const;

export const Option = {
  SubnetMask: 1,
  Router: 3,
  DomainNameServer: 6,
  HostName: 12,
  DomainName: 15,
  BroadcastAddress: 28,
  LeaseTime: 51,
  MessageType: 53,
  ServerIdentifier: 54,
  InterfaceMtu: 26,
  DomainSearch: 119,
  ClasslessRoute: 121,
  End: 255,
  Pad: 0,
} as const;

export interface DhcpRequest {
  readonly op: number;
  readonly xid: number;
  readonly flags: number;
  readonly chaddr: Buffer;
  readonly messageType: number | undefined;
}

/** Undefined for anything that is not a well-formed BOOTREQUEST with the DHCP cookie. */
export function parseDhcpRequest(packet: Buffer): DhcpRequest | undefined {
  if (packet.length < 240 || packet[0] !== BOOTREQUEST || packet.readUInt32BE(236) !== DHCP_MAGIC) return undefined;
  const hlen = packet[2] ?? 0;
  if (hlen !== 6) return undefined;
  let messageType: number | undefined;
  for (let i = 240; i < packet.length; ) {
    const code = packet[i] ?? Option.End;
    if (code === Option.End) break;
    if (code === Option.Pad) {
      i += 1;
      continue;
    }
    const len = packet[i + 1] ?? 0;
    if (code === Option.MessageType && len === 1) messageType = packet[i + 2];
    i += 2 + len;
  }
  return { op: BOOTREQUEST, xid: packet.readUInt32BE(4), flags: packet.readUInt16BE(10), chaddr: Buffer.from(packet.subarray(28, 34)), messageType };
}

/** A BOOTREPLY to `req` offering `yourIP`, with the options in order (message type first). */
export function buildDhcpReply(req: DhcpRequest, type: number, serverIP: string, yourIP: string, options: ReadonlyArray<readonly [number, Buffer]>): Buffer {
  const head = Buffer.alloc(240);
  head[0] = BOOTREPLY;
  head[1] = 1; // Ethernet
  head[2] = 6;
  head.writeUInt32BE(req.xid, 4);
  head.writeUInt16BE(req.flags, 10);
  ipv4Bytes(yourIP).copy(head, 16);
  ipv4Bytes(serverIP).copy(head, 20);
  req.chaddr.copy(head, 28);
  head.writeUInt32BE(DHCP_MAGIC, 236);
  const opts: Buffer[] = [option(Option.MessageType, Buffer.from([type])), option(Option.ServerIdentifier, ipv4Bytes(serverIP))];
  for (const [code, value] of options) opts.push(option(code, value));
  opts.push(Buffer.from([Option.End]));
  return Buffer.concat([head, ...opts]);
}

function option(code: number, value: Buffer): Buffer {
  if (value.length > 255) throw new LauncherError('LAUNCHER_ERR_PREPARE', `DHCP option ${code} is ${value.length} bytes; at most 255 fit`);
  return Buffer.concat([Buffer.from([code, value.length]), value]);
}

export function ipv4Bytes(ip: string): Buffer {
  const parts = ip.split('.').map(Number);
  if (parts.length !== 4 || parts.some((p) => !Number.isInteger(p) || p < 0 || p > 255)) throw new LauncherError('LAUNCHER_ERR_PREPARE', `not an IPv4 address: ${ip}`);
  return Buffer.from(parts);
}

export function prefixToMask(prefix: number): string {
  const bits = prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
  return [24, 16, 8, 0].map((s) => (bits >>> s) & 255).join('.');
}

/** RFC 1035 label encoding of the search list (no compression), as option 119 carries it. */
export function encodeSearchDomains(domains: readonly string[]): Buffer {
  const parts: Buffer[] = [];
  for (const domain of domains) {
    for (const label of domain.replace(/\.$/, '').split('.')) {
      if (label.length === 0 || label.length > 63) throw new LauncherError('LAUNCHER_ERR_PREPARE', `search domain ${JSON.stringify(domain)} has an empty or too long label`);
      parts.push(Buffer.from([label.length]), Buffer.from(label, 'ascii'));
    }
    parts.push(Buffer.from([0]));
  }
  return Buffer.concat(parts);
}

/** RFC 3442 classless static routes: width, significant destination octets, gateway. */
export function encodeClasslessRoutes(routes: ReadonlyArray<{ dst: string; prefix: number; gateway: string }>): Buffer {
  return Buffer.concat(routes.map((r) => Buffer.concat([Buffer.from([r.prefix]), ipv4Bytes(r.dst).subarray(0, Math.ceil(r.prefix / 8)), ipv4Bytes(r.gateway)])));
}
