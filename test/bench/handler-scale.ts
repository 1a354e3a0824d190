// podvirt-handler at scale with launchers that run no VM (so the handler is all that is
// measured): the real handler binary against the testbed API server, N VMIs whose launchers are
// in-process fakes. Prints the handler's RSS idle and with N VMIs Running, the time until all
// N are Running, and the time a SIGKILLed-and-restarted handler needs to re-adopt them all
// (every launcher's domain stream open again, nothing marked Failed). Asserts nothing.
//
//   node test/dist/bench/handler-scale.js [vmis ...]      (default: 100 20)
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { eventually } from '@podvirt/test-support';
import { startTestApiServer } from '../e2e/testbed-helpers.js';
import type { StackProcess } from '../testbed/index.js';
import { BenchLauncher, createVmi, NODE, rssMiB, runningCount, startHandler } from './handler-fake-launchers.js';

async function scale(n: number): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'pvb-'));
  const podsDir = join(dir, 'p');
  const api = await startTestApiServer();
  const launchers: BenchLauncher[] = [];
  let handler: StackProcess | undefined;
  try {
    const kc = api.kubeConfig;
    await kc.makeApiClient(CoreV1Api).createNode({ body: { metadata: { name: NODE } } });
    const custom = kc.makeApiClient(CustomObjectsApi);
    handler = startHandler(api, dir, podsDir);
    const h = handler;
    await eventually(() => h.lines.some((l) => l.msg === 'handler ready'), { what: 'handler ready', deadlineMs: 300_000 });
    await sleep(2_000);
    const idle = await rssMiB(h.pid);

    for (let i = 0; i < n; i++) launchers.push(await BenchLauncher.start(podsDir, `p${i}`));
    const createdAt = performance.now();
    for (let i = 0; i < n; i++) await createVmi(custom, i);
    await eventually(async () => (await runningCount(custom)).running === n, { what: `${n} Running`, deadlineMs: 120_000 }).catch((err: unknown) => {
      throw new Error(`${String(err)}\n${h.tail(20)}`);
    });
    const allRunningMs = performance.now() - createdAt;
    await sleep(3_000);
    const loaded = await rssMiB(h.pid);

    h.kill('SIGKILL');
    await h.exited;
    await eventually(() => launchers.every((l) => l.openStreams === 0), { what: 'streams closed', deadlineMs: 10_000 });
    const restartAt = performance.now();
    handler = startHandler(api, dir, podsDir);
    await eventually(() => launchers.every((l) => l.openStreams === 1), { what: 're-adopted', deadlineMs: 300_000 });
    const readoptMs = performance.now() - restartAt;
    const after = await runningCount(custom);
    console.log(`handler with ${n} fake launchers: RSS idle ${idle.toFixed(1)} MiB, with ${n} Running ${loaded.toFixed(1)} MiB; ` +
      `create → all Running ${(allRunningMs / 1000).toFixed(2)} s; restart (spawn) → all ${n} re-adopted ${(readoptMs / 1000).toFixed(2)} s; ` +
      `after restart ${after.running} Running, ${after.failed} Failed`);
  } finally {
    await handler?.stop(10_000);
    await Promise.all(launchers.map((l) => l.close()));
    await api.close();
    await rm(dir, { recursive: true, force: true });
  }
}

const sizes = process.argv.slice(2).map(Number);
for (const n of sizes.length > 0 ? sizes : [100, 20]) await scale(n);
