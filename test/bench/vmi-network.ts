// Guest networking costs on the testbed, each against a floor measured in the same run:
//  - TCP connect + one answer, host → VMI IP:8080 through masquerade, vs host → a plain pod's IP
//    (a busybox nc in the pod's own sandbox): P50/P95 and their ratio;
//  - 64 MiB host → guest over TCP through masquerade vs bridge (port 9000 sink in the guest);
//  - the guest's DHCP lease, as seconds of guest uptime (console), vs its ready marker;
//  - create → Running and the compute container's RSS (launcher, libvirt daemon, qemu) for a VMI
//    with a masquerade NIC vs one without, the median of three of each.
// Prints; asserts nothing. Only addresses on the stack's own bridge are contacted.
//
//   node test/dist/bench/vmi-network.js [samples]      (default 30)
import { readdir, readFile } from 'node:fs/promises';
import type { VirtualMachineInstance } from '@podvirt/api';
import { readTcp, waitForConsoleText } from '../testbed/index.js';
import { guestVmi, VmiSuite } from '../e2e/vmi-stack.js';
import { pct, sample } from './latency-sample.js';

const samples = Number(process.argv[2] ?? '30');
// VMIs of each kind started for the start latency and memory figures.
const ROUNDS = 3;

/** What the guest's port answers, with `payload` sent first: the sink on 9000 says how much arrived. */
const exchange = (ip: string, port: number, payload?: Buffer): Promise<string> => readTcp(ip, port, 60_000, payload);

const ms = (v: number): string => `${v.toFixed(2).padStart(8)} ms`;

async function main(): Promise<void> {
  const suite = await VmiSuite.start();
  try {
    const vmi = (name: string, binding?: 'masquerade' | 'bridge'): Record<string, unknown> => {
      const v = guestVmi(suite.guest, name, binding === undefined ? {} : { devices: { interfaces: [{ name: 'default', [binding]: {} }] } });
      if (binding !== undefined) (v['spec'] as Record<string, unknown>)['networks'] = [{ name: 'default', pod: {} }];
      return v;
    };
    const started = async (name: string, manifest: Record<string, unknown>): Promise<{ vmi: VirtualMachineInstance; runningMs: number; serial: string }> => {
      const t0 = Date.now();
      await suite.apply(manifest);
      const running = await suite.waitForPhase(name, 'Running');
      const runningMs = Date.now() - t0;
      const serial = suite.serialLog(running, Object.keys(running.status?.activePods ?? {})[0] ?? '');
      await waitForConsoleText(serial, suite.guest.readyMarker, { timeoutMs: 120_000 });
      return { vmi: running, runningMs, serial };
    };
    const computePid = async (v: VirtualMachineInstance): Promise<number> => {
      const pod = (await suite.podsOf(v))[0];
      return Number((pod?.status?.containerStatuses?.find((c) => c.name === 'compute')?.containerID ?? '').replace('testbed://', ''));
    };
    // The compute container's processes (monitor, launcher, libvirt daemon, qemu): name → RSS in MiB.
    const containerRss = async (v: VirtualMachineInstance): Promise<Map<string, number>> => {
      const out = new Map<string, number>();
      const queue = [await computePid(v)];
      for (let pid = queue.shift(); pid !== undefined; pid = queue.shift()) {
        const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
        const cmdline = (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).split('\0');
        const name = cmdline.find((a) => /podvirt-launcher|libvirtd|virtqemud|qemu-system/.test(a))?.split('/').pop() ?? cmdline[0] ?? '?';
        out.set(name, (out.get(name) ?? 0) + Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024);
        const tasks = await readdir(`/proc/${pid}/task`).catch(() => [] as string[]);
        for (const task of tasks) {
          const children = (await readFile(`/proc/${pid}/task/${task}/children`, 'utf8').catch(() => '')).trim();
          if (children !== '') queue.push(...children.split(/\s+/).map(Number));
        }
      }
      return out;
    };
    const sum = (m: Map<string, number>, match: RegExp = /./): number => [...m].filter(([k]) => match.test(k)).reduce((a, [, v]) => a + v, 0);
    const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

    // Start latency and memory, a VMI without a NIC and one with a masquerade NIC in turn; the
    // last masquerade one stays for the network figures.
    const rounds: Array<{ plainMs: number; masqMs: number; plain: Map<string, number>; masq: Map<string, number> }> = [];
    let masq: { vmi: VirtualMachineInstance; runningMs: number; serial: string } | undefined;
    for (let r = 0; r < ROUNDS; r++) {
      const plain = await started(`bench-plain-${r}`, vmi(`bench-plain-${r}`));
      const plainRss = await containerRss(plain.vmi);
      await suite.kubectl(['delete', 'vmi', `bench-plain-${r}`, '--wait=false']);
      await suite.waitForPodsGone(plain.vmi, 120_000);
      if (masq !== undefined) {
        await suite.kubectl(['delete', 'vmi', masq.vmi.metadata.name ?? '', '--wait=false']);
        await suite.waitForPodsGone(masq.vmi, 120_000);
      }
      masq = await started(`bench-masq-${r}`, vmi(`bench-masq-${r}`, 'masquerade'));
      rounds.push({ plainMs: plain.runningMs, masqMs: masq.runningMs, plain: plainRss, masq: await containerRss(masq.vmi) });
    }
    if (masq === undefined) throw new Error('no rounds');
    const lease = async (serial: string): Promise<string> => {
      const net = (await waitForConsoleText(serial, 'PODVIRT-GUEST-NET', { timeoutMs: 120_000 })).line;
      const ready = (await readFile(serial, 'utf8')).match(/PODVIRT-GUEST-READY uptime=(\S+)/)?.[1] ?? '?';
      return `lease at guest uptime ${/uptime=(\S+)/.exec(net)?.[1] ?? '?'} s (ready marker at ${ready} s)`;
    };
    console.log(`DHCP (masquerade): ${await lease(masq.serial)}`);
    const plainMs = median(rounds.map((x) => x.plainMs));
    const masqMs = median(rounds.map((x) => x.masqMs));
    console.log(`create → Running, median of ${ROUNDS}: no NIC ${plainMs} ms, masquerade NIC ${masqMs} ms, ratio ${(masqMs / plainMs).toFixed(2)} (each: ${rounds.map((x) => `${x.plainMs}/${x.masqMs}`).join(', ')})`);
    const mib = (pick: (x: (typeof rounds)[number]) => number): string => median(rounds.map(pick)).toFixed(1);
    console.log(`compute container RSS, median: no NIC ${mib((x) => sum(x.plain))} MiB, masquerade NIC ${mib((x) => sum(x.masq))} MiB`);
    console.log(`  launcher ${mib((x) => sum(x.plain, /podvirt-launcher\.js|podvirt-launcher$/))} → ${mib((x) => sum(x.masq, /podvirt-launcher\.js|podvirt-launcher$/))} MiB, qemu ${mib((x) => sum(x.plain, /qemu/))} → ${mib((x) => sum(x.masq, /qemu/))} MiB`);
    console.log(`  processes: ${[...(rounds[0]?.masq ?? new Map<string, number>())].map(([k, v]) => `${k} ${v.toFixed(1)}`).join(', ')}`);

    // The floor: a plain pod in its own sandbox answering with nc, as the guest does.
    await suite.core.createNamespacedPod({
      namespace: 'default',
      body: {
        metadata: { name: 'bench-pod' },
        spec: { restartPolicy: 'Never', terminationGracePeriodSeconds: 1, containers: [{ name: 'main', image: 'busybox', command: ['sh', '-c', 'busybox nc -ll -p 8080 -e echo pod'] }] },
      },
    });
    const podIP = await suite.eventually('bench-pod IP', async () => {
      const p = await suite.core.readNamespacedPod({ namespace: 'default', name: 'bench-pod' });
      return p.status?.phase === 'Running' ? p.status.podIP : undefined;
    });
    const masqIP = (await suite.podsOf(masq.vmi))[0]?.status?.podIP ?? '';
    await suite.eventually('guest 8080', () => exchange(masqIP, 8080).catch(() => undefined));
    await suite.eventually('pod 8080', () => exchange(podIP, 8080).catch(() => undefined));
    const pod = await sample(samples, () => exchange(podIP, 8080));
    const guest = await sample(samples, () => exchange(masqIP, 8080));
    console.log(`connect + answer: plain pod P50 ${ms(pct(pod, 50))} P95 ${ms(pct(pod, 95))}`);
    console.log(`connect + answer: masquerade guest P50 ${ms(pct(guest, 50))} P95 ${ms(pct(guest, 95))}   ratio P50 ${(pct(guest, 50) / pct(pod, 50)).toFixed(1)}x`);

    const bridge = await started('bench-bridge', vmi('bench-bridge', 'bridge'));
    await waitForConsoleText(bridge.serial, 'PODVIRT-GUEST-NET', { timeoutMs: 120_000 });
    const bridgeIP = (await suite.podsOf(bridge.vmi))[0]?.status?.podIP ?? '';
    const payload = Buffer.alloc(64 * 1024 * 1024, 7);
    for (const [label, ip] of [['masquerade', masqIP], ['bridge', bridgeIP]] as const) {
      const t0 = performance.now();
      const answer = await exchange(ip, 9000, payload);
      const s = (performance.now() - t0) / 1000;
      console.log(`64 MiB host → guest (${label}): ${s.toFixed(2)} s, ${(64 / s).toFixed(1)} MiB/s; guest says "${answer.trim()}"`);
    }
  } finally {
    await suite.core.deleteNamespacedPod({ namespace: 'default', name: 'bench-pod' }).catch(() => undefined);
    await suite.close();
  }
}

await main();
