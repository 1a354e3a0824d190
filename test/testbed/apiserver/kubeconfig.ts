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
