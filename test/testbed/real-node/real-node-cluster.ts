// The whole real-node lane in one object: the testbed's pod network, the real control plane on its
// gateway, the real node (real-node.ts) joined to it, and podvirt installed on it from manifests/
// (install-podvirt.ts). `scripts/demo --node real`, `scripts/testbed-up --node real` and the
// real-node e2e file (test/e2e/real-node-stack.ts) start it the same way.
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino, type Logger } from 'pino';
import { kubectlAs } from '../control-plane/kubectl-as.js';
import { RealControlPlane } from '../control-plane/real-control-plane.js';
import { PodNetwork } from '../sandbox/pod-network.js';
import { installPodvirtPods, waitForPodvirtPods } from './install-podvirt.js';
import { NODE_API_SOCKET, realNodeLeftovers, RealNode } from './real-node.js';

export const REAL_NODE_NAME = 'podvirt-real-node';
/** The tag scripts/images gives podvirt's own images. */
export const PODVIRT_IMAGE_TAG = '0.1.0';

export interface RealNodeParts {
  /** Holds the network's, control plane's and node's state and logs; removed by close. */
  readonly dir: string;
  readonly root: string;
  readonly network: PodNetwork;
  readonly cp: RealControlPlane;
  readonly node: RealNode;
}

export class RealNodeCluster implements RealNodeParts {
  readonly dir: string;
  readonly root: string;
  readonly network: PodNetwork;
  readonly cp: RealControlPlane;
  readonly node: RealNode;
  /** Where the handler's node API socket is on the host (its hostPath): podvirtctl's PODVIRT_NODE_SOCKET. */
  readonly nodeApiSocket = NODE_API_SOCKET;

  constructor(parts: RealNodeParts) {
    this.dir = parts.dir;
    this.root = parts.root;
    this.network = parts.network;
    this.cp = parts.cp;
    this.node = parts.node;
  }

  /**
   * The network, the control plane and the node, started (podvirt not yet installed: install()).
   * Closes what it started when a step fails; REAL_NODE_BUSY when a real node runs already.
   */
  static async start(root: string, logger: Logger = pino({ level: 'silent' })): Promise<RealNodeCluster> {
    return new RealNodeCluster(await startRealNodeParts(root, logger));
  }

  /** The cluster admin's kubeconfig. */
  get kubeconfig(): string {
    return this.cp.adminKubeconfig;
  }

  /** kubectl (the control plane's own) as the cluster's admin. */
  admin(args: readonly string[]): Promise<string> {
    return kubectlAs(this.cp, this.cp.adminKubeconfig, args);
  }

  /** podvirt from manifests/ (install-podvirt.ts), its workloads rolled out. */
  async install(): Promise<void> {
    await installPodvirtPods(this.cp, this.cp.adminKubeconfig, this.root, this.dir);
    await waitForPodvirtPods(this.cp, this.cp.adminKubeconfig);
  }

  /** The node (its pods stopped and removed), then the control plane and the network; removes `dir`. */
  async close(): Promise<void> {
    try {
      await this.node.close();
    } finally {
      await this.cp.close();
      await this.network.close();
      await rm(this.dir, { recursive: true, force: true });
    }
  }

  /** What the closed cluster left: the node's leftovers (realNodeLeftovers) and its state dir. */
  async leftovers(): Promise<string[]> {
    const left = await realNodeLeftovers();
    if (await stat(this.dir).then(() => true, () => false)) left.push(`path ${this.dir}`);
    return left;
  }
}

async function startRealNodeParts(root: string, log: Logger): Promise<RealNodeParts> {
  const dir = await mkdtemp(join(tmpdir(), 'podvirt-real-node-'));
  const network = new PodNetwork({ rootDir: join(dir, 'network'), log });
  let cp: RealControlPlane | undefined;
  try {
    await network.start();
    cp = await RealControlPlane.start({ dir: join(dir, 'control-plane'), repoRoot: root, nodes: [REAL_NODE_NAME], logger: log, address: network.gateway });
    const node = await RealNode.start({
      dir: join(dir, 'node'),
      repoRoot: root,
      nodeName: REAL_NODE_NAME,
      controlPlane: cp,
      network,
      images: [`podvirt/podvirt:${PODVIRT_IMAGE_TAG}`, `podvirt/launcher:${PODVIRT_IMAGE_TAG}`, 'podvirt/test-guest:latest'],
      pauseImage: `podvirt/pause:${PODVIRT_IMAGE_TAG}`,
      logger: log,
    });
    return { dir, root, network, cp, node };
  } catch (err) {
    await cp?.close();
    await network.close();
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
}
