// Run inside a pod-like network namespace by pod-network-netns.test.ts: wires the pod network
// for the VMI given as argv[2] with the launcher's PodNetworkSetup, prints the attachments as
// one JSON line, serves DHCP until stdin closes.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PodNetworkSetup, type NetworkedVmi } from '@podvirt/launcher';
import { pino } from 'pino';

const vmi = JSON.parse(process.argv[2] ?? '{}') as NetworkedVmi;
const setup = new PodNetworkSetup({ log: pino({ level: 'warn' }), stateDir: await mkdtemp(join(tmpdir(), 'podvirt-netrun-')) });
try {
  const attached = await setup.resolve(vmi);
  process.stdout.write(`${JSON.stringify([...attached.values()])}\n`);
} catch (err) {
  process.stdout.write(`${JSON.stringify({ error: (err as Error).message, name: (err as Error).name, field: (err as { field?: string }).field })}\n`);
}
process.stdin.resume();
process.stdin.on('end', () => void setup.close());
