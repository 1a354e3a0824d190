import { createSocket, type Socket } from 'node:dgram';
import type { DhcpLease } from '@podvirt/api';
import type { Logger } from 'pino';
import { closeSocket } from './close-socket.js';
import {
  buildDhcpReply,
  encodeClasslessRoutes,
  encodeSearchDomains,
  ipv4Bytes,
  MessageType,
  Option,
  parseDhcpRequest,
  prefixToMask,
} from './dhcp-packet.js';

const INFINITE_LEASE = 0xffffffff;

/** The options KubeVirt's server sends, in its order. */
export function leaseOptions(lease: DhcpLease): Array<readonly [number, Buffer]> {
  const u32 = (n: number): Buffer => {
    const b = Buffer.alloc(4);
    b.writeUInt32BE(n);
    return b;
  };
  const mtu = Buffer.alloc(2);
  mtu.writeUInt16BE(lease.mtu);
  const opts: Array<readonly [number, Buffer]> = [
    [Option.LeaseTime, u32(INFINITE_LEASE)],
    [Option.SubnetMask, ipv4Bytes(prefixToMask(lease.prefix))],
    [Option.DomainNameServer, Buffer.concat(lease.dnsServers.map(ipv4Bytes))],
    [Option.InterfaceMtu, mtu],
    [Option.HostName, Buffer.from(lease.hostname, 'ascii')],
  ];
  if (lease.router !== undefined) {
    opts.push([Option.Router, ipv4Bytes(lease.router)]);
    // A client that understands option 121 ignores option 3, so the default route goes in too.
    const routes = [...(lease.routes ?? []), { dst: '0.0.0.0', prefix: 0, gateway: lease.router }];
    opts.push([Option.ClasslessRoute, encodeClasslessRoutes(routes)]);
  }
  if (lease.searchDomains.length > 0) {
    opts.push([Option.DomainSearch, encodeSearchDomains(lease.searchDomains)]);
    opts.push([Option.DomainName, Buffer.from(lease.searchDomains[0] ?? '', 'ascii')]);
  }
  return opts;
}

/**
 * A single-client DHCPv4 server: it answers DISCOVER with OFFER and REQUEST with ACK for the
 * one MAC it serves, with an infinite lease; everything else is ignored. Replies are broadcast
 * (the client has no address yet); the pod network set-up routes 255.255.255.255 to the in-pod
 * bridge so that they leave through it.
 */
export class DhcpServer {
  readonly #socket: Socket;
  readonly #lease: DhcpLease;
  readonly #log: Logger;
  readonly #options: Array<readonly [number, Buffer]>;
  #closing: Promise<void> | undefined;

  private constructor(socket: Socket, lease: DhcpLease, log: Logger) {
    this.#socket = socket;
    this.#lease = lease;
    this.#log = log;
    this.#options = leaseOptions(lease);
  }

  static async start(lease: DhcpLease, log: Logger, port = 67, replyPort = 68): Promise<DhcpServer> {
    const socket = createSocket({ type: 'udp4', reuseAddr: true });
    const server = new DhcpServer(socket, lease, log.child({ subcomponent: 'dhcp', mac: lease.clientMac }));
    socket.on('message', (msg) => server.#onMessage(msg, replyPort));
    socket.on('error', (err) => server.#log.warn({ err }, 'dhcp socket error'));
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.bind(port, '0.0.0.0', () => {
        socket.off('error', reject);
        socket.setBroadcast(true);
        resolve();
      });
    });
    server.#log.info({ ip: lease.clientIP }, 'dhcp server listening');
    return server;
  }

  #onMessage(msg: Buffer, replyPort: number): void {
    const req = parseDhcpRequest(msg);
    if (req === undefined) return;
    const mac = [...req.chaddr].map((b) => b.toString(16).padStart(2, '0')).join(':');
    if (mac !== this.#lease.clientMac.toLowerCase()) return;
    const type = req.messageType === MessageType.Discover ? MessageType.Offer : req.messageType === MessageType.Request ? MessageType.Ack : undefined;
    if (type === undefined) return;
    const reply = buildDhcpReply(req, type, this.#lease.serverIP, this.#lease.clientIP, this.#options);
    this.#socket.send(reply, replyPort, '255.255.255.255', (err) => {
      if (err) this.#log.warn({ err }, 'dhcp reply failed');
      else if (type === MessageType.Ack) this.#log.info({ ip: this.#lease.clientIP }, 'dhcp lease acknowledged');
    });
  }

  close(): Promise<void> {
    this.#closing ??= closeSocket(this.#socket);
    return this.#closing;
  }
}
