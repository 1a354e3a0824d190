// The handlers' TLS node API on the real lane, for podvirt-api's subresource API: each handler
// listens on 127.0.0.1 with a serving certificate of the cluster CA and allows one client
// identity, CN=podvirt-api, whose certificate podvirt-api gets. (A cluster would use a CA of its
// own for the node API; the testbed's cluster CA signs nothing else that could claim that CN.)
import { issueCertificate } from '../control-plane/cluster-pki.js';
import { freePort, type RealControlPlane } from '../control-plane/real-control-plane.js';
import type { HandlerApiAccess } from './podvirt-api-process.js';

export const PODVIRT_API_NODE_CLIENT = 'podvirt-api';

export interface NodeApiAccess {
  /** Per node: the handler's TLS flags. */
  readonly handlerArgs: ReadonlyMap<string, readonly string[]>;
  readonly access: HandlerApiAccess;
}

export async function nodeApiAccess(cp: RealControlPlane, nodes: readonly string[]): Promise<NodeApiAccess> {
  const handlerArgs = new Map<string, string[]>();
  const addresses = new Map<string, string>();
  for (const node of nodes) {
    const port = await freePort();
    const serving = await issueCertificate(cp.pki, `node-api-${node}`, `/CN=podvirt-handler ${node}`, 'serverAuth', 'IP:127.0.0.1');
    handlerArgs.set(node, [
      `--node-api-tls-port=${port}`, '--node-api-tls-address=127.0.0.1', `--tls-cert=${serving.cert}`, `--tls-key=${serving.key}`,
      `--tls-client-ca=${cp.pki.caCert}`, `--tls-allowed-client=CN=${PODVIRT_API_NODE_CLIENT}`,
    ]);
    addresses.set(node, `127.0.0.1:${port}`);
  }
  const client = await issueCertificate(cp.pki, 'podvirt-api-node-client', `/CN=${PODVIRT_API_NODE_CLIENT}`, 'clientAuth');
  return { handlerArgs, access: { ca: cp.pki.caCert, client, addresses } };
}
