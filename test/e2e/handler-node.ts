// What the handler e2e suites use besides the VMI suite: podvirtctl runs against a stack's
// node API socket, the handler's /metrics scraped on the port its log names (and its samples
// read), a second handler
// process for "another node", and the guest's serial log read as lines.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import * as grpc from '@grpc/grpc-js';
import { node, promiseClient } from '@podvirt/proto';
import { repoRoot, StackProcess, type PodvirtStack } from '../testbed/index.js';

const run = promisify(execFile);
const ROOT = repoRoot(import.meta.url);

export interface CtlResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export function nodeApiSocket(stack: Pick<PodvirtStack, 'stateDir'>): string {
  return join(stack.stateDir, 'handler', 'node.sock');
}

export function ghostRecordDir(stack: Pick<PodvirtStack, 'stateDir'>): string {
  return join(stack.stateDir, 'handler', 'ghost-records');
}

/** The real podvirtctl against `socket`; exit code and output, never a throw. */
export async function podvirtctl(socket: string, ...args: string[]): Promise<CtlResult> {
  try {
    const { stdout, stderr } = await run(process.execPath, [join(ROOT, 'packages/ctl/bin/podvirtctl.js'), '--socket', socket, ...args], { timeout: 90_000 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

/** The port of the handler's /metrics listener, from its 'HTTP endpoints listening' log line. */
export function metricsPort(handler: StackProcess): number | undefined {
  const line = handler.lines.find((l) => l.msg === 'HTTP endpoints listening' && Array.isArray(l['paths']) && (l['paths'] as string[]).includes('/metrics'));
  return typeof line?.['port'] === 'number' ? line['port'] : undefined;
}

export async function scrape(port: number, path = '/metrics'): Promise<{ status: number; body: string }> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`);
  return { status: res.status, body: await res.text() };
}

/** kubevirt_vmi_phase_count samples of `node`, summed per phase. */
export function phaseCounts(metrics: string, node: string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const line of metrics.split('\n')) {
    const m = /^kubevirt_vmi_phase_count\{([^}]*)\} (\d+)$/.exec(line);
    if (m === null || !(m[1] ?? '').includes(`node="${node}"`)) continue;
    const phase = /phase="([^"]*)"/.exec(m[1] ?? '')?.[1] ?? '';
    counts[phase] = (counts[phase] ?? 0) + Number(m[2]);
  }
  return counts;
}

/** The samples of `metric` in a Prometheus text exposition (no HELP/TYPE), labels parsed. */
export function metricSamples(text: string, metric: string): Array<{ labels: Record<string, string>; value: number }> {
  const out: Array<{ labels: Record<string, string>; value: number }> = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${metric}{`) && !line.startsWith(`${metric} `)) continue;
    const m = /^[^{ ]+(?:\{(.*)\})? (\S+)$/.exec(line);
    if (m === null) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[1] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    out.push({ labels, value: Number(m[2]) });
  }
  return out;
}

/** A second handler, for a node that does not exist here: it must refuse this node's VMIs. */
export async function startOtherHandler(stack: PodvirtStack, nodeName: string): Promise<{ socket: string; process: StackProcess; close(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'pv-other-'));
  const socket = join(dir, 'node.sock');
  const process_ = new StackProcess({
    name: `handler-${nodeName}`,
    argv: [
      process.execPath, join(ROOT, 'packages/handler/bin/podvirt-handler.js'), '--kubeconfig', stack.kubeconfigPath, '--node-name', nodeName,
      '--pods-dir', join(dir, 'pods'), '--ghost-record-dir', join(dir, 'records'), '--node-api-socket', socket, '--metrics-port', '0', '--health-port', '0',
    ],
    env: { ...process.env },
  });
  return {
    socket,
    process: process_,
    async close() {
      await process_.stop(10_000);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Lines of a serial log that start with `marker`. */
export async function serialLines(path: string, marker: string): Promise<string[]> {
  const text = await readFile(path, 'utf8').catch(() => '');
  return text.split(/\r?\n/).filter((l) => l.includes(marker));
}

/** One raw node API call: the gRPC status name and details, to check the exact code. */
export async function nodeApiStatus(socket: string, method: 'pause' | 'guestOsInfo', ref: { namespace: string; name: string }): Promise<{ code: string; details: string }> {
  const client = new node.NodeClient(`unix:${socket}`, grpc.credentials.createInsecure());
  const calls = promiseClient(node.NodeService, client, { timeoutMs: 30_000 });
  try {
    return await calls[method](ref).then(
      () => ({ code: 'OK', details: '' }),
      (err: grpc.ServiceError) => ({ code: grpc.status[err.code], details: err.details }),
    );
  } finally {
    client.close();
  }
}
