// A TCP port on 127.0.0.1 for a component that takes its port as a flag (etcd, kube-apiserver,
// podvirt-api, the handlers' TLS node API, Prometheus). Between the check and the component's
// own bind the port is free for anyone to take. So it is drawn below the kernel's ephemeral
// range (ip_local_port_range) and below the NodePort range: no outgoing connection on the
// machine is given such a port, so the suites running beside (hundreds of connections a
// second) cannot take it first, as they can a port the kernel hands out for port 0. Each port
// is checked free by binding it, and one process never hands out the same port twice.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** Drawn from 20000 up to Kubernetes' NodePort range (30000–32767); the kernel's starts at 32768 by default. */
const LOWEST = 20_000;
const NODE_PORTS = 30_000;
const ATTEMPTS = 200;
const handedOut = new Set<number>();

/** The first port of the kernel's ephemeral range (ip_local_port_range), read once. */
const ephemeralLow = ((): number => {
  let text = '';
  try {
    text = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8');
  } catch {
    // Not Linux's procfs: the kernel's default.
  }
  const low = Number(text.trim().split(/\s+/)[0]);
  return Number.isInteger(low) && low > 0 ? low : 32_768;
})();

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** A free port below the ephemeral range, at random; the kernel's choice where that range leaves no room. */
export async function freePort(): Promise<number> {
  const high = Math.min(ephemeralLow, NODE_PORTS) - 1;
  if (high - LOWEST >= 1_000) {
    for (let i = 0; i < ATTEMPTS; i++) {
      const port = LOWEST + Math.floor(Math.random() * (high - LOWEST + 1));
      if (handedOut.has(port) || !(await bindable(port))) continue;
      handedOut.add(port);
      return port;
    }
  }
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}
