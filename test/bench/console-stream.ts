// The console's cost on the testbed with real VMs, against the floor measured in the same run:
// reading and writing the launcher pod's serial socket (qemu's) directly.
//   - keystroke echo round trip: a key typed → its echo read back (the guest's tty echoes it),
//     through `podvirtctl console` in a pseudo-terminal → handler → the serial socket, vs direct;
//   - flood throughput: bytes per second of a large `cat` in the guest, same two paths;
//   - handler memory (RSS) with N consoles attached at once (one per VMI), vs none.
// Prints P50/P95 and ratios; asserts nothing.
//
//   node test/dist/bench/console-stream.js [consoles]      (default: 20)
import { closeSync, constants, openSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { basename, dirname, join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import type { VirtualMachineInstance } from '@podvirt/api';
import { node } from '@podvirt/proto';
import { eventually } from '@podvirt/test-support';
import { spawn as spawnPty } from 'node-pty';
import { guestVmi, NS, VmiSuite } from '../e2e/vmi-stack.js';
import { repoRoot } from '../testbed/index.js';
import { pct } from './latency-sample.js';

const CTL = join(repoRoot(import.meta.url), 'packages/ctl/bin/podvirtctl.js');
const SAMPLES = 100;
const FLOOD_BYTES = 256 * 1024;

/** Bytes in, bytes out, and a wait for a pattern in what came in since a mark. */
interface Pipe {
  received: string;
  write(text: string): void;
  close(): void;
}

async function waitIn(pipe: Pipe, from: number, needle: string | RegExp, timeoutMs = 120_000): Promise<number> {
  // Every turn of the event loop: the wait is what the benchmark times.
  return eventually(() => {
    const tail = pipe.received.slice(from);
    const at = typeof needle === 'string' ? tail.indexOf(needle) : (needle.exec(tail)?.index ?? -1);
    return at >= 0 ? from + at : undefined;
  }, { what: String(needle), deadlineMs: timeoutMs, stepMs: 0 });
}

function serialSocketPath(suite: VmiSuite, vmi: VirtualMachineInstance): string {
  const pod = Object.keys(vmi.status?.activePods ?? {})[0] ?? '';
  return join(dirname(suite.serialLog(vmi, pod)), 'virt-serial0');
}

async function directPipe(path: string): Promise<Pipe> {
  const fd = openSync(dirname(path), constants.O_RDONLY | constants.O_DIRECTORY);
  const socket: Socket = await new Promise((resolve, reject) => {
    const s = connect(`/proc/self/fd/${fd}/${basename(path)}`, () => resolve(s));
    s.once('error', reject);
  });
  closeSync(fd);
  const pipe: Pipe = { received: '', write: (t) => socket.write(t), close: () => socket.destroy() };
  socket.on('data', (b: Buffer) => (pipe.received += b.toString('latin1')));
  return pipe;
}

async function ctlPipe(socket: string, name: string): Promise<Pipe> {
  const pty = spawnPty(process.execPath, [CTL, 'console', name, '-n', NS, '--socket', socket], { name: 'xterm', cols: 120, rows: 40 });
  const pipe: Pipe = { received: '', write: (t) => pty.write(t), close: () => pty.write('\x1d') };
  pty.onData((d) => (pipe.received += d));
  await waitIn(pipe, 0, 'Press Ctrl+] to detach.');
  return pipe;
}

async function echoRtt(pipe: Pipe): Promise<number[]> {
  pipe.write('\r');
  await waitIn(pipe, 0, '# ');
  const out: number[] = [];
  for (let i = 0; i < SAMPLES + 5; i++) {
    const key = String.fromCharCode(97 + (i % 26));
    const from = pipe.received.length;
    const at = performance.now();
    pipe.write(key);
    await waitIn(pipe, from, key);
    if (i >= 5) out.push(performance.now() - at);
    // Ctrl+U clears the line now and then, so the shell's line never grows long.
    if (i % 20 === 19) {
      const mark = pipe.received.length;
      pipe.write('\x15');
      await waitIn(pipe, mark, /./);
    }
  }
  pipe.write('\x15\r');
  return out.sort((a, b) => a - b);
}

async function flood(pipe: Pipe): Promise<number> {
  const from = pipe.received.length;
  const at = performance.now();
  pipe.write(`head -c ${FLOOD_BYTES} /dev/zero | tr '\\0' x; echo; echo FLOOD-""END\r`);
  await waitIn(pipe, from, 'FLOOD-END', 600_000);
  return FLOOD_BYTES / ((performance.now() - at) / 1000);
}

async function rssKiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN);
}

async function attachMany(socket: string, names: readonly string[]): Promise<() => void> {
  const client = new node.NodeClient(`unix:${socket}`, grpc.credentials.createInsecure());
  const calls = await Promise.all(names.map(async (name) => {
    const call = client.console();
    call.on('error', () => undefined);
    await new Promise<void>((resolve, reject) => {
      call.on('data', (m: node.StreamOutput) => m.output?.$case === 'attached' && resolve());
      call.on('status', (s: grpc.StatusObject) => reject(new Error(`${name}: ${s.details}`)));
      call.write({ input: { $case: 'open', value: { vmi: { namespace: NS, name }, takeover: false } } });
    });
    return call;
  }));
  return () => {
    for (const c of calls) c.end();
    client.close();
  };
}

const ms = (v: number): string => `${v.toFixed(2).padStart(7)} ms`;

async function main(): Promise<void> {
  const consoles = Number(process.argv[2] ?? 20);
  const suite = await VmiSuite.start();
  const socket = suite.stack.nodeApiSocket;
  try {
    const names = Array.from({ length: consoles }, (_, i) => `bench-console-${i}`);
    await suite.apply(...names.map((n) => guestVmi(suite.guest, n)));
    const vmis = await Promise.all(names.map((n) => suite.waitForPhase(n, 'Running', 600_000)));
    await Promise.all(vmis.map((v) => suite.waitForGuestReady(v)));
    const first = vmis[0] ?? (() => { throw new Error('no VMI'); })();

    const direct = await directPipe(serialSocketPath(suite, first));
    const directRtt = await echoRtt(direct);
    const directRate = await flood(direct);
    direct.close();
    const ctl = await ctlPipe(socket, names[0] ?? '');
    const ctlRtt = await echoRtt(ctl);
    const ctlRate = await flood(ctl);
    ctl.close();

    const handler = suite.stack.handler.pid;
    await new Promise((r) => setTimeout(r, 1_000));
    const idle = await rssKiB(handler);
    const release = await attachMany(socket, names);
    await new Promise((r) => setTimeout(r, 3_000));
    const attached = await rssKiB(handler);
    release();

    console.log(`console keystroke echo round trip (n=${SAMPLES})`);
    console.log(`  direct serial socket (floor)         P50 ${ms(pct(directRtt, 50))}   P95 ${ms(pct(directRtt, 95))}`);
    console.log(`  podvirtctl → handler → socket        P50 ${ms(pct(ctlRtt, 50))}   P95 ${ms(pct(ctlRtt, 95))}   ratio P50 ${(pct(ctlRtt, 50) / pct(directRtt, 50)).toFixed(2)}`);
    console.log(`console flood (${FLOOD_BYTES} bytes of cat in the guest)`);
    console.log(`  direct serial socket (floor)         ${(directRate / 1024).toFixed(1)} KiB/s`);
    console.log(`  podvirtctl → handler → socket        ${(ctlRate / 1024).toFixed(1)} KiB/s   ratio ${(ctlRate / directRate).toFixed(2)}`);
    console.log(`handler RSS: idle ${(idle / 1024).toFixed(1)} MiB, with ${consoles} consoles attached ${(attached / 1024).toFixed(1)} MiB (+${((attached - idle) / consoles).toFixed(0)} KiB per console)`);
  } finally {
    await suite.kubectl(['delete', 'vmi', '--all', '--wait=false']);
    await suite.close();
  }
}

await main();
