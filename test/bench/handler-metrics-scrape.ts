// What a /metrics scrape costs the handler: the real handler binary against the testbed API
// server, with 0 (idle), then 1, 10 and 50 Running VMIs whose launchers are in-process fakes
// answering GetDomainStats with a small guest's libvirt stats. For each size: the scrape's wall
// time and the handler's CPU time per scrape (utime + stime from /proc, over 20 scrapes), the
// exposition's size, and the handler's RSS. Before the scrapes of each size, a quiet window of
// 10 s with nobody scraping: the GetDomainStats calls the launchers answered in it (the handler
// reads domain stats on scrape only, so 0) and the handler's CPU per second, against the idle
// handler's. Asserts nothing.
//
//   node test/dist/bench/handler-metrics-scrape.js [vmis ...]      (default: 1 10 50)
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { eventually } from '@podvirt/test-support';
import { startTestApiServer } from '../e2e/testbed-helpers.js';
import { metricsPort } from '../e2e/handler-node.js';
import { BenchLauncher, createVmi, NODE, rssMiB, runningCount, startHandler } from './handler-fake-launchers.js';

const SCRAPES = 20;
const QUIET_MS = 10_000;

async function cpuSeconds(pid: number): Promise<number> {
  const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]?.split(' ') ?? [];
  // utime and stime are fields 14 and 15 of stat(5), in clock ticks (100 per second on Linux).
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

async function measure(pid: number, port: number): Promise<string> {
  const cpu0 = await cpuSeconds(pid);
  const t0 = performance.now();
  let bytes = 0;
  let vmiSamples = 0;
  for (let i = 0; i < SCRAPES; i++) {
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    bytes = text.length;
    vmiSamples = text.split('\n').filter((l) => l.startsWith('kubevirt_vmi_') && !l.startsWith('kubevirt_vmi_phase_count')).length;
  }
  const ms = (performance.now() - t0) / SCRAPES;
  const cpuMs = ((await cpuSeconds(pid)) - cpu0) * 1000 / SCRAPES;
  return `scrape ${ms.toFixed(1)} ms, handler CPU ${cpuMs.toFixed(1)} ms/scrape, ${(bytes / 1024).toFixed(0)} KiB, ${vmiSamples} domain-stats samples, RSS ${(await rssMiB(pid)).toFixed(1)} MiB`;
}

/** Nobody scrapes for QUIET_MS: the launchers' GetDomainStats calls and the handler's CPU per second meanwhile. */
async function quiet(pid: number, launchers: readonly BenchLauncher[]): Promise<string> {
  const reads0 = launchers.reduce((n, l) => n + l.statsReads, 0);
  const cpu0 = await cpuSeconds(pid);
  await sleep(QUIET_MS);
  const cpuMsPerS = ((await cpuSeconds(pid)) - cpu0) * 1000 / (QUIET_MS / 1000);
  const reads = launchers.reduce((n, l) => n + l.statsReads, 0) - reads0;
  return `nobody scraping ${QUIET_MS / 1000} s: ${reads} GetDomainStats calls, handler CPU ${cpuMsPerS.toFixed(1)} ms/s`;
}

const sizes = process.argv.slice(2).map(Number);
const dir = await mkdtemp(join(tmpdir(), 'pvb-'));
const podsDir = join(dir, 'p');
const api = await startTestApiServer();
const launchers: BenchLauncher[] = [];
const h = startHandler(api, dir, podsDir);
try {
  const kc = api.kubeConfig;
  await kc.makeApiClient(CoreV1Api).createNode({ body: { metadata: { name: NODE } } });
  const custom = kc.makeApiClient(CustomObjectsApi);
  await eventually(() => h.lines.some((l) => l.msg === 'handler ready'), { what: 'handler ready', deadlineMs: 300_000 });
  const port = metricsPort(h) ?? 0;
  await sleep(2_000);
  console.log(`idle (0 VMIs): ${await quiet(h.pid, launchers)}`);
  console.log(`idle (0 VMIs): ${await measure(h.pid, port)}`);
  for (const n of sizes.length > 0 ? sizes : [1, 10, 50]) {
    for (let i = launchers.length; i < n; i++) {
      launchers.push(await BenchLauncher.start(podsDir, `p${i}`));
      await createVmi(custom, i);
    }
    await eventually(async () => (await runningCount(custom)).running === n, { what: `${n} Running`, deadlineMs: 120_000 });
    await sleep(2_000);
    console.log(`${n} VMIs: ${await quiet(h.pid, launchers)}`);
    console.log(`${n} VMIs: ${await measure(h.pid, port)}`);
  }
} finally {
  await h.stop(10_000);
  await Promise.all(launchers.map((l) => l.close()));
  await api.close();
  await rm(dir, { recursive: true, force: true });
}
