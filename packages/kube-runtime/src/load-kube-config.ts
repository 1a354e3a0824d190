// Picks and reads the process's Kubernetes config the way podvirt's agents document it: an
// explicit kubeconfig path; else the in-cluster service account when the kubelet's service
// environment is there; else $KUBECONFIG (its first entry — files are not merged); else
// ~/.kube/config.

import { readFile } from 'node:fs/promises';
import { delimiter, dirname, join } from 'node:path';
import { KubeClientError } from './kube-client-error.js';
import { inClusterConfig, parseKubeconfig, SERVICE_ACCOUNT_DIR, type KubeConfig } from './kube-config.js';

export interface KubeConfigSources {
  /** A kubeconfig named on the command line. */
  readonly kubeconfig?: string | undefined;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly homeDir: string;
  readonly serviceAccountDir?: string;
}

export async function loadKubeConfig(sources: KubeConfigSources): Promise<KubeConfig> {
  if (sources.kubeconfig !== undefined) return readKubeconfigFile(sources.kubeconfig);
  const { env } = sources;
  if ((env['KUBERNETES_SERVICE_HOST'] ?? '') !== '') return inClusterConfig(env, sources.serviceAccountDir ?? SERVICE_ACCOUNT_DIR);
  const fromEnv = (env['KUBECONFIG'] ?? '').split(delimiter).find((p) => p !== '');
  return readKubeconfigFile(fromEnv ?? join(sources.homeDir, '.kube', 'config'));
}

export async function readKubeconfigFile(path: string, context?: string): Promise<KubeConfig> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new KubeClientError('KUBE_ERR_CONFIG', `cannot read kubeconfig ${path}: ${(err as Error).message}`, { cause: err });
  }
  try {
    return await parseKubeconfig(text, { baseDir: dirname(path), ...(context === undefined ? {} : { context }) });
  } catch (err) {
    if (err instanceof KubeClientError) throw new KubeClientError(err.code, `${path}: ${err.message}`, { cause: err });
    throw err;
  }
}
