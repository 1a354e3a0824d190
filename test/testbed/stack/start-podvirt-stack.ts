import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CoreV1Api, KubeConfig, PatchStrategy, setHeaderOptions, type V1Namespace } from '@kubernetes/client-node';
import { eventually, makeMigrationCertificates } from '@podvirt/test-support';
import { pino, type Logger } from 'pino';
import { writeKubeconfig, writeTlsKubeconfig } from '../apiserver/kubeconfig.js';
import type { RequestListener } from '../apiserver/request-record.js';
import { startTestbed, type ControlPlane, type Testbed } from '../cli/start-testbed.js';
import { installManifests } from '../control-plane/install-podvirt.js';
import { kubectlAs } from '../control-plane/kubectl-as.js';
import { ServiceAccountTokens } from '../control-plane/service-account-tokens.js';
import { closeOnSignal } from '../close-on-signal.js';
import { repoRoot } from '../guest/repo-root.js';
import { findWorkload, loadManifests, type ManifestWorkload } from './manifest-workload.js';
import { inRepoAggregation, nodeApiAccess } from './node-api-access.js';
import { startPodvirtApi } from './podvirt-api-process.js';
import { StackProcess, type LogLine } from './stack-process.js';
import { testbedCommand, type TestbedCommand, type TestbedMapping } from './testbed-command.js';

export interface PodvirtStackOptions {
  /** Holds the testbed's state; a fresh temp dir (removed by close) when unset. */
  readonly stateDir?: string;
  readonly nodeName?: string;
  readonly logger?: Logger;
  /** Extra flags for podvirt-controller / podvirt-handler, after the stack's own. */
  readonly controllerArgs?: readonly string[];
  readonly handlerArgs?: readonly string[];
  /**
   * A fake host root whose dev/ holds the device nodes: the handlers' --device-root and where
   * the kubelets read the allocated nodes from (default: the real /dev).
   */
  readonly deviceRoot?: string;
  /** Extra environment for both processes. */
  readonly env?: Readonly<Record<string, string>>;
  /** The node binary that runs everything; the test's own by default. */
  readonly node?: string;
  /** Every stdout line of controller and handler as it arrives. */
  readonly onLogLine?: (component: 'controller' | 'handler' | 'api', line: string, nodeName?: string) => void;
  /** Sees every API request from the start, before controller and handler run (an audit log). */
  readonly onRequest?: RequestListener;
  /** How many nodes, each with its kubelet and handler (1 by default; 2 for migration). */
  readonly nodes?: number;
  /** The kubelet's container runtime: `process` (default) or `image` (the built images, podman + runc). */
  readonly runtime?: string;
  /** Capabilities the image runtime never grants, as on a node whose runtime cannot (a launcher that needs one fails). */
  readonly withheldCapabilities?: readonly string[];
  /**
   * `real`: the upstream control plane (see cli/start-testbed.ts); podvirt installed with
   * `kubectl apply` of manifests/ but its Deployment and DaemonSet, controller and handler
   * authenticating with their ServiceAccounts' tokens (control-plane/service-account-tokens.ts).
   */
  readonly controlPlane?: ControlPlane;
}

/** One node of the stack: its kubelet's pods dir as its handler sees it, and that handler. */
export interface StackNode {
  readonly nodeName: string;
  readonly podsDir: string;
  /** The handler's host dirs: node.sock and ghost-records/ are here. */
  readonly handlerDir: string;
  readonly nodeApiSocket: string;
  /** The node's current handler process; replaced by restartHandler(). */
  readonly handler: StackProcess;
  /** Starts a new handler once the current one has exited (kill it first); resolves once it has started. */
  restartHandler(): Promise<StackProcess>;
}

export interface PodvirtStack {
  readonly testbed: Testbed;
  readonly kubeconfigPath: string;
  readonly kubeConfig: KubeConfig;
  readonly nodeName: string;
  readonly stateDir: string;
  /** The short path the handler knows the kubelet's pods dir by (a symlink). */
  readonly podsDir: string;
  /** The handler's node API socket (its host dirs are `<stateDir>/handler`). */
  readonly nodeApiSocket: string;
  /** What the processes run, from the manifests through the testbed mapping (without extra args). */
  readonly controllerCommand: TestbedCommand;
  readonly handlerCommand: TestbedCommand;
  readonly controller: StackProcess;
  /** podvirt-api, on both lanes (podvirt-api-process.ts); replaced by restartApi(). */
  readonly api: StackProcess;
  /** Starts podvirt-api again (same command and port) once the current one has exited (stop it first); resolves once it has started. */
  restartApi(): Promise<StackProcess>;
  /** The current handler process; replaced by restartHandler(). */
  readonly handler: StackProcess;
  /** Starts a new handler once the current one has exited (kill it first); resolves once it has started. */
  restartHandler(): Promise<StackProcess>;
  /** Every node, the first one being the node the single-node fields above describe. */
  readonly nodes: readonly StackNode[];
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
 * podvirt-controller and podvirt-handler as real processes started as the install manifests
 * start them (see testbed-command.ts for the few host-specific substitutions). The node is
 * labelled schedulable for launcher pods.
 */
export async function startPodvirtStack(options: PodvirtStackOptions = {}): Promise<PodvirtStack> {
  const root = repoRoot(import.meta.url);
  const node = options.node ?? process.execPath;
  const stateDir = options.stateDir ?? (await mkdtemp(join(tmpdir(), 'podvirt-stack-')));
  const testbed = await startTestbed({
    stateDir,
    ...(options.nodeName === undefined ? {} : { nodeName: options.nodeName }),
    ...(options.logger === undefined ? {} : { logger: options.logger }),
    ...(options.nodes === undefined ? {} : { nodes: options.nodes }),
    ...(options.deviceRoot === undefined ? {} : { deviceHostRoot: options.deviceRoot }),
    ...(options.runtime === undefined ? {} : { runtime: options.runtime }),
    ...(options.withheldCapabilities === undefined ? {} : { withheldCapabilities: options.withheldCapabilities }),
    ...(options.controlPlane === undefined ? {} : { controlPlane: options.controlPlane }),
  });
  const closers: Array<() => Promise<unknown>> = [() => testbed.close()];
  if (options.onRequest !== undefined) {
    if (testbed.apiServer === undefined) {
      await testbed.close();
      throw new Error('onRequest needs the in-repo API server; the real one counts requests in its apiserver_request_total metric');
    }
    testbed.apiServer.onRequest(options.onRequest);
  }
  const closeAll = async (): Promise<void> => {
    for (const c of closers.splice(0).reverse()) await c();
  };
  // The handlers and controller before the testbed (which registered its own close first).
  let closing: Promise<void> | undefined;
  const closeOnce = (): Promise<void> => (closing ??= (forget(), closeAll()));
  const forget = closeOnSignal(closeOnce);
  try {
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromFile(testbed.kubeconfigPath);
    const podsDirs: string[] = [];
    for (const n of testbed.nodes) {
      const kubeletPods = join(n.kubeletRoot, 'pods');
      await mkdir(kubeletPods, { recursive: true });
      const link = await shortPodsLink(kubeletPods);
      podsDirs.push(link);
      closers.push(() => rm(link, { force: true }));
      await labelSchedulable(kubeConfig, n.nodeName);
    }
    const podsDir = podsDirs[0] ?? '';
    const cp = testbed.controlPlane;
    const nodeNames = testbed.nodes.map((n) => n.nodeName);
    const apiServer = testbed.apiServer;
    // Made side by side (each CA in a directory of its own): the migration certificates the
    // DaemonSet gets from its Secret, a CA made for this stack and one certificate per node
    // (openssl, as the handler README tells an operator); the manifests, as which the components
    // run (manifests/*.yaml, through the mapping in testbed-command.ts; their namespace comes from
    // them too); and the handlers' TLS node API, for podvirt-api's subresource API, which both
    // API servers aggregate (the in-repo one once given its front-proxy certificates).
    const [migrationTls, manifests, nodeApi] = await Promise.all([
      makeMigrationCertificates(join(stateDir, 'migration-certificates'), nodeNames),
      loadManifests(root),
      cp !== undefined ? nodeApiAccess(cp.pki, nodeNames)
        : apiServer !== undefined ? mkdirFor(join(stateDir, 'pki')).then((dir) => inRepoAggregation(dir, apiServer, nodeNames))
        : undefined,
    ]);
    let tokens: ServiceAccountTokens | undefined;
    if (cp === undefined) await createNamespaces(kubeConfig, manifests);
    else {
      await installManifests(cp, root, testbed.kubeconfigPath);
      const t = new ServiceAccountTokens(kubeConfig, options.logger ?? pino({ level: 'silent' }));
      tokens = t;
      closers.push(async () => t.close());
    }
    const handlerDir = join(stateDir, 'handler');
    const mapping = async (workload: ManifestWorkload, extraArgs: readonly string[], at = { nodeName: testbed.nodeName, podsDir, handlerDir, kubeletRoot: testbed.kubeletRoot, index: 0 }): Promise<TestbedMapping> => {
      const kubeconfig = join(stateDir, `${workload.name}-${at.index}.kubeconfig`);
      if (cp === undefined || tokens === undefined) await writeKubeconfig(kubeconfig, testbed.apiUrl, `system:serviceaccount:${workload.namespace}:${workload.serviceAccountName}`);
      else {
        // A DaemonSet pod's token names its node; the Deployment's pod runs anywhere.
        const file = join(stateDir, `${workload.name}-${at.index}.token`);
        await tokens.keep({ namespace: workload.namespace, serviceAccount: workload.serviceAccountName, file, ...(workload.kind === 'DaemonSet' ? { boundNode: at.nodeName } : {}) });
        await writeTlsKubeconfig(kubeconfig, cp.url, cp.pki.caCert, { tokenFile: file });
      }
      return {
        binaries: {
          '/usr/bin/podvirt-controller': [node, join(root, 'packages/controller/bin/podvirt-controller.js')],
          '/usr/bin/podvirt-handler': [node, join(root, 'packages/handler/bin/podvirt-handler.js')],
          '/usr/bin/podvirt-api': [node, join(root, 'packages/podvirt-api/bin/podvirt-api.js')],
        },
        fieldRefs: { 'spec.nodeName': at.nodeName, 'metadata.name': `${workload.name}-${at.index}`, 'metadata.namespace': workload.namespace, 'status.podIP': '127.0.0.1' },
        // Both handler host dirs are one per-node dir: suites find node.sock and ghost-records/ there.
        hostPaths: {
          '/var/lib/kubelet/pods': at.podsDir, '/var/run/podvirt': at.handlerDir, '/var/run/podvirt-private': at.handlerDir,
          '/var/lib/kubelet/device-plugins': join(at.kubeletRoot, 'device-plugins'),
        },
        flagValues: { '--metrics-port': '0', '--health-port': '0', '--migration-tls-dir': migrationTls.get(at.nodeName) ?? '' },
        extraArgs: ['--kubeconfig', kubeconfig, ...extraArgs],
      };
    };
    const controllerWorkload = findWorkload(manifests, 'Deployment', 'podvirt-controller');
    const handlerWorkload = findWorkload(manifests, 'DaemonSet', 'podvirt-handler');
    const controllerCommand = testbedCommand(controllerWorkload, await mapping(controllerWorkload, ['--allow-emulation']));
    const handlerCommand = testbedCommand(handlerWorkload, await mapping(handlerWorkload, nodeApi?.handlerArgs.get(testbed.nodeName) ?? []));
    const env = (command: TestbedCommand): Record<string, string | undefined> => ({ ...process.env, ...command.env, ...options.env });
    const controller = new StackProcess({
      name: 'controller',
      argv: [...controllerCommand.argv, ...(options.controllerArgs ?? [])],
      env: env(controllerCommand),
      ...(options.onLogLine === undefined ? {} : { onLine: (line: string) => options.onLogLine?.('controller', line) }),
    });
    closers.push(() => controller.stop());
    const nodes: StackNode[] = [];
    for (const [index, n] of testbed.nodes.entries()) {
      const at = { nodeName: n.nodeName, podsDir: podsDirs[index] ?? '', handlerDir: index === 0 ? handlerDir : join(stateDir, `handler-${index + 1}`), kubeletRoot: n.kubeletRoot, index };
      const command = index === 0 ? handlerCommand : testbedCommand(handlerWorkload, await mapping(handlerWorkload, nodeApi?.handlerArgs.get(n.nodeName) ?? [], at));
      const deviceRoot = options.deviceRoot === undefined ? [] : ['--device-root', options.deviceRoot];
      nodes.push(stackNode(at, [...command.argv, ...deviceRoot, ...(options.handlerArgs ?? [])], env(command), options.onLogLine, closers));
    }
    // podvirt-api on both lanes: both API servers call its admission webhooks and proxy its
    // subresource API.
    const apply = cp === undefined
      ? (file: string) => kubectlApply(testbed.kubeconfigPath, file)
      : (file: string) => kubectlAs(cp, testbed.kubeconfigPath, ['apply', '-f', file]);
    const started = await startPodvirtApi({
      apply, host: testbed.hostAddress, ...(nodeApi === undefined ? {} : { handlers: nodeApi.access }), manifests, stateDir, env, mapping: (w) => mapping(w, []),
      ...(options.onLogLine === undefined ? {} : { onLine: (line: string) => options.onLogLine?.('api', line) }),
    });
    let api = started.process;
    closers.push(() => api.stop());
    const first = nodes[0] as StackNode;
    // All list their informers before they act: wait so that a test's first VMI is not
    // timed against a process still starting.
    await Promise.all([
      startedLine(controller, (l) => l.msg === 'controller started'),
      ...nodes.map((n) => startedLine(n.handler, (l) => / started$/.test(l.msg))),
      startedLine(api, (l) => l.msg === 'podvirt-api started'),
    ]);
    return {
      testbed,
      kubeconfigPath: testbed.kubeconfigPath,
      kubeConfig,
      nodeName: testbed.nodeName,
      stateDir,
      podsDir,
      nodeApiSocket: first.nodeApiSocket,
      controllerCommand,
      handlerCommand,
      controller,
      get api() {
        return api;
      },
      async restartApi() {
        await api.exited;
        api = started.respawn();
        await startedLine(api, (l) => l.msg === 'podvirt-api started');
        return api;
      },
      get handler() {
        return first.handler;
      },
      restartHandler: () => first.restartHandler(),
      nodes,
      close: closeOnce,
    };
  } catch (err) {
    await closeOnce();
    throw err;
  }
}

const START_TIMEOUT_MS = 30_000;

type OnLogLine = PodvirtStackOptions['onLogLine'];

/** A node's handler, started now, restartable, stopped by the stack's close. */
function stackNode(
  at: { nodeName: string; podsDir: string; handlerDir: string },
  argv: readonly string[],
  env: Record<string, string | undefined>,
  onLogLine: OnLogLine,
  closers: Array<() => Promise<unknown>>,
): StackNode {
  const start = (): StackProcess => new StackProcess({
    name: 'handler',
    argv: [...argv],
    env,
    ...(onLogLine === undefined ? {} : { onLine: (line: string) => onLogLine('handler', line, at.nodeName) }),
  });
  let handler = start();
  closers.push(() => handler.stop());
  return {
    nodeName: at.nodeName,
    podsDir: at.podsDir,
    handlerDir: at.handlerDir,
    nodeApiSocket: join(at.handlerDir, 'node.sock'),
    get handler() {
      return handler;
    },
    async restartHandler() {
      await handler.exited;
      handler = start();
      await startedLine(handler, (l) => / started$/.test(l.msg));
      return handler;
    },
  };
}

async function startedLine(proc: StackProcess, match: (line: LogLine) => boolean): Promise<void> {
  await eventually(() => {
    if (proc.lines.some(match)) return true;
    if (!proc.running) throw new Error(`${proc.name} exited while starting\n${proc.tail()}`);
    return undefined;
  }, { what: `${proc.name} started`, deadlineMs: START_TIMEOUT_MS, stepMs: 50, detail: () => proc.tail() });
}

/** `kubectl apply -f file` against the in-repo API server, with the machine's kubectl. */
async function kubectlApply(kubeconfig: string, file: string): Promise<void> {
  try {
    await promisify(execFile)('kubectl', ['--kubeconfig', kubeconfig, 'apply', '-f', file], { timeout: 60_000 });
  } catch (err) {
    const stderr = (err as { stderr?: string }).stderr?.trim() ?? (err as Error).message;
    throw new Error(`kubectl apply -f ${file}: ${stderr}`, { cause: err });
  }
}

/** The Namespaces of the manifests (podvirt's own), created as `kubectl apply` would. */
async function createNamespaces(kubeConfig: KubeConfig, manifests: readonly Record<string, unknown>[]): Promise<void> {
  const core = kubeConfig.makeApiClient(CoreV1Api);
  for (const doc of manifests.filter((d) => d['kind'] === 'Namespace')) await core.createNamespace({ body: doc as V1Namespace });
}

/** What the handler's heartbeat says once it is ready; set here so pods schedule from the start. */
async function labelSchedulable(kubeConfig: KubeConfig, nodeName: string): Promise<void> {
  await kubeConfig.makeApiClient(CoreV1Api).patchNode(
    { name: nodeName, body: { metadata: { labels: { 'kubevirt.io/schedulable': 'true' } } } },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
}

/** `dir`, made (mode 0700: it holds keys). */
async function mkdirFor(dir: string): Promise<string> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  return dir;
}
