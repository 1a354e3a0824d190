import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, KubeConfig, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { startTestbed, type Testbed } from '../cli/start-testbed.js';
import { repoRoot } from '../guest/repo-root.js';
import { StackProcess, type LogLine } from './stack-process.js';

export interface PodvirtStackOptions {
  /** Holds the testbed's state; a fresh temp dir (removed by close) when unset. */
  readonly stateDir?: string;
  readonly nodeName?: string;
  readonly logger?: Logger;
  /** Extra flags for podvirt-controller / podvirt-handler, after the stack's own. */
  readonly controllerArgs?: readonly string[];
  readonly handlerArgs?: readonly string[];
  /** Extra environment for both processes. */
  readonly env?: Readonly<Record<string, string>>;
  /** The node binary that runs everything; the test's own by default. */
  readonly node?: string;
}

export interface PodvirtStack {
  readonly testbed: Testbed;
  readonly kubeconfigPath: string;
  readonly kubeConfig: KubeConfig;
  readonly nodeName: string;
  readonly stateDir: string;
  /** The short path the handler knows the kubelet's pods dir by (a symlink). */
  readonly podsDir: string;
  readonly controller: StackProcess;
  /** The current handler process; replaced by restartHandler(). */
  readonly handler: StackProcess;
  /** Starts a new handler once the current one has exited (kill it first); resolves once it has started. */
  restartHandler(): Promise<StackProcess>;
  /** Stops handler and controller (SIGTERM), then the testbed (its pods end), then removes the symlink. Idempotent. */
  close(): Promise<void>;
}

// A unix socket path has 108 bytes with the NUL; the handler's is
// `<podsDir>/<pod uid>/volumes/kubernetes.io~empty-dir/sockets/launcher-sock` = podsDir + 91,
// so the pods dir must be short, as KubeVirt's `/pods` mount is: `/tmp/pv-xxxxxxxx` fits.
const PODS_LINK_PREFIX = 'pv-';

async function shortPodsLink(target: string): Promise<string> {
  for (let attempt = 0; ; attempt++) {
    const link = join('/tmp', `${PODS_LINK_PREFIX}${randomBytes(4).toString('hex')}`);
    try {
      await symlink(target, link);
      return link;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 5) throw err;
    }
  }
}

/**
 * The whole podvirt node on the testbed: API server, scheduler and kubelet in this process,
 * podvirt-controller (`--allow-emulation`: TCG only here) and podvirt-handler as real
 * processes. The node is labelled schedulable for launcher pods.
 */
export async function startPodvirtStack(options: PodvirtStackOptions = {}): Promise<PodvirtStack> {
  const root = repoRoot(import.meta.url);
  const node = options.node ?? process.execPath;
  const stateDir = options.stateDir ?? (await mkdtemp(join(tmpdir(), 'podvirt-stack-')));
  const testbed = await startTestbed({
    stateDir,
    ...(options.nodeName === undefined ? {} : { nodeName: options.nodeName }),
    ...(options.logger === undefined ? {} : { logger: options.logger }),
  });
  const closers: Array<() => Promise<unknown>> = [() => testbed.close()];
  const closeAll = async (): Promise<void> => {
    for (const c of closers.splice(0).reverse()) await c();
  };
  try {
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromFile(testbed.kubeconfigPath);
    const kubeletPods = join(testbed.kubeletRoot, 'pods');
    await mkdir(kubeletPods, { recursive: true });
    const podsDir = await shortPodsLink(kubeletPods);
    closers.push(() => rm(podsDir, { force: true }));
    await labelSchedulable(kubeConfig, testbed.nodeName);

    const env = { ...process.env, ...options.env, NODE_NAME: testbed.nodeName };
    const controller = new StackProcess({
      name: 'controller',
      argv: [node, join(root, 'packages/controller/bin/podvirt-controller.js'), '--kubeconfig', testbed.kubeconfigPath, '--allow-emulation', ...(options.controllerArgs ?? [])],
      env: { ...env, POD_NAME: 'podvirt-controller-0' },
    });
    closers.push(() => controller.stop());
    const handlerArgv = [
      node, join(root, 'packages/handler/bin/podvirt-handler.js'),
      '--kubeconfig', testbed.kubeconfigPath, '--node-name', testbed.nodeName, '--pods-dir', podsDir,
      // The handler's host paths and ports, private to this stack so stacks never share them:
      // its log line 'HTTP endpoints listening' names the port; restarts reuse the records.
      ...handlerHostArgs(stateDir),
      ...(options.handlerArgs ?? []),
    ];
    const startHandler = (): StackProcess => new StackProcess({ name: 'handler', argv: handlerArgv, env });
    let handler = startHandler();
    closers.push(() => handler.stop());
    // Both list their informers before they act: wait so that a test's first VMI is not
    // timed against a process still starting.
    await Promise.all([
      startedLine(controller, (l) => l.msg === 'controller started'),
      startedLine(handler, (l) => / started$/.test(l.msg)),
    ]);
    let closing: Promise<void> | undefined;
    return {
      testbed,
      kubeconfigPath: testbed.kubeconfigPath,
      kubeConfig,
      nodeName: testbed.nodeName,
      stateDir,
      podsDir,
      controller,
      get handler() {
        return handler;
      },
      async restartHandler() {
        await handler.exited;
        handler = startHandler();
        await startedLine(handler, (l) => / started$/.test(l.msg));
        return handler;
      },
      close: () => (closing ??= closeAll()),
    };
  } catch (err) {
    await closeAll();
    throw err;
  }
}

/** Where a stack's handler keeps its ghost records and node API socket (under the state dir). */
export function handlerHostArgs(stateDir: string): string[] {
  const dir = join(stateDir, 'handler');
  return ['--ghost-record-dir', join(dir, 'ghost-records'), '--node-api-socket', join(dir, 'node.sock'), '--metrics-port', '0', '--health-port', '0'];
}

const START_TIMEOUT_MS = 30_000;

async function startedLine(proc: StackProcess, match: (line: LogLine) => boolean): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (!proc.lines.some(match)) {
    if (!proc.running) throw new Error(`${proc.name} exited while starting\n${proc.tail()}`);
    if (Date.now() > deadline) throw new Error(`${proc.name} did not start within ${START_TIMEOUT_MS} ms\n${proc.tail()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** What the handler's heartbeat says once it is ready; set here so pods schedule from the start. */
async function labelSchedulable(kubeConfig: KubeConfig, nodeName: string): Promise<void> {
  await kubeConfig.makeApiClient(CoreV1Api).patchNode(
    { name: nodeName, body: { metadata: { labels: { 'kubevirt.io/schedulable': 'true' } } } },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
}
