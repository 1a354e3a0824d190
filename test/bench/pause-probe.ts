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
//   node test/dist/bench/pause-probe.js <node-api-socket> <launcher-socket> <namespace> <name> <iterations> <vmi-json> <raw-daemon-socket> <raw-domain> <raw-plain-domain>
//
// Prints one JSON line: { "viaApi": [ms…], "viaLauncher": [ms…], "raw": [ms…], "rawPlain": [ms…], "grpc": [ms…] }, each
// ascending; "grpc" is two GetDomain calls on the launcher's socket (no libvirt call: the
// launcher answers from what it holds), the gRPC round trips alone of a pause+unpause.
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
}

const BLOCKS = 5;
const REST_MS = 100;

async function main(): Promise<void> {
  const [apiSocket, launcherSocket, namespace, name, iterations, vmi, rawSocket, rawDomain, rawPlainDomain] = process.argv.slice(2);
  if (apiSocket === undefined || launcherSocket === undefined || namespace === undefined || name === undefined || vmi === undefined || rawSocket === undefined || rawDomain === undefined || rawPlainDomain === undefined) {
    throw new Error('usage: pause-probe <node-api-socket> <launcher-socket> <namespace> <name> <iterations> <vmi-json> <raw-daemon-socket> <raw-domain> <raw-plain-domain>');
  }
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
      grpc: async () => {
        await launcher.getDomain({});
        await launcher.getDomain({});
      },
      viaApi: async () => {
        await api.pause({ namespace, name });
        await api.unpause({ namespace, name });
      },
    };
    const out: Record<keyof typeof series, number[]> = { raw: [], rawPlain: [], viaLauncher: [], grpc: [], viaApi: [] };
    for (const op of Object.values(series)) await sample(0, op); // warm-up
    const perBlock = Math.max(1, Math.ceil(Number(iterations) / BLOCKS));
    for (let b = 0; b < BLOCKS; b++) {
      for (const [key, op] of Object.entries(series) as [keyof typeof series, () => Promise<void>][]) {
        await sleep(REST_MS);
        out[key].push(...(await timeEach(perBlock, op)));
      }
    }
    const sorted = (v: number[]): number[] => [...v].sort((a, b) => a - b);
    const result: PauseProbeResult = { viaApi: sorted(out.viaApi), viaLauncher: sorted(out.viaLauncher), raw: sorted(out.raw), rawPlain: sorted(out.rawPlain), grpc: sorted(out.grpc) };
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    apiClient.close();
    launcherClient.close();
    await libvirt.close();
  }
}

await main();
