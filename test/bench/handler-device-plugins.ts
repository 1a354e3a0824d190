// What the device plugins cost podvirt-handler in memory: its RSS with the kvm, tun and
// vhost-net plugins serving and registered (1000 devices each, a kubelet's ListAndWatch stream
// open on each) against its RSS with --disable-device-plugins, the floor, measured in the same
// run. The kubelet is the testbed's device manager; the device nodes are files in a fake host
// root (the plugins look at presence only). Rounds alternate on/off; the median is reported.
// Asserts nothing.
//
//   node test/dist/bench/handler-device-plugins.js [rounds]     (default 3)
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CoreV1Api } from '@kubernetes/client-node';
import { eventually } from '@podvirt/test-support';
import { pino } from 'pino';
import { startTestApiServer } from '../e2e/testbed-helpers.js';
import { DevicePluginRegistry } from '../testbed/kubelet/device-plugin-registry.js';
import { repoRoot, StackProcess } from '../testbed/index.js';

const NODE = 'bench-node';
const BIN = join(repoRoot(import.meta.url), 'packages/handler/bin/podvirt-handler.js');
const SETTLE_MS = 3_000;

async function rssMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1] ?? NaN) / 1024;
}

async function measure(plugins: boolean): Promise<number> {
  const dir = await mkdtemp(join(tmpdir(), 'pvb-dp-'));
  const api = await startTestApiServer();
  const kubelet = new DevicePluginRegistry({ dir: join(dir, 'dp'), log: pino({ level: 'silent' }), onChange: () => undefined });
  let proc: StackProcess | undefined;
  try {
    await api.kubeConfig.makeApiClient(CoreV1Api).createNode({ body: { metadata: { name: NODE } } });
    await mkdir(join(dir, 'root', 'dev', 'net'), { recursive: true });
    for (const d of ['dev/kvm', 'dev/net/tun', 'dev/vhost-net']) await writeFile(join(dir, 'root', d), '');
    await kubelet.start();
    proc = new StackProcess({
      name: 'handler',
      argv: [process.execPath, BIN, '--kubeconfig', api.kubeconfigPath, '--node-name', NODE, '--pods-dir', join(dir, 'p'),
        '--ghost-record-dir', join(dir, 'records'), '--node-api-socket', join(dir, 'node.sock'), '--metrics-port', '0', '--health-port', '0',
        ...(plugins ? ['--device-plugins-dir', kubelet.dir, '--device-root', join(dir, 'root')] : ['--disable-device-plugins'])],
      env: { ...process.env },
    });
    const p = proc;
    await eventually(() => p.lines.some((l) => l.msg === 'handler ready'), { deadlineMs: 60_000, what: 'handler ready' });
    if (plugins) {
      await eventually(() => [...kubelet.resources().values()].filter((r) => r.allocatable === 1000).length === 3, { deadlineMs: 60_000, what: 'three resources allocatable' });
    }
    await sleep(SETTLE_MS);
    return await rssMiB(p.pid);
  } finally {
    await proc?.stop(10_000);
    await kubelet.close();
    await api.close();
    await rm(dir, { recursive: true, force: true });
  }
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

const rounds = Number(process.argv[2] ?? 3);
const off: number[] = [];
const on: number[] = [];
for (let i = 0; i < rounds; i++) {
  off.push(await measure(false));
  on.push(await measure(true));
}
const floor = median(off);
const withPlugins = median(on);
console.log(`podvirt-handler RSS (MiB), idle, median of ${rounds} rounds each; Node ${process.version}`);
console.log(`  --disable-device-plugins (floor)          ${floor.toFixed(1).padStart(7)}   [${off.map((x) => x.toFixed(1)).join(', ')}]`);
console.log(`  kvm, tun, vhost-net plugins, 1000 devices ${withPlugins.toFixed(1).padStart(7)}   [${on.map((x) => x.toFixed(1)).join(', ')}]`);
console.log(`  ratio on/off ${(withPlugins / floor).toFixed(3)}, difference ${(withPlugins - floor).toFixed(1)} MiB`);
