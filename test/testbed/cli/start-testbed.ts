import { copyFile, mkdir, rm } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { KubeConfig, StorageV1Api } from '@kubernetes/client-node';
import { pino, type Logger } from 'pino';
import { startApiServer, type ApiServer } from '../apiserver/api-server.js';
import type { JsonObject } from '../apiserver/json.js';
import { writeKubeconfig } from '../apiserver/kubeconfig.js';
import { Kubelet } from '../kubelet/kubelet.js';
import { closeOnSignal } from '../close-on-signal.js';
import { readPodvirtCrds } from './podvirt-crds.js';
import { RealControlPlane } from '../control-plane/real-control-plane.js';
import { applyCrds } from '../control-plane/install-podvirt.js';
import { repoRoot } from '../guest/repo-root.js';
import { testbedNodes, type TestbedNode } from './testbed-nodes.js';
import type { PodNetwork } from '../sandbox/pod-network.js';
import type { ImageMap } from '../kubelet/image-map.js';
import { runtimeNamed } from '../kubelet/image-runtime.js';
import { Scheduler } from '../scheduler/scheduler.js';
import { DEFAULT_STORAGE_CLASS, VolumeController } from '../storage/volume-controller.js';

export interface TestbedOptions {
  /** Holds the kubeconfig and the kubelet root; removed again by close(). */
  stateDir: string;
  imageMap?: ImageMap;
  nodeName?: string;
  historySize?: number;
  logger?: Logger;
  /** Extra CRDs beside podvirt's own from manifests/crds. */
  crds?: JsonObject[];
  /** How many nodes (kubelets), 1 by default; see testbed-nodes.ts for their names and dirs. */
  nodes?: number;
  /** Where the kubelet finds device plugins' host paths (default `/`; a fake device tree in tests). */
  deviceHostRoot?: string;
  /** How the kubelet runs containers: `process` (default) or `image` (podman + runc, see kubelet/image-runtime.ts). */
  runtime?: string;
  /** Capabilities the image runtime never grants (see kubelet/image-runtime.ts). */
  withheldCapabilities?: readonly string[];
  /**
   * `testbed` (default): the in-repo API server and scheduler in this process. `real`: etcd,
   * kube-apiserver, kube-controller-manager and kube-scheduler built from their Go modules, the
   * kubelets joining as system:node:<name> (see control-plane/real-control-plane.ts).
   */
  controlPlane?: ControlPlane;
}

export type ControlPlane = 'testbed' | 'real';

export interface Testbed {
  /** system:masters on the real control plane. */
  kubeconfigPath: string;
  apiUrl: string;
  /** The in-repo API server; undefined on the real control plane. */
  apiServer: ApiServer | undefined;
  /** The real control plane; undefined on the in-repo one. */
  controlPlane: RealControlPlane | undefined;
  /** The first node's; every node is in `nodes`. */
  nodeName: string;
  kubeletRoot: string;
  nodes: readonly TestbedNode[];
  /**
   * The host's address on the testbed's pod network (its bridge's IPv4 gateway, a private address
   * the testbed made): where kube-apiserver reaches a stack process that an Endpoints object must
   * name (Endpoints refuse loopback).
   */
  hostAddress: string;
  close(): Promise<void>;
}

/** Starts API server, scheduler and kubelet in this process (what tests use); on the real control plane, its processes and the kubelets. */
export async function startTestbed(options: TestbedOptions): Promise<Testbed> {
  const log = options.logger ?? pino({ level: 'silent' });
  await mkdir(options.stateDir, { recursive: true });
  const kubeconfigPath = join(options.stateDir, 'kubeconfig');
  const nodes = testbedNodes(options.stateDir, options.nodeName ?? hostname(), options.nodes ?? 1);
  const [{ nodeName, kubeletRoot }] = nodes as [TestbedNode, ...TestbedNode[]];
  const closers: Array<() => Promise<void>> = [];
  const close = async (): Promise<void> => {
    for (const c of closers.splice(0).reverse()) await c();
    await rm(options.stateDir, { recursive: true, force: true });
  };
  let closing: Promise<void> | undefined;
  const closeOnce = (): Promise<void> => (closing ??= (forget(), close()));
  const forget = closeOnSignal(closeOnce);
  let apiServer: ApiServer | undefined;
  let controlPlane: RealControlPlane | undefined;
  let apiUrl = '';
  let network: PodNetwork | undefined;
  try {
    const kubeConfig = new KubeConfig();
    const nodeKubeConfigs = new Map<string, KubeConfig>();
    if (options.controlPlane === 'real') {
      const cp = await RealControlPlane.start({ dir: join(options.stateDir, 'control-plane'), repoRoot: repoRoot(import.meta.url), nodes: nodes.map((n) => n.nodeName), logger: log });
      controlPlane = cp;
      closers.push(() => cp.close());
      apiUrl = cp.url;
      await copyFile(cp.adminKubeconfig, kubeconfigPath);
      kubeConfig.loadFromFile(kubeconfigPath);
      await applyCrds(cp, kubeconfigPath, options.crds ?? [], options.stateDir);
      for (const n of nodes) {
        const k = new KubeConfig();
        k.loadFromFile(await cp.nodeKubeconfig(n.nodeName));
        nodeKubeConfigs.set(n.nodeName, k);
      }
    } else {
      const server = await startApiServer({
        crds: [...(await readPodvirtCrds()), ...(options.crds ?? [])],
        logger: log,
        ...(options.historySize === undefined ? {} : { historySize: options.historySize }),
      });
      apiServer = server;
      closers.push(() => server.close());
      apiUrl = server.url;
      await writeKubeconfig(kubeconfigPath, server.url);
      kubeConfig.loadFromFile(kubeconfigPath);
      // kube-scheduler does this job on the real control plane.
      const scheduler = new Scheduler({ kubeConfig, logger: log });
      closers.push(() => scheduler.close());
      await scheduler.start();
    }
    // kube-controller-manager binds on the real control plane; the testbed's provisioner serves the default class on both.
    await kubeConfig.makeApiClient(StorageV1Api).createStorageClass({ body: DEFAULT_STORAGE_CLASS });
    const volumes = new VolumeController({
      kubeConfig, logger: log, provisionDir: join(options.stateDir, 'volumes'), nodeNames: nodes.map((n) => n.nodeName),
      role: controlPlane === undefined ? 'controller' : 'provisioner',
    });
    closers.push(() => volumes.close());
    await volumes.start();
    for (const n of nodes) {
      const servingCert = controlPlane?.pki.nodeServing.get(n.nodeName);
      const kubelet = new Kubelet({
        kubeConfig: nodeKubeConfigs.get(n.nodeName) ?? kubeConfig,
        ...(servingCert === undefined ? {} : { servingCert }),
        nodeName: n.nodeName,
        rootDir: n.kubeletRoot,
        logger: log,
        ...(options.imageMap === undefined ? {} : { imageMap: options.imageMap }),
        ...(network === undefined ? {} : { network }),
        ...(options.deviceHostRoot === undefined ? {} : { deviceHostRoot: options.deviceHostRoot }),
        runtime: runtimeNamed(options.runtime ?? 'process', n.kubeletRoot, { withheldCapabilities: options.withheldCapabilities ?? [] }),
      });
      closers.push(() => kubelet.close());
      await kubelet.start();
      network ??= kubelet.network;
    }
  } catch (err) {
    await closeOnce();
    throw err;
  }
  return { kubeconfigPath, apiUrl, apiServer, controlPlane, nodeName, kubeletRoot, nodes, hostAddress: network?.gateway ?? '', close: closeOnce };
}

