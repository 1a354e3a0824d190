// podvirt-handler with real VMs on the testbed (controller + handler processes, launcher pods
// run by the kubelet, TCG guests). In one run:
//  - pause+unpause round trip through the node API (a gRPC client on the handler's socket, as
//    podvirtctl uses it) against a raw @podvirt/libvirt suspend+resume on a daemon of its own;
//  - the handler's RSS idle and with N Running VMIs;
//  - the time a SIGKILLed handler, restarted, needs to re-adopt the N running VMs (every
//    launcher connected again).
// Asserts nothing about time.
//
//   node test/dist/bench/handler-real.js [vmis] [iterations]      (default 10 VMIs, 50 iterations)
import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import * as grpc from '@grpc/grpc-js';
import { node, promiseClient } from '@podvirt/proto';
import { metricsPort, nodeApiSocket, scrape } from '../e2e/handler-node.js';
import { guestVmi, NS, VmiSuite } from '../e2e/vmi-stack.js';
import { pct, sample, WARMUP } from './latency-sample.js';
import { rawSuspendResume } from './libvirt-floor.js';

const fmt = (ms: number): string => `${ms.toFixed(2)} ms`;

async function rssMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1] ?? NaN) / 1024;
}


/** Mean duration of the launcher calls a pause round trip makes, from the handler's /metrics. */
async function launcherCallMeans(handler: Parameters<typeof metricsPort>[0]): Promise<string> {
  const port = metricsPort(handler);
  if (port === undefined) return 'no metrics port';
  const text = (await scrape(port)).body;
  const value = (name: string, method: string): number =>
    Number(new RegExp(`^podvirt_handler_launcher_call_duration_seconds_${name}\\{method="${method}",code="OK"\\} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
  return ['Pause', 'Unpause', 'GetDomain']
    .map((m) => `${m} ${((value('sum', m) / value('count', m)) * 1000).toFixed(2)} ms`)
    .join(', ');
}

async function main(): Promise<void> {
  const vmis = Number(process.argv[2] ?? 10);
  const iterations = Number(process.argv[3] ?? 50);
  const raw = await rawSuspendResume(iterations);

  const suite = await VmiSuite.start();
  try {
    const stack = suite.stack;
    await suite.eventually('handler ready', () => Promise.resolve(stack.handler.lines.some((l) => l.msg === 'handler ready') ? true : undefined));
    await sleep(2_000);
    const idle = await rssMiB(stack.handler.pid);

    const names = Array.from({ length: vmis }, (_, i) => `bench-${i}`);
    await suite.apply(...names.map((name) => guestVmi(suite.guest, name)));
    for (const name of names) await suite.waitForGuestReady(await suite.waitForPhase(name, 'Running', 600_000));
    const client = new node.NodeClient(`unix:${nodeApiSocket(stack)}`, grpc.credentials.createInsecure());
    const api = promiseClient(node.NodeService, client, { timeoutMs: 30_000 });
    const ref = { namespace: NS, name: names[0] ?? '' };
    let viaApi: number[];
    try {
      viaApi = await sample(iterations, async () => {
        await api.pause(ref);
        await api.unpause(ref);
      });
    } finally {
      client.close();
    }
    const callMeans = await launcherCallMeans(stack.handler);
    await sleep(3_000);
    const loaded = await rssMiB(stack.handler.pid);

    const killed = stack.handler;
    killed.kill('SIGKILL');
    await killed.exited;
    const restartAt = performance.now();
    const restarted = await stack.restartHandler();
    await suite.eventually('re-adopted', () =>
      Promise.resolve(restarted.lines.filter((l) => l.msg === 'launcher connected').length >= vmis ? true : undefined), 300_000);
    const readoptMs = performance.now() - restartAt;
    const phases = await Promise.all(names.map(async (n) => (await suite.vmi(n))?.status?.phase));

    console.log(`pause+unpause round trip, ${iterations} iterations (after ${WARMUP} warm-up):`);
    console.log(`  raw @podvirt/libvirt suspend+resume   p50 ${fmt(pct(raw, 50))}  p95 ${fmt(pct(raw, 95))}`);
    console.log(`  node API Pause+Unpause (handler)       p50 ${fmt(pct(viaApi, 50))}  p95 ${fmt(pct(viaApi, 95))}  ratio p50 ×${(pct(viaApi, 50) / pct(raw, 50)).toFixed(2)}`);
    console.log(`  inside the handler, mean launcher call: ${callMeans}`);
    console.log(`handler RSS: idle ${idle.toFixed(1)} MiB, with ${vmis} Running VMIs ${loaded.toFixed(1)} MiB`);
    console.log(`restart (spawn) → all ${vmis} real launchers re-adopted: ${(readoptMs / 1000).toFixed(2)} s; phases after: ${[...new Set(phases)].join(',')}`);

    await suite.kubectl(['delete', 'vmi', '--all', '--wait=false']);
    for (const name of names) await suite.waitForGone(name, 300_000);
  } finally {
    await suite.close();
  }
}

await main();
