// `scripts/testbed-up` / `scripts/testbed-down`: the podvirt stack (testbed + controller +
// handler) kept up in a background process until asked to stop. The process writes what a
// user needs — kubeconfig, node API socket, its pid — to `<repo>/.testbed/podvirt-stack.json`
// once the stack is up, and removes it after a clean stop; its output and the components' JSON
// logs go to `<repo>/.testbed/podvirt-stack.log`, `controller.log`, `handler.log` (and `podvirt-api.log` on the real lane).
import { spawn } from 'node:child_process';
import { createWriteStream, openSync, closeSync } from 'node:fs';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { eventually, EventuallyTimeoutError } from '@podvirt/test-support';
import { repoRoot } from '../guest/repo-root.js';
import { RealNodeCluster } from '../real-node/real-node-cluster.js';
import { startPodvirtStack } from '../stack/start-podvirt-stack.js';
import { controlPlaneOption, type ControlPlane, type NodeKind } from './demo-args.js';

export interface StackInfo {
  readonly pid: number;
  readonly nodeName: string;
  readonly stateDir: string;
  readonly kubeconfig: string;
  readonly nodeApiSocket: string;
  /** Every node with its handler's node API socket (the first is the one above). */
  readonly nodes?: ReadonlyArray<{ readonly nodeName: string; readonly nodeApiSocket: string }>;
  /** The kubectl to use (the real control plane's own), when not the one on PATH. */
  readonly kubectl?: string;
  /** The real node's crictl (tools/cri-tools). */
  readonly crictl?: string;
}

export class StackServiceError extends Error {
  constructor(
    readonly code: 'STACK_ALREADY_UP' | 'STACK_NOT_UP' | 'STACK_START_FAILED',
    message: string,
  ) {
    super(message);
  }
}

/** What `up` asks for: how many nodes, and flags added to podvirt-controller's (`-- FLAGS…`). */
export interface StackShape {
  readonly nodes: number;
  readonly controllerArgs: readonly string[];
  /** The in-repo API server when unset. */
  readonly controlPlane?: ControlPlane;
  /** `real`: the upstream kubelet on containerd, podvirt installed as its pods (real-node/real-node-cluster.ts). */
  readonly node?: NodeKind;
}

export const ONE_NODE: StackShape = { nodes: 1, controllerArgs: [] };

/** The `serve` arguments that give the background process the same shape. */
function shapeArgs(shape: StackShape): string[] {
  return [
    ...(shape.node === 'real' ? ['--node', 'real'] : []),
    ...(shape.nodes === 1 ? [] : ['--nodes', String(shape.nodes)]),
    ...(shape.controlPlane === undefined || shape.controlPlane === 'testbed' || shape.node === 'real' ? [] : ['--control-plane', shape.controlPlane]),
    ...(shape.controllerArgs.length === 0 ? [] : ['--', ...shape.controllerArgs]),
  ];
}

export interface StackServicePaths {
  /** `<repo>/.testbed`. */
  readonly dir: string;
}

const INFO = 'podvirt-stack.json';
const LOG = 'podvirt-stack.log';
const START_TIMEOUT_MS = 90_000;
// The real node: the control plane, containerd, the kubelet, then podvirt's pods rolled out.
const REAL_NODE_START_TIMEOUT_MS = 300_000;
// Stopping ends every VM (each with its grace period) and the pods; bounded, then SIGKILL.
const STOP_TIMEOUT_MS = 120_000;

/** The background process: starts the stack, publishes its info, closes it when `signal` aborts. */
export async function serveStack(paths: StackServicePaths, pid: number, node: string, signal: AbortSignal, deviceRoot?: string, shape = ONE_NODE): Promise<void> {
  await mkdir(paths.dir, { recursive: true });
  if (shape.node === 'real') return serveRealNode(paths, pid, signal);
  const logs = { controller: createWriteStream(join(paths.dir, 'controller.log'), { flags: 'a' }), handler: createWriteStream(join(paths.dir, 'handler.log'), { flags: 'a' }), api: createWriteStream(join(paths.dir, 'podvirt-api.log'), { flags: 'a' }) };
  try {
    const stack = await startPodvirtStack({
      node, nodes: shape.nodes, controllerArgs: shape.controllerArgs, onLogLine: (component, line) => logs[component].write(`${line}\n`), ...controlPlaneOption(shape.controlPlane),
      ...(deviceRoot === undefined || deviceRoot === '' ? {} : { deviceRoot }),
    });
    try {
      const info: StackInfo = {
        pid, nodeName: stack.nodeName, stateDir: stack.stateDir, kubeconfig: stack.kubeconfigPath, nodeApiSocket: stack.nodeApiSocket,
        nodes: stack.nodes.map((n) => ({ nodeName: n.nodeName, nodeApiSocket: n.nodeApiSocket })),
      };
      await publish(paths, info);
      await aborted(signal);
    } finally {
      await stack.close();
      await rm(join(paths.dir, INFO), { force: true });
    }
  } finally {
    await Promise.all(Object.values(logs).map((l) => new Promise((r) => l.end(r))));
  }
}

/** serveStack for `--node real`: podvirt's logs are its pods' (kubectl logs -n podvirt). */
async function serveRealNode(paths: StackServicePaths, pid: number, signal: AbortSignal): Promise<void> {
  const cluster = await RealNodeCluster.start(repoRoot(import.meta.url));
  try {
    await cluster.install();
    await publish(paths, { pid, nodeName: cluster.node.nodeName, stateDir: cluster.dir, kubeconfig: cluster.kubeconfig, nodeApiSocket: cluster.nodeApiSocket, kubectl: cluster.cp.binaries.kubectl, crictl: cluster.node.binaries.crictl });
    await aborted(signal);
  } finally {
    await cluster.close();
    await rm(join(paths.dir, INFO), { force: true });
  }
}

async function publish(paths: StackServicePaths, info: StackInfo): Promise<void> {
  const tmp = join(paths.dir, `${INFO}.tmp`);
  await writeFile(tmp, `${JSON.stringify(info, null, 2)}\n`);
  await rename(tmp, join(paths.dir, INFO));
}

function aborted(signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
}

/** Starts the background process (`node <main> serve`) and resolves once the stack is up. */
export async function stackUp(paths: StackServicePaths, node: string, mainScript: string, alive: (pid: number) => boolean, shape = ONE_NODE): Promise<StackInfo> {
  const existing = await readInfo(paths);
  if (existing !== undefined && alive(existing.pid)) throw new StackServiceError('STACK_ALREADY_UP', `the stack is already up (pid ${existing.pid}); scripts/testbed-down stops it`);
  await mkdir(paths.dir, { recursive: true });
  await rm(join(paths.dir, INFO), { force: true });
  const logFd = openSync(join(paths.dir, LOG), 'a');
  let exited = false;
  let child;
  try {
    child = spawn(node, [mainScript, 'serve', ...shapeArgs(shape)], { detached: true, stdio: ['ignore', logFd, logFd] });
    child.once('exit', () => (exited = true));
    child.unref();
  } finally {
    closeSync(logFd);
  }
  const info = await eventually(async () => (await readInfo(paths)) ?? (exited ? 'exited' : undefined), { what: 'the stack up', deadlineMs: shape.node === 'real' ? REAL_NODE_START_TIMEOUT_MS : START_TIMEOUT_MS, stepMs: 200 })
    .catch((err: unknown) => {
      if (err instanceof EventuallyTimeoutError) return 'timeout' as const;
      throw err;
    });
  if (typeof info !== 'string') return info;
  // A stack still starting is told to stop (it closes what it started) rather than left behind.
  if (info === 'timeout') child.kill('SIGTERM');
  const log = await readFile(join(paths.dir, LOG), 'utf8').catch(() => '');
  throw new StackServiceError('STACK_START_FAILED', `the stack did not come up; ${join(paths.dir, LOG)} ends:\n${log.slice(-3000)}`);
}

/** SIGTERMs the background process and waits for it; SIGKILL after a bound. Returns how it ended. */
export async function stackDown(paths: StackServicePaths, kill: (pid: number, signal: NodeJS.Signals) => void, alive: (pid: number) => boolean): Promise<'stopped' | 'killed'> {
  const info = await readInfo(paths);
  if (info === undefined || !alive(info.pid)) {
    await rm(join(paths.dir, INFO), { force: true });
    throw new StackServiceError('STACK_NOT_UP', 'the stack is not up');
  }
  kill(info.pid, 'SIGTERM');
  try {
    await eventually(() => !alive(info.pid), { what: `stack process ${info.pid} stopped`, deadlineMs: STOP_TIMEOUT_MS, stepMs: 200 });
    return 'stopped';
  } catch (err) {
    if (!(err instanceof EventuallyTimeoutError)) throw err;
    kill(info.pid, 'SIGKILL');
    await rm(join(paths.dir, INFO), { force: true });
    return 'killed';
  }
}

async function readInfo(paths: StackServicePaths): Promise<StackInfo | undefined> {
  try {
    return JSON.parse(await readFile(join(paths.dir, INFO), 'utf8')) as StackInfo;
  } catch {
    return undefined;
  }
}
