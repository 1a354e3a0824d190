// freePort: below the kernel's ephemeral range and the NodePort range, free when handed out,
// never the same twice.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { test } from 'node:test';
import { freePort } from './free-port.js';

test('ports below the ephemeral range, each bindable and handed out once', async () => {
  const low = Number((await readFile('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')).trim().split(/\s+/)[0]);
  const ports: number[] = [];
  for (let i = 0; i < 50; i++) ports.push(await freePort());
  assert.equal(new Set(ports).size, ports.length);
  for (const port of ports) assert.ok(port >= 20_000 && port < Math.min(low, 30_000), `${port} below ${low} and 30000`);
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(ports[0], '127.0.0.1', () => resolve());
  });
  await new Promise((resolve) => server.close(resolve));
});
