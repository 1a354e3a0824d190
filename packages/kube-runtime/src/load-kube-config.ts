// Picks and reads the process's Kubernetes config the way podvirt's agents document it: an
// explicit kubeconfig path; else the in-cluster service account when the kubelet's service
// environment is there; else $KUBECONFIG (several files merged as kubectl merges them, missing
// ones skipped); else ~/.kube/config. Proxy settings in the environment are refused when they
// would apply to the API server (see proxy-refusal.ts).

import { readFile } from 'node:fs/promises';
import { delimiter, dirname, join } from 'node:path';
import { KubeClientError } from './kube-client-error.js';
import { inClusterConfig, kubeconfigFromDocument, SERVICE_ACCOUNT_DIR, type KubeConfig } from './kube-config.js';
import { mergeKubeconfigs, type KubeconfigDocument } from './kubeconfig-merge.js';
import { refuseEnvironmentProxy } from './proxy-refusal.js';

export interface KubeConfigSources {
  /** A kubeconfig named on the command line. */
  readonly kubeconfig?: string | undefined;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly homeDir: string;
  readonly serviceAccountDir?: string;
}

export async function loadKubeConfig(sources: KubeConfigSources): Promise<KubeConfig> {
  const config = await pick(sources);
  refuseEnvironmentProxy(config.server, sources.env);
  return config.exec === undefined ? config : { ...config, exec: { ...config.exec, env: { ...sources.env, ...config.exec.env } } };
}

async function pick(sources: KubeConfigSources): Promise<KubeConfig> {
  if (sources.kubeconfig !== undefined) return readKubeconfigFile(sources.kubeconfig);
  const { env } = sources;
  if ((env['KUBERNETES_SERVICE_HOST'] ?? '') !== '') return inClusterConfig(env, sources.serviceAccountDir ?? SERVICE_ACCOUNT_DIR);
  const fromEnv = (env['KUBECONFIG'] ?? '').split(delimiter).filter((p) => p !== '');
  if (fromEnv.length > 1) return readKubeconfigFiles(fromEnv);
  return readKubeconfigFile(fromEnv[0] ?? join(sources.homeDir, '.kube', 'config'));
}

export async function readKubeconfigFile(path: string, context?: string): Promise<KubeConfig> {
  const doc = await readDocument(path, false);
  try {
    return kubeconfigFromDocument(doc?.doc, { baseDir: dirname(path), ...(context === undefined ? {} : { context }) });
  } catch (err) {
    if (err instanceof KubeClientError) throw new KubeClientError(err.code, `${path}: ${err.message}`, { cause: err });
    throw err;
  }
}

/** Several kubeconfig files merged, as kubectl reads $KUBECONFIG; files that do not exist are skipped. */
export async function readKubeconfigFiles(paths: readonly string[], context?: string): Promise<KubeConfig> {
  const docs = (await Promise.all(paths.map((p) => readDocument(p, true)))).filter((d): d is KubeconfigDocument => d !== undefined);
  const what = `$KUBECONFIG (${paths.join(delimiter)})`;
  if (docs.length === 0) throw new KubeClientError('KUBE_ERR_CONFIG', `${what}: none of the files exists`);
  try {
    return kubeconfigFromDocument(mergeKubeconfigs(docs), { baseDir: dirname(paths[0] ?? '.'), ...(context === undefined ? {} : { context }) });
  } catch (err) {
    if (err instanceof KubeClientError) throw new KubeClientError(err.code, `${what}: ${err.message}`, { cause: err });
    throw err;
  }
}

async function readDocument(path: string, skipMissing: boolean): Promise<KubeconfigDocument | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if (skipMissing && (err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new KubeClientError('KUBE_ERR_CONFIG', `cannot read kubeconfig ${path}: ${(err as Error).message}`, { cause: err });
  }
  // Loaded on demand: the YAML parser adds ~8 MiB to a process's RSS, and an agent running
  // in-cluster never reads a kubeconfig.
  const { parse } = await import('yaml');
  try {
    return { doc: parse(text) as unknown, baseDir: dirname(path), path };
  } catch (err) {
    throw new KubeClientError('KUBE_ERR_CONFIG', `${path}: kubeconfig is not valid YAML: ${(err as Error).message}`, { cause: err });
  }
}
