import { mkdir, rm } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { pino, type Logger } from 'pino';
import { startApiServer, type ApiServer } from '../apiserver/api-server.js';
import type { JsonObject } from '../apiserver/json.js';
import { writeKubeconfig } from '../apiserver/kubeconfig.js';
import { Kubelet } from '../kubelet/kubelet.js';
import { closeOnSignal } from '../close-on-signal.js';
import { readPodvirtCrds } from './podvirt-crds.js';
import { testbedNodes, type TestbedNode } from './testbed-nodes.js';
import type { PodNetwork } from '../sandbox/pod-network.js';
import type { ImageMap } from '../kubelet/image-map.js';
import { runtimeNamed } from '../kubelet/image-runtime.js';
import { Scheduler } from '../scheduler/scheduler.js';
import { VolumeController } from '../storage/volume-controller.js';

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
}

export interface Testbed {
  kubeconfigPath: string;
  apiUrl: string;
  apiServer: ApiServer;
  /** The first node's; every node is in `nodes`. */
  nodeName: string;
  kubeletRoot: string;
  nodes: readonly TestbedNode[];
  close(): Promise<void>;
}

/** Starts API server, scheduler and kubelet in this process (what tests use). */
export async function startTestbed(options: TestbedOptions): Promise<Testbed> {
  const log = options.logger ?? pino({ level: 'silent' });
  await mkdir(options.stateDir, { recursive: true });
  const apiServer = await startApiServer({
    crds: [...(await readPodvirtCrds()), ...(options.crds ?? [])],
    logger: log,
    ...(options.historySize === undefined ? {} : { historySize: options.historySize }),
  });
  const kubeconfigPath = join(options.stateDir, 'kubeconfig');
  const nodes = testbedNodes(options.stateDir, options.nodeName ?? hostname(), options.nodes ?? 1);
  const [{ nodeName, kubeletRoot }] = nodes as [TestbedNode, ...TestbedNode[]];
  const closers: Array<() => Promise<void>> = [() => apiServer.close()];
  const close = async (): Promise<void> => {
    for (const c of closers.splice(0).reverse()) await c();
    await rm(options.stateDir, { recursive: true, force: true });
  };
  let closing: Promise<void> | undefined;
  const closeOnce = (): Promise<void> => (closing ??= (forget(), close()));
  const forget = closeOnSignal(closeOnce);
  try {
    await writeKubeconfig(kubeconfigPath, apiServer.url);
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromFile(kubeconfigPath);
    const scheduler = new Scheduler({ kubeConfig, logger: log });
    closers.push(() => scheduler.close());
    await scheduler.start();
    const volumes = new VolumeController({ kubeConfig, logger: log, provisionDir: join(options.stateDir, 'volumes') });
    closers.push(() => volumes.close());
    await volumes.start();
    let network: PodNetwork | undefined;
    for (const n of nodes) {
      const kubelet = new Kubelet({
        kubeConfig,
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
  return { kubeconfigPath, apiUrl: apiServer.url, apiServer, nodeName, kubeletRoot, nodes, close: closeOnce };
}
