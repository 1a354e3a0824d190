// pause+unpause timed from a process of its own, as a user's client runs: through the handler's
// node API, then straight on the VMI's launcher socket. vmi-start-stages runs it; in its own
// process the testbed's API server, scheduler and kubelet share the event loop, so a reply
// would wait there behind the status writes the API server is serving.
//
//   node test/dist/bench/pause-probe.js <node-api-socket> <launcher-socket> <namespace> <name> <iterations> <vmi-json>
//
// Prints one JSON line: { "viaApi": [ms…], "viaLauncher": [ms…] }, each ascending.
import * as grpc from '@grpc/grpc-js';
import { cmd, node, promiseClient } from '@podvirt/proto';
import { sample } from './latency-sample.js';

export interface PauseProbeResult {
  readonly viaApi: number[];
  readonly viaLauncher: number[];
}

async function main(): Promise<void> {
  const [apiSocket, launcherSocket, namespace, name, iterations, vmi] = process.argv.slice(2);
  if (apiSocket === undefined || launcherSocket === undefined || namespace === undefined || name === undefined || vmi === undefined) throw new Error('usage: pause-probe <node-api-socket> <launcher-socket> <namespace> <name> <iterations> <vmi-json>');
  const apiClient = new node.NodeClient(`unix:${apiSocket}`, grpc.credentials.createInsecure());
  const launcherClient = new cmd.CmdClient(`unix:${launcherSocket}`, grpc.credentials.createInsecure());
  try {
    const api = promiseClient(node.NodeService, apiClient, { timeoutMs: 30_000 });
    const launcher = promiseClient(cmd.CmdService, launcherClient, { timeoutMs: 30_000 });
    const vmiJson = Buffer.from(vmi);
    const n = Number(iterations);
    const viaApi = await sample(n, async () => {
      await api.pause({ namespace, name });
      await api.unpause({ namespace, name });
    });
    const viaLauncher = await sample(n, async () => {
      await launcher.pause({ vmiJson });
      await launcher.unpause({ vmiJson });
    });
    const result: PauseProbeResult = { viaApi, viaLauncher };
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    apiClient.close();
    launcherClient.close();
  }
}

await main();
