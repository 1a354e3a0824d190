import type { Socket } from 'node:dgram';

/** Closes a DHCP server's UDP socket; resolves also when it was never bound or is closed already. */
export function closeSocket(socket: Socket): Promise<void> {
  return new Promise((resolve) => {
    try {
      socket.close(() => resolve());
    } catch {
      resolve();
    }
  });
}
