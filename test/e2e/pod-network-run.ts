// Stands in for a VMI's launcher inside a pod-like network namespace, for
// pod-network-netns.test.ts: its command line carries `podvirt-launcher --uid <uid>` as a
// launcher's does, so the handler's wiring finds it and enters its namespace. After a line on
// stdin (the handler has wired the pod), it runs the launcher's PodNetworkSetup for the VMI on
// argv, prints the attachments (or the error) as one JSON line, and serves DHCP until stdin
// closes or SIGTERM.
//
//   node pod-network-run.js <private dir> <vmi json> podvirt-launcher --uid <uid>
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { PodNetworkSetup, type NetworkedVmi } from '@podvirt/launcher';
import { pino } from 'pino';

const [privateDir = '', vmiJson = '{}', , , uid = ''] = process.argv.slice(2);
const vmi = JSON.parse(vmiJson) as NetworkedVmi;
const setup = new PodNetworkSetup({ log: pino({ level: 'warn' }), stateDir: join(privateDir, uid) });
const lines = createInterface({ input: process.stdin });
process.stdout.write('ready\n');
lines.once('line', () => {
  setup.resolve(vmi).then(
    (attached) => process.stdout.write(`${JSON.stringify([...attached.values()])}\n`),
    (err: unknown) => process.stdout.write(`${JSON.stringify({ error: (err as Error).message })}\n`),
  );
});
const finish = (): void => {
  void setup.close().finally(() => process.exit(0));
};
lines.once('close', finish);
process.once('SIGTERM', finish);
