// Run inside a pod-like network namespace by pod-network-netns.test.ts: wires the pod network
// for the VMI given as argv[2] with the launcher's PodNetworkSetup, prints the attachments as
// one JSON line, serves DHCP until stdin closes or SIGTERM.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PodNetworkSetup, type NetworkedVmi } from '@podvirt/launcher';
import { pino } from 'pino';

const vmi = JSON.parse(process.argv[2] ?? '{}') as NetworkedVmi;
const stateDir = await mkdtemp(join(tmpdir(), 'podvirt-netrun-'));
const setup = new PodNetworkSetup({ log: pino({ level: 'warn' }), stateDir });
try {
  const attached = await setup.resolve(vmi);
  process.stdout.write(`${JSON.stringify([...attached.values()])}\n`);
} catch (err) {
  process.stdout.write(`${JSON.stringify({ error: (err as Error).message, name: (err as Error).name, field: (err as { field?: string }).field })}\n`);
}
process.stdin.resume();
// The test ends this run by closing stdin or with SIGTERM; either way nothing is left in tmp.
const finish = (): void => {
  void setup.close().finally(() => rm(stateDir, { recursive: true, force: true })).finally(() => process.exit(0));
};
process.stdin.on('end', finish);
process.once('SIGTERM', finish);
