import { writeFile } from 'node:fs/promises';
import { stringify } from 'yaml';

/**
 * A kubeconfig for a plain-HTTP server without authentication (what the testbed serves). A
 * `token` is sent as a bearer token, which the testbed records as the caller's user name.
 */
export function kubeconfigFor(server: string, name = 'podvirt-testbed', token?: string): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    // client-node refuses http:// unless TLS verification is (vacuously) skipped.
    clusters: [{ name, cluster: { server, 'insecure-skip-tls-verify': true } }],
    users: [{ name, user: token === undefined ? {} : { token } }],
    contexts: [{ name, context: { cluster: name, user: name, namespace: 'default' } }],
    'current-context': name,
    preferences: {},
  });
}

export async function writeKubeconfig(path: string, server: string, token?: string): Promise<void> {
  await writeFile(path, kubeconfigFor(server, 'podvirt-testbed', token), { mode: 0o600 });
}

/** How a client of the real API server authenticates: a client certificate, or a token file it re-reads (a rotated service-account token). */
export type TlsKubeconfigUser = { readonly cert: string; readonly key: string } | { readonly tokenFile: string };

/** A kubeconfig for an HTTPS server whose certificate `caFile` signed (the real control plane's). */
export function tlsKubeconfigFor(server: string, caFile: string, user: TlsKubeconfigUser, name = 'podvirt-testbed'): string {
  const credentials = 'tokenFile' in user ? { tokenFile: user.tokenFile } : { 'client-certificate': user.cert, 'client-key': user.key };
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name, cluster: { server, 'certificate-authority': caFile } }],
    users: [{ name, user: credentials }],
    contexts: [{ name, context: { cluster: name, user: name, namespace: 'default' } }],
    'current-context': name,
    preferences: {},
  });
}

export async function writeTlsKubeconfig(path: string, server: string, caFile: string, user: TlsKubeconfigUser): Promise<void> {
  await writeFile(path, tlsKubeconfigFor(server, caFile, user), { mode: 0o600 });
}
