// podvirt installed on the real control plane as an operator installs it, with the control
// plane's own kubectl: first the CRDs (waited for until the API server serves them), then every
// file of manifests/ (namespace, RBAC, node-restriction policies) except those holding the
// Deployment and the DaemonSet, whose processes the testbed runs from the source tree.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { JsonObject } from '../apiserver/json.js';
import { podvirtCrdFiles } from '../cli/podvirt-crds.js';
import { manifestFilesWithoutWorkloads } from '../stack/manifest-workload.js';
import { kubectlAs } from './kubectl-as.js';
import type { RealControlPlane } from './real-control-plane.js';

/** podvirt's CRDs and `extra` ones (written as files into `dir`), applied and Established. */
export async function applyCrds(cp: RealControlPlane, kubeconfig: string, extra: readonly JsonObject[], dir: string): Promise<void> {
  const files = [...podvirtCrdFiles()];
  for (const [i, crd] of extra.entries()) {
    const path = join(dir, `extra-crd-${i}.json`);
    await writeFile(path, JSON.stringify(crd));
    files.push(path);
  }
  const f = files.flatMap((file) => ['-f', file]);
  await kubectlAs(cp, kubeconfig, ['apply', ...f]);
  await kubectlAs(cp, kubeconfig, ['wait', '--for=condition=Established', '--timeout=60s', ...f]);
}

/** `kubectl apply` of manifests/ without the workloads. */
export async function installManifests(cp: RealControlPlane, root: string, kubeconfig: string): Promise<void> {
  const files = await manifestFilesWithoutWorkloads(root);
  await kubectlAs(cp, kubeconfig, ['apply', ...files.flatMap((f) => ['-f', f])]);
}
