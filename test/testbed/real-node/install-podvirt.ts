// podvirt installed on the real node as an operator installs it: the CRDs (Established), then
// every document of manifests/ with `kubectl apply`, its workloads run by the upstream kubelet
// from the podvirt images. One change for this machine, the testbed's as on its other lanes: the
// controller runs with --allow-emulation (there is no /dev/vhost-net here, and the testbed's
// guests run under TCG), so launcher pods ask for tun only, not kvm and vhost-net.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { applyCrds } from '../control-plane/install-podvirt.js';
import { kubectlAs } from '../control-plane/kubectl-as.js';
import type { RealControlPlane } from '../control-plane/real-control-plane.js';
import { loadManifests, ManifestError } from '../stack/manifest-workload.js';
import { RealNodeError } from './real-node.js';

/** What this machine adds to the controller's arguments (see above). */
export const MACHINE_CONTROLLER_ARGS: readonly string[] = ['--allow-emulation'];

/** The workloads of manifests/, each with the label its pods carry. */
export const PODVIRT_WORKLOADS: ReadonlyArray<{ readonly workload: string; readonly selector: string }> = [
  { workload: 'daemonset/podvirt-handler', selector: 'app.kubernetes.io/name=podvirt-handler' },
  { workload: 'deployment/podvirt-controller', selector: 'app.kubernetes.io/name=podvirt-controller' },
  { workload: 'deployment/podvirt-api', selector: 'app.kubernetes.io/name=podvirt-api' },
];

type Doc = Record<string, unknown>;

/** Applies the CRDs and manifests/ (the controller with MACHINE_CONTROLLER_ARGS), written as one List into `dir`. */
export async function installPodvirtPods(cp: RealControlPlane, kubeconfig: string, root: string, dir: string): Promise<void> {
  await applyCrds(cp, kubeconfig, [], dir);
  const docs = structuredClone(await loadManifests(root));
  const controller = docs.find((d) => d['kind'] === 'Deployment' && (d['metadata'] as Doc | undefined)?.['name'] === 'podvirt-controller');
  const container = ((((controller?.['spec'] as Doc | undefined)?.['template'] as Doc | undefined)?.['spec'] as Doc | undefined)?.['containers'] as Doc[] | undefined)?.[0];
  if (container === undefined) throw new ManifestError('manifests/: no Deployment podvirt-controller with a container');
  container['args'] = [...((container['args'] as string[] | undefined) ?? []), ...MACHINE_CONTROLLER_ARGS];
  const file = join(dir, 'podvirt-manifests.json');
  await writeFile(file, JSON.stringify({ apiVersion: 'v1', kind: 'List', items: docs }));
  await kubectlAs(cp, kubeconfig, ['apply', '-f', file]);
}

/**
 * Waits for every workload of manifests/ to roll out; one that does not fails with what its pods
 * say (container states, their last log lines, of the previous run when one crashed).
 */
export async function waitForPodvirtPods(cp: RealControlPlane, kubeconfig: string, timeoutSeconds = 110): Promise<void> {
  const kubectl = (args: readonly string[]): Promise<string> => kubectlAs(cp, kubeconfig, ['-n', 'podvirt', ...args]);
  for (const { workload, selector } of PODVIRT_WORKLOADS) {
    await kubectl(['rollout', 'status', workload, `--timeout=${timeoutSeconds}s`]).catch(async (err: unknown) => {
      const states = await kubectl(['get', 'pods', '-l', selector, '-o', 'jsonpath={range .items[*]}{.metadata.name} {.status.containerStatuses}{"\\n"}{end}']).catch((e: unknown) => String(e));
      const logs = await kubectl(['logs', '-l', selector, '--tail=20', '--all-containers', '--previous'])
        .catch(() => kubectl(['logs', '-l', selector, '--tail=20', '--all-containers']))
        .catch((e: unknown) => String(e));
      throw new RealNodeError('REAL_NODE_INSTALL_FAILED', `${(err as Error).message}\n${states}\n${logs}`, { cause: err });
    });
  }
}
