// The testbed's real node: the upstream kubelet (the control plane's release, tools/kube) on
// containerd 2.x (tools/containerd) with Debian's runc and CNI plugins, joined to the real control
// plane as system:node:<name>. Its address is the gateway of the testbed's own pod bridge (never
// the machine's address); the API server reaches the kubelet there with the kubelet-client
// certificate, and the kubelet serves a certificate of the cluster CA for that address. Images come
// from podman's store (scripts/images) into containerd's k8s.io namespace; nothing is pulled.
//
// It uses the machine-wide paths a node has (containerd's /var/lib/containerd and /run/containerd,
// the kubelet's /var/lib/kubelet with its device-plugins directory), so one real node runs on a
// machine at a time; close() leaves none of its pods, containers, mounts, cgroups, network
// namespaces or iptables chains behind (realNodeLeftovers says what is left).

import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir, readdir, readFile, rm, rmdir, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Logger } from 'pino';
import { eventually } from '@podvirt/test-support';
import { issueCertificate } from '../control-plane/cluster-pki.js';
import { binaryDir } from '../control-plane/control-plane-binaries.js';
import { kubectlAs } from '../control-plane/kubectl-as.js';
import { SERVICE_IP, type RealControlPlane } from '../control-plane/real-control-plane.js';
import type { PodNetwork } from '../sandbox/pod-network.js';
import { runCommand } from '../sandbox/run-command.js';
import { StackProcess } from '../stack/stack-process.js';
import { containerdConfig, kubeletConfig } from './node-config.js';

export const CONTAINERD_ROOT = '/var/lib/containerd';
export const CONTAINERD_STATE = '/run/containerd';
export const CONTAINERD_SOCKET = '/run/containerd/containerd.sock';
export const KUBELET_ROOT = '/var/lib/kubelet';
/** The handler's node API socket on the host (its hostPath in manifests/30-handler-daemonset.yaml). */
export const NODE_API_SOCKET = '/var/run/podvirt/node.sock';
/** The namespace the CRI keeps its images, sandboxes and containers in. */
export const CRI_NAMESPACE = 'k8s.io';
const CNI_BIN_DIR = '/usr/lib/cni';
const RUNC = '/usr/sbin/runc';
const KUBELET_PORT = 10250;
const KUBELET_HEALTHZ_PORT = 10248;
/** What podman calls an image built here, and what containerd's CRI calls `podvirt/x:tag`. */
const PODMAN_PREFIX = 'localhost/';
const CRI_PREFIX = 'docker.io/';
/** containerd's label that tells which podman image an imported one is (skip it next time). */
const PODMAN_ID_LABEL = 'podvirt.podman-image-id';
const READY_TIMEOUT_MS = 120_000;
const STOP_GRACE_MS = 15_000;
/** What a container gets between SIGTERM and SIGKILL when the node closes (the handler's own shutdown grace is 15 s). */
const CONTAINER_STOP_GRACE_S = 20;

export class RealNodeError extends Error {
  constructor(
    readonly code: 'REAL_NODE_BUSY' | 'REAL_NODE_START_FAILED' | 'REAL_NODE_IMAGE_IMPORT_FAILED' | 'REAL_NODE_INSTALL_FAILED' | 'REAL_NODE_CLEANUP_FAILED',
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'RealNodeError';
  }
}

export interface RealNodeOptions {
  /** Holds the node's configuration, certificates and logs; the caller removes it. */
  readonly dir: string;
  readonly repoRoot: string;
  readonly nodeName: string;
  /** Started with `address` = the network's gateway, so pods reach the API server there too. */
  readonly controlPlane: RealControlPlane;
  /** The testbed's pod network, started: its bridge, /24 and conflist are what containerd's CNI uses. */
  readonly network: PodNetwork;
  /** podman images (as scripts/images names them, e.g. podvirt/podvirt:0.1.0) imported before the kubelet starts. */
  readonly images: readonly string[];
  /** The sandbox image, also from podman's store. */
  readonly pauseImage: string;
  readonly logger: Logger;
}

interface NodeBinaries {
  readonly containerd: string;
  readonly ctr: string;
  readonly crictl: string;
  readonly kubelet: string;
}

export class RealNode {
  readonly nodeName: string;
  /** The node's InternalIP: the gateway address on the testbed's bridge. */
  readonly nodeIP: string;
  readonly binaries: NodeBinaries;
  readonly #o: RealNodeOptions;
  readonly #log: Logger;
  readonly #processes = new Map<'containerd' | 'kubelet', StackProcess>();
  readonly #logs = new Map<'containerd' | 'kubelet', WriteStream>();
  /** The nat chain that sends the kubernetes Service's address to the API server (no kube-proxy here). */
  readonly #natChain: string;
  #closing: Promise<void> | undefined;

  private constructor(o: RealNodeOptions, binaries: NodeBinaries) {
    this.#o = o;
    this.nodeName = o.nodeName;
    this.nodeIP = o.network.gateway;
    this.binaries = binaries;
    this.#natChain = `PODVIRT-SVC-${o.network.stack.id}`.toUpperCase();
    this.#log = o.logger.child({ component: 'real-node', node: o.nodeName });
  }

  static async start(o: RealNodeOptions): Promise<RealNode> {
    if (o.network.gateway === '') throw new RealNodeError('REAL_NODE_START_FAILED', 'the pod network is not started: the node needs its address');
    const [containerdDir, criDir] = await Promise.all([binaryDir(o.repoRoot, 'containerd'), binaryDir(o.repoRoot, 'cri-tools')]);
    const binaries = {
      containerd: join(containerdDir, 'containerd'),
      ctr: join(containerdDir, 'ctr'),
      crictl: join(criDir, 'crictl'),
      kubelet: o.controlPlane.binaries.kubelet,
    };
    const busy = await runCommand([binaries.ctr, '--address', CONTAINERD_SOCKET, '--timeout', '2s', 'version']);
    if (busy.code === 0) throw new RealNodeError('REAL_NODE_BUSY', `a containerd already serves ${CONTAINERD_SOCKET}: one real node per machine (scripts/testbed-down stops the last one)`);
    await mkdir(o.dir, { recursive: true, mode: 0o700 });
    const node = new RealNode(o, binaries);
    try {
      await node.#startContainerd();
      await node.#importImages();
      await node.#serviceRoute();
      await node.#startKubelet();
      await node.#waitReady();
    } catch (err) {
      await node.close();
      throw err;
    }
    return node;
  }

  /** crictl against this node's containerd; rejects on a non-zero exit. */
  async crictl(args: readonly string[]): Promise<string> {
    const res = await runCommand([this.binaries.crictl, '--runtime-endpoint', `unix://${CONTAINERD_SOCKET}`, '--image-endpoint', `unix://${CONTAINERD_SOCKET}`, ...args], { timeoutMs: 60_000 });
    if (res.code !== 0) throw new RealNodeError('REAL_NODE_START_FAILED', `crictl ${args.join(' ')}: ${res.stderr.trim()}`);
    return res.stdout;
  }

  /** ctr in the CRI's namespace; rejects on a non-zero exit. */
  async ctr(args: readonly string[]): Promise<string> {
    const res = await runCommand([this.binaries.ctr, '--address', CONTAINERD_SOCKET, '--namespace', CRI_NAMESPACE, ...args], { timeoutMs: 300_000 });
    if (res.code !== 0) throw new RealNodeError('REAL_NODE_IMAGE_IMPORT_FAILED', `ctr ${args.join(' ')}: ${res.stderr.trim()}`);
    return res.stdout;
  }

  /** The component's process (fault tests kill and restart it). */
  process(component: 'containerd' | 'kubelet'): StackProcess | undefined {
    return this.#processes.get(component);
  }

  /** Starts a component again after it exited (a fault test killed it). */
  async restart(component: 'containerd' | 'kubelet'): Promise<void> {
    await this.#processes.get(component)?.exited;
    if (component === 'containerd') await this.#startContainerd();
    else await this.#startKubelet();
  }

  #spawn(name: 'containerd' | 'kubelet', argv: readonly string[], path = process.env['PATH']): StackProcess {
    let log = this.#logs.get(name);
    if (log === undefined) {
      log = createWriteStream(join(this.#o.dir, `${name}.log`), { flags: 'a' });
      this.#logs.set(name, log);
    }
    const out = log;
    const proc = new StackProcess({ name, argv, env: { PATH: path }, onLine: (l) => out.write(`${l}\n`), onStderrLine: (l) => out.write(`${l}\n`) });
    this.#processes.set(name, proc);
    return proc;
  }

  async #ready(proc: StackProcess, what: string, check: () => Promise<boolean>): Promise<void> {
    await eventually(async () => {
      if (!proc.running) throw new RealNodeError('REAL_NODE_START_FAILED', `${proc.name} exited while starting (log: ${join(this.#o.dir, `${proc.name}.log`)})\n${proc.stderr.slice(-3000)}`);
      return check();
    }, { what, deadlineMs: READY_TIMEOUT_MS, stepMs: 250 });
  }

  async #startContainerd(): Promise<void> {
    const config = join(this.#o.dir, 'containerd.toml');
    await writeFile(config, containerdConfig({
      root: CONTAINERD_ROOT,
      state: CONTAINERD_STATE,
      socket: CONTAINERD_SOCKET,
      cniConfDir: this.#o.network.stack.confDir,
      cniBinDir: CNI_BIN_DIR,
      sandboxImage: `${PODMAN_PREFIX}${this.#o.pauseImage}`,
      runc: RUNC,
    }));
    // containerd finds its shim (containerd-shim-runc-v2, built beside it) on PATH.
    const proc = this.#spawn('containerd', [this.binaries.containerd, '--config', config, '--log-level', 'warn'], `${dirname(this.binaries.containerd)}:${process.env['PATH'] ?? '/usr/sbin:/usr/bin:/sbin:/bin'}`);
    await this.#ready(proc, 'containerd to serve its socket', async () => (await runCommand([this.binaries.ctr, '--address', CONTAINERD_SOCKET, '--timeout', '2s', 'version'])).code === 0);
    this.#log.info({ pid: proc.pid }, 'containerd started');
  }

  /**
   * Each image from podman's store into the k8s.io namespace (podman save | ctr import), under
   * podman's name and the name the CRI gives `podvirt/x:tag`; skipped when containerd already
   * holds the same podman image.
   */
  async #importImages(): Promise<void> {
    const labelled = await this.ctr(['images', 'ls']);
    for (const image of [this.#o.pauseImage, ...this.#o.images]) {
      const local = `${PODMAN_PREFIX}${image}`;
      const id = await runCommand(['podman', 'image', 'inspect', '--format', '{{.Id}}', local]);
      if (id.code !== 0) throw new RealNodeError('REAL_NODE_IMAGE_IMPORT_FAILED', `${local} is not in podman's store: run scripts/images (${id.stderr.trim()})`);
      const podmanId = id.stdout.trim();
      const have = labelled.split('\n').some((l) => l.startsWith(`${local} `) && l.includes(`${PODMAN_ID_LABEL}=${podmanId}`));
      if (!have) {
        const started = Date.now();
        const archive = join(this.#o.dir, 'image.tar');
        const saved = await runCommand(['podman', 'save', '--format', 'docker-archive', '-o', archive, local], { timeoutMs: 300_000 });
        if (saved.code !== 0) throw new RealNodeError('REAL_NODE_IMAGE_IMPORT_FAILED', `podman save ${local}: ${saved.stderr.trim()}`);
        await this.ctr(['images', 'import', '--snapshotter', 'overlayfs', archive]);
        await rm(archive, { force: true });
        await this.ctr(['images', 'label', local, `${PODMAN_ID_LABEL}=${podmanId}`]);
        this.#log.info({ image: local, ms: Date.now() - started }, 'image imported into containerd');
      }
      await this.ctr(['images', 'tag', '--force', local, `${CRI_PREFIX}${image}`]);
    }
  }

  /**
   * Pods are told the API server is at the kubernetes Service (SERVICE_IP:443). Without
   * kube-proxy, one DNAT rule of the testbed's own chain sends what comes in on the bridge for
   * that address to where the API server listens (this node's address).
   */
  async #serviceRoute(): Promise<void> {
    const port = new URL(this.#o.controlPlane.url).port;
    await this.#removeServiceRoute();
    await iptables(['-t', 'nat', '-N', this.#natChain]);
    await iptables(['-t', 'nat', '-A', this.#natChain, '-d', `${SERVICE_IP}/32`, '-p', 'tcp', '--dport', '443', '-j', 'DNAT', '--to-destination', `${this.nodeIP}:${port}`]);
    await iptables(['-t', 'nat', '-I', 'PREROUTING', '-i', this.#o.network.stack.bridge, '-j', this.#natChain]);
  }

  async #removeServiceRoute(): Promise<void> {
    await runCommand(['iptables', '-t', 'nat', '-D', 'PREROUTING', '-i', this.#o.network.stack.bridge, '-j', this.#natChain]);
    await runCommand(['iptables', '-t', 'nat', '-F', this.#natChain]);
    await runCommand(['iptables', '-t', 'nat', '-X', this.#natChain]);
  }

  async #startKubelet(): Promise<void> {
    const cp = this.#o.controlPlane;
    const serving = await issueCertificate(cp.pki, `kubelet-serving-${this.nodeName}`, `/CN=${this.nodeName}`, 'serverAuth', `IP:${this.nodeIP},DNS:${this.nodeName}`);
    const config = join(this.#o.dir, 'kubelet-config.yaml');
    await writeFile(config, kubeletConfig({
      nodeIP: this.nodeIP,
      port: KUBELET_PORT,
      healthzPort: KUBELET_HEALTHZ_PORT,
      clientCAFile: cp.pki.caCert,
      tlsCertFile: serving.cert,
      tlsPrivateKeyFile: serving.key,
      resolvConf: '/etc/resolv.conf',
      runtimeSocket: CONTAINERD_SOCKET,
    }));
    const proc = this.#spawn('kubelet', [this.binaries.kubelet, `--config=${config}`, `--kubeconfig=${await cp.nodeKubeconfig(this.nodeName)}`,
      `--root-dir=${KUBELET_ROOT}`, `--hostname-override=${this.nodeName}`, `--node-ip=${this.nodeIP}`, '--v=1']);
    await this.#ready(proc, 'the kubelet to answer on its healthz port', async () => (await fetch(`http://127.0.0.1:${KUBELET_HEALTHZ_PORT}/healthz`).then((r) => r.text(), () => '')) === 'ok');
    this.#log.info({ pid: proc.pid }, 'kubelet started');
  }

  async #waitReady(): Promise<void> {
    const cp = this.#o.controlPlane;
    const proc = this.#processes.get('kubelet');
    if (proc === undefined) return;
    await this.#ready(proc, `node ${this.nodeName} to be Ready`, async () => {
      const out = await kubectlAs(cp, cp.adminKubeconfig, ['get', 'node', this.nodeName, '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].status}']).catch(() => '');
      return out.trim() === 'True';
    });
  }

  /**
   * Stops the kubelet, removes every pod sandbox of the CRI (stopping its containers and calling
   * CNI DEL), stops containerd, then removes what a node leaves when its pods are not deleted
   * through it: the kubelet's volume mounts and root, the pods' cgroups, the service route.
   * Imported images stay in containerd's store (a cache, like podman's). Idempotent.
   */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      const errors: unknown[] = [];
      const step = async (what: string, f: () => Promise<unknown>): Promise<void> => {
        await f().catch((err: unknown) => {
          this.#log.warn({ err }, `${what} failed`);
          errors.push(err);
        });
      };
      await step('stopping the kubelet', () => this.#stop('kubelet'));
      if (this.#processes.get('containerd')?.running === true) {
        // SIGTERM first, as the kubelet stops a pod: a container that cleans up on it (the
        // handler removes its node API socket under /var/run/podvirt) does so before the kill.
        await step('stopping the containers', () => this.#stopContainers());
        await step('removing the pod sandboxes', () => this.crictl(['rmp', '--all', '--force']));
        await step('removing the containers', () => this.crictl(['rm', '--all', '--force']));
      }
      await step('stopping containerd', () => this.#stop('containerd'));
      await step('removing the service route', () => this.#removeServiceRoute());
      await step('unmounting the kubelet root', () => unmountUnder([KUBELET_ROOT, CONTAINERD_STATE, `${CONTAINERD_ROOT}/`]));
      await step('removing the kubelet root', () => rm(KUBELET_ROOT, { recursive: true, force: true }));
      await step('removing the pods\' cgroups', () => removeKubepodsCgroups());
      await Promise.all([...this.#logs.values()].map((l) => new Promise((r) => l.end(r))));
      if (errors.length > 0) throw new RealNodeError('REAL_NODE_CLEANUP_FAILED', `the real node did not close cleanly: ${errors.map((e) => (e as Error).message).join('; ')}`, { cause: errors[0] });
    })();
    return this.#closing;
  }

  /** Every running container stopped with SIGTERM, SIGKILL after CONTAINER_STOP_GRACE_S, all at once. */
  async #stopContainers(): Promise<void> {
    const ids = (await this.crictl(['ps', '-q'])).split('\n').filter((id) => id !== '');
    if (ids.length > 0) await this.crictl(['stop', '--timeout', String(CONTAINER_STOP_GRACE_S), ...ids]);
  }

  async #stop(name: 'containerd' | 'kubelet'): Promise<void> {
    const exit = await this.#processes.get(name)?.stop(STOP_GRACE_MS);
    if (exit?.signal === 'SIGKILL') this.#log.warn({ component: name }, 'did not stop in time and was killed');
  }
}

async function iptables(args: readonly string[]): Promise<void> {
  const res = await runCommand(['iptables', ...args]);
  if (res.code !== 0) throw new RealNodeError('REAL_NODE_START_FAILED', `iptables ${args.join(' ')}: ${res.stderr.trim()}`);
}

/** Mount points of this mount namespace under the given prefixes, deepest first. */
async function mountsUnder(prefixes: readonly string[]): Promise<string[]> {
  const info = await readFile('/proc/self/mountinfo', 'utf8');
  const points = info.split('\n').map((l) => (l.split(' ')[4] ?? '').replace(/\\040/g, ' ')).filter((p) => p !== '' && prefixes.some((x) => p === x || p.startsWith(x.endsWith('/') ? x : `${x}/`)));
  return [...new Set(points)].sort((a, b) => b.length - a.length);
}

async function unmountUnder(prefixes: readonly string[]): Promise<void> {
  for (const point of await mountsUnder(prefixes)) {
    const res = await runCommand(['umount', '--lazy', point]);
    if (res.code !== 0) throw new RealNodeError('REAL_NODE_CLEANUP_FAILED', `umount ${point}: ${res.stderr.trim()}`);
  }
}

/** The cgroup v1 controllers' mount points (and the v2 one of a hybrid host). */
async function cgroupRoots(): Promise<string[]> {
  const info = await readFile('/proc/self/mountinfo', 'utf8');
  return info.split('\n').filter((l) => / - cgroup2? /.test(l)).map((l) => l.split(' ')[4] ?? '').filter((p) => p !== '');
}

/** Every kubepods cgroup the kubelet made (pods, QoS classes), children before parents. */
async function kubepodsCgroups(): Promise<string[]> {
  const found: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const e of entries) if (e.isDirectory()) await walk(join(dir, e.name));
    found.push(dir);
  };
  for (const root of await cgroupRoots()) {
    for (const top of ['kubepods', 'kubepods.slice']) {
      if ((await readdir(join(root, top)).catch(() => undefined)) !== undefined) await walk(join(root, top));
    }
  }
  return found;
}

async function removeKubepodsCgroups(): Promise<void> {
  for (const dir of await kubepodsCgroups()) await rmdir(dir);
}

/**
 * What a closed real node must not leave (descriptions; empty when clean): a CRI sandbox or
 * container, a containerd shim, containerd or kubelet process, a mount under the kubelet's root or
 * containerd's state, a kubepods cgroup, a CNI network namespace, a KUBE-* or the testbed's
 * iptables chain, the kubelet's pods directory, the handler's node API socket.
 */
export async function realNodeLeftovers(): Promise<string[]> {
  const left: string[] = [];
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const cmdline = (await readFile(`/proc/${name}/cmdline`, 'utf8').catch(() => '')).split('\0');
    const exe = cmdline[0]?.split('/').pop() ?? '';
    if (['containerd', 'containerd-shim-runc-v2', 'kubelet'].includes(exe)) left.push(`process ${name} (${cmdline.join(' ').slice(0, 100)})`);
  }
  for (const point of await mountsUnder([KUBELET_ROOT, CONTAINERD_STATE, `${CONTAINERD_ROOT}/`])) left.push(`mount ${point}`);
  for (const dir of await kubepodsCgroups()) left.push(`cgroup ${dir}`);
  for (const ns of await readdir('/run/netns').catch(() => [] as string[])) if (ns.startsWith('cni-')) left.push(`network namespace ${ns}`);
  const rules = await runCommand(['iptables-save']);
  for (const chain of new Set(rules.stdout.split('\n').filter((l) => /^:(KUBE-|PODVIRT-SVC-)/.test(l)).map((l) => l.slice(1).split(' ')[0]))) left.push(`iptables chain ${chain}`);
  if ((await readdir(join(KUBELET_ROOT, 'pods')).catch(() => undefined)) !== undefined) left.push(`path ${KUBELET_ROOT}/pods`);
  if (await stat(NODE_API_SOCKET).then(() => true, () => false)) left.push(`path ${NODE_API_SOCKET}`);
  return left;
}
