import { writeFile } from 'node:fs/promises';
import { stringify } from 'yaml';

/** A kubeconfig for a plain-HTTP server without authentication (what the testbed serves). */
export function kubeconfigFor(server: string, name = 'podvirt-testbed'): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    // client-node refuses http:// unless TLS verification is (vacuously) skipped.
    clusters: [{ name, cluster: { server, 'insecure-skip-tls-verify': true } }],
    users: [{ name, user: {} }],
    contexts: [{ name, context: { cluster: name, user: name, namespace: 'default' } }],
    'current-context': name,
    preferences: {},
  });
}

export async function writeKubeconfig(path: string, server: string): Promise<void> {
  await writeFile(path, kubeconfigFor(server), { mode: 0o600 });
}
