// Guest networking costs on the testbed, each against a floor measured in the same run:
//  - TCP connect + one answer, host → VMI IP:8080 through masquerade, vs host → a plain pod's IP
//    (a busybox nc in the pod's own sandbox): P50/P95 and their ratio;
//  - 64 MiB host → guest over TCP through masquerade vs bridge (port 9000 sink in the guest);
//  - the guest's DHCP lease, as seconds of guest uptime (console), vs its ready marker;
//  - create → Running and the launcher's RSS for a VMI with a masquerade NIC vs one without.
// Prints; asserts nothing. Only addresses on the stack's own bridge are contacted.
//
//   node test/dist/bench/vmi-network.js [samples]      (default 30)
import { readFile } from 'node:fs/promises';
import { connect } from 'node:net';
import type { VirtualMachineInstance } from '@podvirt/api';
import { waitForConsoleText } from '../testbed/index.js';
import { guestVmi, VmiSuite } from '../e2e/vmi-stack.js';
import { pct, sample } from './latency-sample.js';

const samples = Number(process.argv[2] ?? '30');

function exchange(ip: string, port: number, payload?: Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: ip, port, timeout: 60_000 });
    let data = '';
    socket.on('connect', () => {
      if (payload !== undefined) socket.end(payload);
    });
    socket.on('data', (c: Buffer) => (data += c.toString()));
    socket.on('end', () => resolve(data));
    socket.on('timeout', () => socket.destroy(new Error('timeout')));
    socket.on('error', reject);
  });
}

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
    const launcherRss = async (v: VirtualMachineInstance): Promise<number> => {
      const pod = (await suite.podsOf(v))[0];
      const pid = Number((pod?.status?.containerStatuses?.find((c) => c.name === 'compute')?.containerID ?? '').replace('testbed://', ''));
      const children = (await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8').catch(() => '')).trim().split(/\s+/).map(Number);
      for (const child of children) {
        if ((await readFile(`/proc/${child}/cmdline`, 'utf8').catch(() => '')).includes('podvirt-launcher.js')) {
          return Number(/VmRSS:\s+(\d+)/.exec(await readFile(`/proc/${child}/status`, 'utf8'))?.[1] ?? NaN) / 1024;
        }
      }
      return NaN;
    };

    const plain = await started('bench-plain', vmi('bench-plain'));
    const masq = await started('bench-masq', vmi('bench-masq', 'masquerade'));
    const lease = async (serial: string): Promise<string> => {
      const net = (await waitForConsoleText(serial, 'PODVIRT-GUEST-NET', { timeoutMs: 120_000 })).line;
      const ready = (await readFile(serial, 'utf8')).match(/PODVIRT-GUEST-READY uptime=(\S+)/)?.[1] ?? '?';
      return `lease at guest uptime ${/uptime=(\S+)/.exec(net)?.[1] ?? '?'} s (ready marker at ${ready} s)`;
    };
    console.log(`DHCP (masquerade): ${await lease(masq.serial)}`);
    console.log(`create → Running: no NIC ${plain.runningMs} ms, masquerade NIC ${masq.runningMs} ms (one VMI each, same run)`);
    console.log(`launcher RSS: no NIC ${(await launcherRss(plain.vmi)).toFixed(1)} MiB, masquerade NIC ${(await launcherRss(masq.vmi)).toFixed(1)} MiB`);

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
