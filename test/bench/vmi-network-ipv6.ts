// IPv6 against IPv4 for one masquerade guest on the dual-stack testbed (PODVIRT_TESTBED_IPV6=1),
// both families measured in the same run on the same guests:
//  - the guest's leases, as seconds of guest uptime on its console: DHCPv4 (busybox udhcpc) and
//    DHCPv6 (Debian's dhcpcd), started together by the guest's init; the median of three VMIs;
//  - TCP connect + one answer, host → the pod's IPv4 vs its IPv6 address on 8080 (NAT vs NAT66
//    to the same guest responder): P50/P95 and their ratio.
// Prints; asserts nothing. Only addresses on the stack's own bridge are contacted.
//
//   node test/dist/bench/vmi-network-ipv6.js [samples]      (default 30)
import { waitForConsoleText } from '../testbed/index.js';
import { readTcp } from '../testbed/sandbox/read-tcp.js';
import { guestVmi, VmiSuite } from '../e2e/vmi-stack.js';
import { pct, sample } from './latency-sample.js';

const samples = Number(process.argv[2] ?? '30');
const ROUNDS = 3;

const ms = (v: number): string => `${v.toFixed(2).padStart(8)} ms`;
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

async function main(): Promise<void> {
  process.env['PODVIRT_TESTBED_IPV6'] = '1';
  const suite = await VmiSuite.start();
  delete process.env['PODVIRT_TESTBED_IPV6'];
  try {
    const leases: Array<{ v4: number; v6: number }> = [];
    let last: { ip4: string; ip6: string } | undefined;
    for (let r = 0; r < ROUNDS; r++) {
      const name = `bench-masq6-${r}`;
      const v = guestVmi(suite.guest, name, { extraKernelArgs: 'podvirt.ipv6=dhcp', devices: { interfaces: [{ name: 'default', masquerade: {} }] } });
      (v['spec'] as Record<string, unknown>)['networks'] = [{ name: 'default', pod: {} }];
      await suite.apply(v);
      const running = await suite.waitForPhase(name, 'Running');
      const serial = suite.serialLog(running, Object.keys(running.status?.activePods ?? {})[0] ?? '');
      const uptime = async (text: string): Promise<number> => Number(/uptime=(\S+)/.exec((await waitForConsoleText(serial, text, { timeoutMs: 120_000 })).line)?.[1] ?? NaN);
      leases.push({ v4: await uptime('PODVIRT-GUEST-NET eth0 ip='), v6: await uptime('PODVIRT-GUEST-NET6 eth0 ip=') });
      const ips = (await suite.podsOf(running))[0]?.status?.podIPs?.map((p) => p.ip) ?? [];
      if (r < ROUNDS - 1) {
        await suite.kubectl(['delete', 'vmi', name, '--wait=false']);
        await suite.waitForPodsGone(running, 120_000);
      } else {
        last = { ip4: ips[0] ?? '', ip6: ips[1] ?? '' };
      }
    }
    const v4 = median(leases.map((l) => l.v4));
    const v6 = median(leases.map((l) => l.v6));
    console.log(`lease at guest uptime, median of ${ROUNDS}: DHCPv4 ${v4.toFixed(2)} s, DHCPv6 ${v6.toFixed(2)} s, ratio ${(v6 / v4).toFixed(2)} (each v4/v6: ${leases.map((l) => `${l.v4}/${l.v6}`).join(', ')})`);

    if (last === undefined) throw new Error('no rounds');
    const { ip4, ip6 } = last;
    await suite.eventually('guest 8080 over IPv4', () => readTcp(ip4, 8080).catch(() => undefined));
    await suite.eventually('guest 8080 over IPv6', () => readTcp(ip6, 8080).catch(() => undefined));
    const over4 = await sample(samples, () => readTcp(ip4, 8080, 60_000));
    const over6 = await sample(samples, () => readTcp(ip6, 8080, 60_000));
    console.log(`connect + answer, pod IPv4 (NAT)   P50 ${ms(pct(over4, 50))} P95 ${ms(pct(over4, 95))}`);
    console.log(`connect + answer, pod IPv6 (NAT66) P50 ${ms(pct(over6, 50))} P95 ${ms(pct(over6, 95))}   ratio P50 ${(pct(over6, 50) / pct(over4, 50)).toFixed(2)}x`);
  } finally {
    await suite.close();
  }
}

await main();
