// What going through the Kubernetes API costs a VMI operation, against the handler's node socket
// in the same run, on the real control plane (kube-apiserver's aggregation → podvirt-api → the
// handler's mutual-TLS node API):
//   - pause+unpause: two PUTs of KubeVirt's subresources as a client with keep-alive, vs the two
//     gRPC calls on the node socket;
//   - console keystroke echo: a key sent, its echo read back (the guest's tty echoes it), over the
//     plain.kubevirt.io websocket vs the node API's console stream.
// The two paths are timed in turns, a block of each at a time, so both see the same machine.
// Prints P50/P95 and ratios; asserts nothing.
//
//   node test/dist/bench/api-subresources.js [samples]      (default: 100)
import { readFile } from 'node:fs/promises';
import { Agent, request } from 'node:https';
import { setTimeout as sleep } from 'node:timers/promises';
import * as grpc from '@grpc/grpc-js';
import { node, promiseClient } from '@podvirt/proto';
import { eventually, openTestWebSocket, type TestWebSocket } from '@podvirt/test-support';
import { issueCertificate } from '../testbed/control-plane/cluster-pki.js';
import { guestVmi, NS, VmiSuite } from '../e2e/vmi-stack.js';
import { pct, timeEach } from './latency-sample.js';

const BLOCKS = 5;
const NAME = 'bench-api';
const BASE = `/apis/subresources.kubevirt.io/v1/namespaces/${NS}/virtualmachineinstances/${NAME}`;

/** Bytes in, bytes out. */
interface Pipe {
  received: string;
  write(text: string): void;
}

async function waitIn(pipe: Pipe, from: number, needle: string): Promise<void> {
  // Every turn of the event loop: the wait is what the benchmark times.
  await eventually(() => (pipe.received.indexOf(needle, from) >= 0 ? true : undefined), { what: needle, deadlineMs: 30_000, stepMs: 0 });
}

async function echo(pipe: Pipe, i: number): Promise<void> {
  const key = String.fromCharCode(97 + (i % 26));
  const from = pipe.received.length;
  pipe.write(key);
  await waitIn(pipe, from, key);
  // Ctrl+U clears the line now and then, so the shell's line never grows long.
  if (i % 20 === 19) {
    const mark = pipe.received.length;
    pipe.write('\x15');
    await eventually(() => (pipe.received.length > mark ? true : undefined), { what: 'line cleared', deadlineMs: 30_000, stepMs: 0 });
  }
}

const ms = (v: number): string => `${v.toFixed(2).padStart(7)} ms`;

async function main(): Promise<void> {
  const samples = Number(process.argv[2] ?? 100);
  const suite = await VmiSuite.start({ controlPlane: 'real' });
  const cp = suite.stack.testbed.controlPlane;
  const nodeClient = new node.NodeClient(`unix:${suite.stack.nodeApiSocket}`, grpc.credentials.createInsecure());
  let agent: Agent | undefined;
  let ws: TestWebSocket | undefined;
  let stream: grpc.ClientDuplexStream<node.StreamInput, node.StreamOutput> | undefined;
  try {
    if (cp === undefined) throw new Error('no real control plane');
    const admin = await issueCertificate(cp.pki, 'bench-admin', '/CN=bench-admin/O=system:masters', 'clientAuth');
    const [ca, cert, key] = await Promise.all([cp.pki.caCert, admin.cert, admin.key].map((f) => readFile(f, 'utf8')));
    const tls = { ca: ca ?? '', cert: cert ?? '', key: key ?? '' };
    const url = new URL(cp.url);
    agent = new Agent({ keepAlive: true, maxSockets: 1, ...tls });
    const keepAlive = agent;
    const put = (sub: string): Promise<number> => new Promise((resolve, reject) => {
      const req = request({ host: url.hostname, port: url.port, path: `${BASE}/${sub}`, method: 'PUT', agent: keepAlive }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', reject);
      req.end();
    });

    await suite.apply(guestVmi(suite.guest, NAME));
    await suite.waitForGuestReady(await suite.waitForPhase(NAME, 'Running'));
    // The APIService turns Available once podvirt-api has written its caBundle.
    await eventually(async () => ((await put('unpause')) === 503 ? undefined : true), { deadlineMs: 60_000, stepMs: 1_000, what: 'the aggregated API available' });

    const nodeApi = promiseClient(node.NodeService, nodeClient, { timeoutMs: 30_000 });
    const ref = { namespace: NS, name: NAME };
    const pauseSeries = {
      viaApiServer: async () => {
        for (const sub of ['pause', 'unpause']) {
          const code = await put(sub);
          if (code !== 200) throw new Error(`${sub}: HTTP ${code}`);
        }
      },
      viaNodeSocket: async () => {
        await nodeApi.pause(ref);
        await nodeApi.unpause(ref);
      },
    };

    const openConsole = async (takeover: boolean): Promise<TestWebSocket> => {
      const opened = await openTestWebSocket({ host: url.hostname, port: Number(url.port), path: `${BASE}/console${takeover ? '?takeover=true' : ''}`, ...tls, protocol: 'plain.kubevirt.io' });
      if (opened.status !== 101) throw new Error(`console through the API server: HTTP ${opened.status} ${opened.body}`);
      return opened;
    };
    ws = await openConsole(false);
    let seen = 0;
    const wsPipe: Pipe = { received: '', write: (t) => ws?.send(t) };
    const pump = setInterval(() => {
      const frames = ws?.frames ?? [];
      for (; seen < frames.length; seen++) {
        const f = frames[seen];
        if (f !== undefined && (f.opcode === 0x1 || f.opcode === 0x2)) wsPipe.received += f.payload.toString('latin1');
      }
    }, 0);
    const out = { pause: { viaApiServer: [] as number[], viaNodeSocket: [] as number[] }, echo: { viaApiServer: [] as number[], viaNodeSocket: [] as number[] } };
    for (const op of Object.values(pauseSeries)) await timeEach(5, op); // warm-up
    const perBlock = Math.max(1, Math.ceil(samples / BLOCKS));
    for (let b = 0; b < BLOCKS; b++) {
      for (const [k, op] of Object.entries(pauseSeries) as [keyof typeof pauseSeries, () => Promise<void>][]) {
        await sleep(100);
        out.pause[k].push(...(await timeEach(perBlock, op)));
      }
    }
    // Console: the websocket first (a block), then the node stream takes over (a block), and so on.
    let i = 0;
    const echoBlock = async (pipe: Pipe): Promise<number[]> => timeEach(perBlock, () => echo(pipe, i++));
    wsPipe.write('\r');
    await waitIn(wsPipe, 0, '# ');
    for (let b = 0; b < BLOCKS; b++) {
      out.echo.viaApiServer.push(...(await echoBlock(wsPipe)));
      stream = nodeClient.console();
      const s = stream;
      const pipe: Pipe = { received: '', write: (t) => s.write({ input: { $case: 'data', value: Buffer.from(t, 'latin1') } }) };
      s.on('error', () => undefined);
      await new Promise<void>((resolve, reject) => {
        s.on('data', (m: node.StreamOutput) => {
          if (m.output?.$case === 'attached') resolve();
          else if (m.output?.$case === 'data') pipe.received += Buffer.from(m.output.value).toString('latin1');
        });
        s.on('status', (st: grpc.StatusObject) => st.code !== grpc.status.OK && reject(new Error(st.details)));
        s.write({ input: { $case: 'open', value: { vmi: ref, takeover: true } } });
      });
      out.echo.viaNodeSocket.push(...(await echoBlock(pipe)));
      s.end();
      stream = undefined;
      // The node stream took the console from the websocket: a new one takes it back.
      ws.destroy();
      ws = await openConsole(true);
      seen = 0;
    }
    clearInterval(pump);
    const sorted = (v: number[]): number[] => [...v].sort((a, c) => a - c);
    const line = (label: string, v: number[], floor?: number[]): string => {
      const s = sorted(v);
      const ratio = floor === undefined ? '' : `   ratio P50 ${(pct(s, 50) / pct(sorted(floor), 50)).toFixed(2)}`;
      return `  ${label.padEnd(40)} P50 ${ms(pct(s, 50))}   P95 ${ms(pct(s, 95))}${ratio}`;
    };
    console.log(`pause+unpause (n=${out.pause.viaNodeSocket.length} each)`);
    console.log(line('node socket (gRPC)', out.pause.viaNodeSocket));
    console.log(line('kube-apiserver → podvirt-api → handler', out.pause.viaApiServer, out.pause.viaNodeSocket));
    console.log(`console keystroke echo (n=${out.echo.viaNodeSocket.length} each)`);
    console.log(line('node socket (gRPC stream)', out.echo.viaNodeSocket));
    console.log(line('kube-apiserver → podvirt-api websocket', out.echo.viaApiServer, out.echo.viaNodeSocket));
  } finally {
    stream?.cancel();
    ws?.destroy();
    agent?.destroy();
    nodeClient.close();
    await suite.kubectl(['delete', 'vmi', '--all', '--wait=false']);
    await suite.close();
  }
}

await main();
