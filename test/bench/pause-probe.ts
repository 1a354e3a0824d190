// pause+unpause timed from a process of its own, as a user's client runs: through the handler's
// node API, straight on the VMI's launcher socket, and as the floor a bare suspend+resume of
// another booted guest of the launcher's own domain XML on a libvirt daemon of its own (and, for
// comparison, of the testbed's plain guest XML on the same daemon). vmi-start-stages runs it; in its own
// process the testbed's API server, scheduler and kubelet share the event loop, so a reply
// would wait there behind the status writes the API server is serving.
//
// The three are timed in turns, a block of each at a time, so that all three see the same
// machine (a shared 2-core machine's speed drifts over a minute); a short rest between blocks
// lets the stack finish what a pause set off (the handler's status write) before the next.
//
// What each pause+unpause sets off after its answers (the handler's status write, the API server's
// write and watch events, the controller's look at the new status) runs on the same cores as the
// next call. Two figures show its share: the launcher's calls once more with the handler stopped
// (SIGSTOP) for the pair, so that nothing follows the answers; and the CPU each of the stack's
// processes used over each series.
//
//   node test/dist/bench/pause-probe.js <node-api-socket> <launcher-socket> <namespace> <name> <iterations> <vmi-json> <raw-daemon-socket> <raw-domain> <raw-plain-domain> <pids-json>
//
// <pids-json> names the processes whose CPU is read, by role; "handler" is the one stopped.
// Prints one JSON line: { "viaApi": [ms…], "viaLauncher": [ms…], "viaLauncherNoStatus": [ms…],
// "raw": [ms…], "rawPlain": [ms…], "grpc": [ms…], "cpuMs": { series: { role: ms } } }, each list
// ascending; "grpc" is two GetDomain calls on the launcher's socket (no libvirt call: the
// launcher answers from what it holds), the gRPC round trips alone of a pause+unpause.
import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import * as grpc from '@grpc/grpc-js';
import { LibvirtClient } from '@podvirt/libvirt';
import { cmd, node, promiseClient } from '@podvirt/proto';
import { sample, timeEach } from './latency-sample.js';

export interface PauseProbeResult {
  readonly viaApi: number[];
  readonly viaLauncher: number[];
  readonly raw: number[];
  readonly rawPlain: number[];
  readonly grpc: number[];
  readonly viaLauncherNoStatus: number[];
  /** CPU (user + system) each role's process used over each series' iterations, in ms. */
  readonly cpuMs: Record<string, Record<string, number>>;
}

const BLOCKS = 5;
const REST_MS = 100;

async function main(): Promise<void> {
  const [apiSocket, launcherSocket, namespace, name, iterations, vmi, rawSocket, rawDomain, rawPlainDomain, pidsJson] = process.argv.slice(2);
  if (apiSocket === undefined || launcherSocket === undefined || namespace === undefined || name === undefined || vmi === undefined || rawSocket === undefined || rawDomain === undefined || rawPlainDomain === undefined || pidsJson === undefined) {
    throw new Error('usage: pause-probe <node-api-socket> <launcher-socket> <namespace> <name> <iterations> <vmi-json> <raw-daemon-socket> <raw-domain> <raw-plain-domain> <pids-json>');
  }
  const pids = JSON.parse(pidsJson) as Record<string, number>;
  const handlerPid = pids['handler'];
  if (handlerPid === undefined) throw new Error('pause-probe: <pids-json> names no handler');
  // The one step that can fail before the try: the channels below are only made once it is done.
  const libvirt = await LibvirtClient.connect({ socketPath: rawSocket });
  const apiClient = new node.NodeClient(`unix:${apiSocket}`, grpc.credentials.createInsecure());
  const launcherClient = new cmd.CmdClient(`unix:${launcherSocket}`, grpc.credentials.createInsecure());
  try {
    const api = promiseClient(node.NodeService, apiClient, { timeoutMs: 30_000 });
    const launcher = promiseClient(cmd.CmdService, launcherClient, { timeoutMs: 30_000 });
    const vmiJson = Buffer.from(vmi);
    const dom = await libvirt.domainLookupByName(rawDomain);
    const plain = await libvirt.domainLookupByName(rawPlainDomain);
    const series = {
      raw: async () => {
        await libvirt.domainSuspend(dom);
        await libvirt.domainResume(dom);
      },
      rawPlain: async () => {
        await libvirt.domainSuspend(plain);
        await libvirt.domainResume(plain);
      },
      viaLauncher: async () => {
        await launcher.pause({ vmiJson });
        await launcher.unpause({ vmiJson });
      },
      viaLauncherNoStatus: async () => {
        process.kill(handlerPid, 'SIGSTOP');
        try {
          await launcher.pause({ vmiJson });
          await launcher.unpause({ vmiJson });
        } finally {
          process.kill(handlerPid, 'SIGCONT');
        }
      },
      grpc: async () => {
        await launcher.getDomain({});
        await launcher.getDomain({});
      },
      viaApi: async () => {
        await api.pause({ namespace, name });
        await api.unpause({ namespace, name });
      },
    };
    const out: Record<keyof typeof series, number[]> = { raw: [], rawPlain: [], viaLauncher: [], viaLauncherNoStatus: [], grpc: [], viaApi: [] };
    const cpuMs: Record<string, Record<string, number>> = {};
    for (const op of Object.values(series)) await sample(0, op); // warm-up
    const perBlock = Math.max(1, Math.ceil(Number(iterations) / BLOCKS));
    for (let b = 0; b < BLOCKS; b++) {
      for (const [key, op] of Object.entries(series) as [keyof typeof series, () => Promise<void>][]) {
        await sleep(REST_MS);
        const before = await cpuTimes(pids);
        out[key].push(...(await timeEach(perBlock, op)));
        const after = await cpuTimes(pids);
        const used = (cpuMs[key] ??= {});
        for (const role of Object.keys(pids)) used[role] = (used[role] ?? 0) + (after[role] ?? 0) - (before[role] ?? 0);
      }
    }
    const sorted = (v: number[]): number[] => [...v].sort((a, b) => a - b);
    const result: PauseProbeResult = {
      viaApi: sorted(out.viaApi), viaLauncher: sorted(out.viaLauncher), viaLauncherNoStatus: sorted(out.viaLauncherNoStatus),
      raw: sorted(out.raw), rawPlain: sorted(out.rawPlain), grpc: sorted(out.grpc), cpuMs,
    };
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    apiClient.close();
    launcherClient.close();
    await libvirt.close();
  }
}

/** Each process's user + system CPU so far, in ms, from /proc/<pid>/stat (clock ticks of 10 ms). */
async function cpuTimes(pids: Record<string, number>): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const [role, pid] of Object.entries(pids)) {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    out[role] = (Number(fields[11]) + Number(fields[12])) * 10;
  }
  return out;
}

await main();
