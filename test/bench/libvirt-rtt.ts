// Round-trip latency of @podvirt/libvirt against `virsh -c <uri>` for the same operations, on
// the same daemon and domain, in one run. Prints p50/p95 per operation and the virsh/client
// ratio; it asserts nothing about wall-clock time.
//
//   node test/dist/bench/libvirt-rtt.js [iterations]      (default 100)
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { LibvirtClient } from '@podvirt/libvirt';
import type { DomainRef } from '@podvirt/libvirt';
import { guestImage, startLibvirtDaemon, waitForConsoleText } from '../testbed/index.js';
import { guestXml } from '../integration/libvirt-fixture.js';
import { pct, sample, WARMUP } from './latency-sample.js';

const run = promisify(execFile);
const fmt = (ms: number): string => `${ms.toFixed(2).padStart(8)} ms`;

async function main(): Promise<void> {
  const iterations = Number(process.argv[2] ?? 100);
  const dir = await mkdtemp(join(tmpdir(), 'podvirt-libvirt-bench-'));
  const daemon = await startLibvirtDaemon({ stateDir: join(dir, 'daemon') });
  let client: LibvirtClient | undefined;
  try {
    client = await LibvirtClient.connect({ socketPath: daemon.socketPath });
    const c = client;
    const { xml, serialLog } = await guestXml(dir, 'lv-bench');
    const dom: DomainRef = await c.domainCreate(await c.domainDefineXml(xml));
    // Measure an idle guest, not one still booting on the same two cores.
    await waitForConsoleText(serialLog, guestImage().readyMarker, { timeoutMs: 60_000 });
    const virsh = (...args: string[]): Promise<unknown> => run('virsh', ['-q', '-c', daemon.uri, ...args]);

    const rows: Array<[string, number[], number[]]> = [
      ['get-state', await sample(iterations, () => c.domainGetState(dom)),
        await sample(iterations, () => virsh('domstate', '--reason', 'lv-bench'))],
      ['suspend+resume', await sample(iterations, async () => { await c.domainSuspend(dom); await c.domainResume(dom); }),
        await sample(iterations, async () => { await virsh('suspend', 'lv-bench'); await virsh('resume', 'lv-bench'); })],
    ];
    console.log(`libvirt round trips, ${iterations} iterations each (after ${WARMUP} warm-up), ${daemon.kind}`);
    for (const [op, lib, cli] of rows) {
      console.log(`${op.padEnd(15)} @podvirt/libvirt p50 ${fmt(pct(lib, 50))} p95 ${fmt(pct(lib, 95))} | ` +
        `virsh p50 ${fmt(pct(cli, 50))} p95 ${fmt(pct(cli, 95))} | virsh/client p50 ×${(pct(cli, 50) / pct(lib, 50)).toFixed(1)}`);
    }
    await c.domainDestroy(dom);
    await c.domainUndefine(dom);
  } finally {
    await client?.close();
    await daemon.close();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
