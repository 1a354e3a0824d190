import { connect } from 'node:net';

/**
 * What a TCP server at ip:port sends before it closes the connection; with `payload`, that is
 * sent first and the sending side closed (the guest's sink on port 9000 then says how much
 * arrived). Used only with addresses inside a testbed's own bridge and pod namespaces.
 */
export function readTcp(ip: string, port: number, timeoutMs = 5_000, payload?: Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: ip, port, timeout: timeoutMs });
    if (payload !== undefined) socket.on('connect', () => socket.end(payload));
    let data = '';
    socket.on('data', (c: Buffer) => (data += c.toString()));
    socket.on('end', () => resolve(data));
    socket.on('timeout', () => socket.destroy(new Error('timeout')));
    socket.on('error', reject);
  });
}
