// Where the API server is and how to authenticate to it, as a kubeconfig file or a pod's
// in-cluster environment describes it. Pure: the caller reads the files and the environment;
// certificate and key files are left as paths (resolved against the kubeconfig's directory)
// for the client to read, and a token file stays a path because bound tokens rotate.

import { isAbsolute, join, resolve } from 'node:path';
import { KubeClientError } from './kube-client-error.js';

/** PEM text, either inline (a `*-data` field, base64-decoded) or in a file. */
export type PemSource = { readonly path: string } | { readonly pem: Buffer };

export interface KubeConfig {
  /** The API server's base URL, without a trailing slash. */
  readonly server: string;
  readonly certificateAuthority?: PemSource;
  readonly insecureSkipTlsVerify: boolean;
  readonly tlsServerName?: string;
  readonly clientCertificate?: PemSource;
  readonly clientKey?: PemSource;
  readonly token?: string;
  /** Re-read now and again: projected service account tokens rotate. Wins over `token`. */
  readonly tokenFile?: string;
  readonly namespace?: string;
  /** A client-go exec credential plugin that prints a bearer token. */
  readonly exec?: ExecConfig;
}

/** `users[].user.exec`: the command run for a token, as client-go runs it. */
export interface ExecConfig {
  readonly command: string;
  readonly args: readonly string[];
  /** The plugin's own variables; loadKubeConfig adds the process environment under them. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** client.authentication.k8s.io/v1 or v1beta1: the ExecCredential version it speaks. */
  readonly apiVersion: string;
  readonly installHint?: string;
  /** Passed to the plugin in KUBERNETES_EXEC_INFO when provideClusterInfo is set. */
  readonly cluster?: { readonly server: string; readonly 'certificate-authority-data'?: string; readonly 'tls-server-name'?: string };
}

export const EXEC_API_VERSIONS: readonly string[] = ['client.authentication.k8s.io/v1', 'client.authentication.k8s.io/v1beta1'];

/** Where a pod finds its service account's token and the cluster CA. */
export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

type Entry = Record<string, unknown>;

export interface KubeconfigOptions {
  /** The kubeconfig's directory: relative file references are resolved against it. */
  readonly baseDir: string;
  /** Default: the kubeconfig's `current-context`. */
  readonly context?: string;
}

/** The config of a context in kubeconfig text (YAML, or JSON, which is YAML too). */
export async function parseKubeconfig(text: string, options: KubeconfigOptions): Promise<KubeConfig> {
  // Loaded on demand: the YAML parser adds ~8 MiB to a process's RSS, and an agent running
  // in-cluster never reads a kubeconfig.
  const { parse } = await import('yaml');
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (err) {
    throw new KubeClientError('KUBE_ERR_CONFIG', `kubeconfig is not valid YAML: ${(err as Error).message}`, { cause: err });
  }
  return kubeconfigFromDocument(doc, options);
}

/** The config of a context in an already parsed kubeconfig document. */
export function kubeconfigFromDocument(doc: unknown, options: KubeconfigOptions): KubeConfig {
  if (!isEntry(doc)) throw new KubeClientError('KUBE_ERR_CONFIG', 'kubeconfig is not a mapping');
  const contextName = options.context ?? str(doc['current-context']);
  if (contextName === undefined || contextName === '') throw new KubeClientError('KUBE_ERR_CONFIG', 'kubeconfig has no current-context');
  const context = named(doc, 'contexts', 'context', contextName);
  const clusterName = str(context['cluster']) ?? '';
  const userName = str(context['user']);
  const cluster = named(doc, 'clusters', 'cluster', clusterName);
  const user = userName === undefined || userName === '' ? {} : named(doc, 'users', 'user', userName);

  const server = str(cluster['server']);
  if (server === undefined || server === '') throw new KubeClientError('KUBE_ERR_CONFIG', `kubeconfig cluster "${clusterName}" has no server`);
  checkServer(server, `kubeconfig cluster "${clusterName}"`);
  if (str(cluster['proxy-url']) !== undefined) {
    throw new KubeClientError('KUBE_ERR_PROXY', `kubeconfig cluster "${clusterName}" sets proxy-url, but podvirt does not connect to the API server through a proxy; remove proxy-url`);
  }
  refusePlugins(user, userName ?? '');

  const file = (value: unknown): string | undefined => {
    const path = str(value);
    return path === undefined || path === '' ? undefined : isAbsolute(path) ? path : resolve(options.baseDir, path);
  };
  // As client-go: inline data wins over a file.
  const pem = (key: string, from: Entry): PemSource | undefined => {
    const data = str(from[`${key}-data`]);
    if (data !== undefined && data !== '') return { pem: Buffer.from(data, 'base64') };
    const path = file(from[key]);
    return path === undefined ? undefined : { path };
  };
  const insecure = cluster['insecure-skip-tls-verify'] === true;
  const ca = pem('certificate-authority', cluster);
  // As client-go: trusting a CA and skipping verification contradict each other.
  if (insecure && ca !== undefined) {
    throw new KubeClientError('KUBE_ERR_CONFIG', `kubeconfig cluster "${clusterName}" sets both a certificate authority and insecure-skip-tls-verify`);
  }
  const cert = pem('client-certificate', user);
  const key = pem('client-key', user);
  if ((cert === undefined) !== (key === undefined)) {
    throw new KubeClientError('KUBE_ERR_CONFIG', `kubeconfig user "${userName ?? ''}" needs both a client certificate and a client key`);
  }
  return compact({
    server: server.replace(/\/+$/, ''),
    certificateAuthority: ca,
    insecureSkipTlsVerify: insecure,
    tlsServerName: str(cluster['tls-server-name']),
    clientCertificate: cert,
    clientKey: key,
    token: str(user['token']),
    tokenFile: file(user['tokenFile']),
    namespace: str(context['namespace']),
    exec: execConfig(user, userName ?? '', server, cluster),
  });
}

function execConfig(user: Entry, userName: string, server: string, cluster: Entry): ExecConfig | undefined {
  const exec = user['exec'];
  if (exec === undefined || exec === null) return undefined;
  const where = `kubeconfig user "${userName}" exec plugin`;
  if (!isEntry(exec)) throw new KubeClientError('KUBE_ERR_CONFIG', `${where} is not a mapping`);
  const command = str(exec['command']);
  if (command === undefined || command === '') throw new KubeClientError('KUBE_ERR_CONFIG', `${where} has no command`);
  const apiVersion = str(exec['apiVersion']) ?? '';
  if (!EXEC_API_VERSIONS.includes(apiVersion)) {
    throw new KubeClientError('KUBE_ERR_CONFIG', `${where} speaks apiVersion "${apiVersion}"; podvirt runs ${EXEC_API_VERSIONS.join(' and ')}`);
  }
  if (exec['interactiveMode'] === 'Always') {
    throw new KubeClientError('KUBE_ERR_AUTH_PLUGIN', `${where} asks for interactiveMode Always, but podvirt's agents have no terminal; use a plugin that runs unattended`);
  }
  const args = Array.isArray(exec['args']) ? exec['args'].filter((a): a is string => typeof a === 'string') : [];
  const env: Record<string, string> = {};
  for (const e of Array.isArray(exec['env']) ? (exec['env'] as unknown[]) : []) {
    if (isEntry(e) && typeof e['name'] === 'string' && typeof e['value'] === 'string') env[e['name']] = e['value'];
  }
  const ca = str(cluster['certificate-authority-data']);
  const serverName = str(cluster['tls-server-name']);
  return compact({
    command, args, env, apiVersion,
    installHint: str(exec['installHint']),
    cluster: exec['provideClusterInfo'] === true
      ? { server, ...(ca === undefined ? {} : { 'certificate-authority-data': ca }), ...(serverName === undefined ? {} : { 'tls-server-name': serverName }) }
      : undefined,
  });
}

/** The config of a pod's service account, from the environment the kubelet gives every pod. */
export function inClusterConfig(env: Readonly<Record<string, string | undefined>>, serviceAccountDir = SERVICE_ACCOUNT_DIR): KubeConfig {
  const host = env['KUBERNETES_SERVICE_HOST'];
  const port = env['KUBERNETES_SERVICE_PORT'];
  if (host === undefined || host === '' || port === undefined || port === '') {
    throw new KubeClientError('KUBE_ERR_CONFIG', 'not in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set');
  }
  const server = `https://${host.includes(':') ? `[${host}]` : host}:${port}`;
  checkServer(server, 'in-cluster config');
  return {
    server,
    certificateAuthority: { path: join(serviceAccountDir, 'ca.crt') },
    insecureSkipTlsVerify: false,
    tokenFile: join(serviceAccountDir, 'token'),
  };
}

function refusePlugins(user: Entry, userName: string): void {
  // auth-provider plugins (gcp, azure, oidc) were removed from client-go in favour of exec plugins.
  if (user['auth-provider'] !== undefined && user['auth-provider'] !== null) {
    throw new KubeClientError(
      'KUBE_ERR_AUTH_PLUGIN',
      `kubeconfig user "${userName}" authenticates through an auth-provider plugin, which podvirt does not run; use an exec plugin, a token, tokenFile or client certificate`,
    );
  }
  if (user['username'] !== undefined || user['password'] !== undefined) {
    throw new KubeClientError('KUBE_ERR_CONFIG', `kubeconfig user "${userName}" uses basic authentication, which Kubernetes no longer serves`);
  }
}

function checkServer(server: string, where: string): void {
  let url: URL;
  try {
    url = new URL(server);
  } catch (err) {
    throw new KubeClientError('KUBE_ERR_CONFIG', `${where}: server "${server}" is not a URL`, { cause: err });
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new KubeClientError('KUBE_ERR_CONFIG', `${where}: server "${server}" must be http:// or https://`);
  }
}

/** The `inner` mapping of the entry called `name` in the list `list` (kubeconfig's named-list shape). */
function named(doc: Entry, list: string, inner: string, name: string): Entry {
  const entries = Array.isArray(doc[list]) ? (doc[list] as unknown[]) : [];
  const found = entries.find((e): e is Entry => isEntry(e) && e['name'] === name);
  if (found === undefined) throw new KubeClientError('KUBE_ERR_CONFIG', `kubeconfig has no ${inner} named "${name}"`);
  const value = found[inner];
  return isEntry(value) ? value : {};
}

function isEntry(value: unknown): value is Entry {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

type Compacted<T> = { [K in keyof T as undefined extends T[K] ? never : K]: T[K] } & {
  [K in keyof T as undefined extends T[K] ? K : never]?: Exclude<T[K], undefined>;
};

/** Drops undefined fields, so the result satisfies exactOptionalPropertyTypes and compares cleanly. */
function compact<T extends object>(value: T): Compacted<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Compacted<T>;
}
