import { createSocket, type Socket } from 'node:dgram';
import type { DhcpV6Lease } from '@podvirt/api';
import type { Logger } from 'pino';
import { closeSocket } from './close-socket.js';
import { duidLL, Dhcpv6Option, Dhcpv6Type, encodeDhcpv6, findOption, iaNa, ipv6Bytes, parseDhcpv6, type Dhcpv6Message } from './dhcpv6-packet.js';

/** All DHCPv6 relay agents and servers, on the link (RFC 8415 §7.1). */
export const ALL_DHCP_SERVERS = 'ff02::1:2';
const INFINITE = 0xffffffff;

/**
 * The answer to one client message, as KubeVirt's single-client DHCPv6 server gives it: Solicit
 * gets Advertise (Reply when the client asked for rapid commit), every other message a Reply;
 * each carries the client's id, the server's DUID-LL, one IA_NA (the client's IAID) with the
 * guest's address and infinite lifetimes, and the DNS servers when there are any. Undefined for
 * what is not a client message with a client id.
 */
export function dhcpv6Reply(req: Dhcpv6Message, lease: DhcpV6Lease, serverMac: string): Dhcpv6Message | undefined {
  const clientId = findOption(req, Dhcpv6Option.ClientId);
  const clientTypes: number[] = [Dhcpv6Type.Solicit, Dhcpv6Type.Request, Dhcpv6Type.Confirm, Dhcpv6Type.Renew, Dhcpv6Type.Rebind, Dhcpv6Type.Release, Dhcpv6Type.InformationRequest];
  if (clientId === undefined || !clientTypes.includes(req.type)) return undefined;
  const rapid = req.type === Dhcpv6Type.Solicit && findOption(req, Dhcpv6Option.RapidCommit) !== undefined;
  const type = req.type === Dhcpv6Type.Solicit && !rapid ? Dhcpv6Type.Advertise : Dhcpv6Type.Reply;
  const iaid = findOption(req, Dhcpv6Option.IaNa)?.subarray(0, 4) ?? Buffer.alloc(4);
  const options: Array<readonly [number, Buffer]> = [
    [Dhcpv6Option.ClientId, clientId],
    [Dhcpv6Option.ServerId, duidLL(serverMac)],
    [Dhcpv6Option.IaNa, iaNa(Buffer.from(iaid), lease.clientIP, INFINITE)],
  ];
  if (rapid) options.push([Dhcpv6Option.RapidCommit, Buffer.alloc(0)]);
  if (lease.dnsServers.length > 0) options.push([Dhcpv6Option.DnsServers, Buffer.concat(lease.dnsServers.map(ipv6Bytes))]);
  return { type, transactionId: req.transactionId, options };
}

/**
 * A single-client DHCPv6 server on UDP 547 of the in-pod bridge: it joins ff02::1:2 there and
 * answers each client message to the sender's link-local address. The guest's default route is
 * not DHCPv6's to give (KubeVirt sends no router advertisements either): the guest sets it
 * through the lease's gateway.
 */
export class Dhcpv6Server {
  readonly #socket: Socket;
  readonly #lease: DhcpV6Lease;
  readonly #serverMac: string;
  readonly #log: Logger;
  #closing: Promise<void> | undefined;

  private constructor(socket: Socket, lease: DhcpV6Lease, serverMac: string, log: Logger) {
    this.#socket = socket;
    this.#lease = lease;
    this.#serverMac = serverMac;
    this.#log = log;
  }

  static async start(opts: { lease: DhcpV6Lease; iface: string; serverMac: string; log: Logger; port?: number; group?: string }): Promise<Dhcpv6Server> {
    const socket = createSocket({ type: 'udp6', reuseAddr: true });
    const server = new Dhcpv6Server(socket, opts.lease, opts.serverMac, opts.log.child({ subcomponent: 'dhcpv6', iface: opts.iface }));
    socket.on('message', (msg, rinfo) => server.#onMessage(msg, rinfo.address, rinfo.port, opts.iface));
    socket.on('error', (err) => server.#log.warn({ err }, 'dhcpv6 socket error'));
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.bind(opts.port ?? 547, '::', () => {
        socket.off('error', reject);
        resolve();
      });
    });
    try {
      socket.addMembership(opts.group ?? ALL_DHCP_SERVERS, `::%${opts.iface}`);
    } catch (err) {
      socket.close();
      throw err;
    }
    server.#log.info({ ip: opts.lease.clientIP }, 'dhcpv6 server listening');
    return server;
  }

  #onMessage(msg: Buffer, address: string, port: number, iface: string): void {
    const req = parseDhcpv6(msg);
    const reply = req === undefined ? undefined : dhcpv6Reply(req, this.#lease, this.#serverMac);
    if (reply === undefined) return;
    // A link-local sender needs its scope; Node gives it in the address only sometimes.
    const to = address.toLowerCase().startsWith('fe80:') && !address.includes('%') ? `${address}%${iface}` : address;
    this.#socket.send(encodeDhcpv6(reply), port, to, (err) => {
      if (err) this.#log.warn({ err, to }, 'dhcpv6 reply failed');
      else if (reply.type === Dhcpv6Type.Reply) this.#log.info({ ip: this.#lease.clientIP }, 'dhcpv6 reply sent');
    });
  }

  /** The UDP port it listens on (547 unless told otherwise). */
  get port(): number {
    return this.#socket.address().port;
  }

  close(): Promise<void> {
    this.#closing ??= closeSocket(this.#socket);
    return this.#closing;
  }
}
