// `podvirtctl vnc --proxy-only`: a TCP listener on the loopback; each connection a VNC viewer
// makes becomes one Vnc stream of the node API. Prints `{"port":N}` (virtctl's line) once it
// listens, and runs until the signal fires. A viewer's failure (the VMI stopped, another client
// holds the VNC) is reported on stderr and closes that connection only.

import { createServer, type Server, type Socket } from 'node:net';
import type { node } from '@podvirt/proto';
import type { GuestStreamClient } from './guest-stream-client.js';

export interface VncProxyOptions {
  readonly vmi: node.VmiRef;
  readonly port: number;
  readonly open: () => GuestStreamClient;
  readonly stdout: { write(chunk: string): unknown };
  readonly stderr: { write(chunk: string): unknown };
  readonly signal: AbortSignal;
}

/** Resolves once the proxy stopped (signal); rejects when it cannot listen. */
export async function runVncProxy(o: VncProxyOptions): Promise<void> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    void pipeViewer(socket, o);
  });
  await listen(server, o.port);
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : o.port;
  o.stdout.write(`${JSON.stringify({ port })}\n`);
  await new Promise<void>((resolve) => {
    if (o.signal.aborted) resolve();
    else o.signal.addEventListener('abort', () => resolve(), { once: true });
  });
  for (const s of sockets) s.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

function listen(server: Server, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.removeListener('error', reject);
      resolve();
    });
  });
}

async function pipeViewer(socket: Socket, o: VncProxyOptions): Promise<void> {
  socket.pause();
  socket.on('error', () => undefined);
  const stream = o.open();
  try {
    await stream.attached;
  } catch (err) {
    o.stderr.write(`error: VNC of VMI ${o.vmi.namespace}/${o.vmi.name}: ${(err as Error).message}\n`);
    socket.destroy();
    return;
  }
  // The viewer is local and asks for each frame update, so the guest → viewer side needs no brake.
  stream.onData((chunk) => socket.write(chunk));
  socket.on('data', (chunk: Buffer) => {
    if (!stream.write(chunk)) socket.pause();
  });
  stream.onDrain(() => socket.resume());
  socket.once('close', () => stream.end());
  socket.resume();
  const end = await stream.ended;
  if (end.kind === 'failed' && end.error.status !== 'CANCELLED') {
    o.stderr.write(`VNC of VMI ${o.vmi.namespace}/${o.vmi.name} ended: ${end.error.message}\n`);
  }
  socket.destroy();
}
