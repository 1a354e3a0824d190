// The handlers' TLS node API, for podvirt-api's subresource API: each handler listens on
// 127.0.0.1 with a serving certificate of a CA for the name podvirt-api checks (podvirt-handler,
// as the certificate podvirt-api makes on a cluster) and allows one client identity,
// CN=podvirt-api, whose certificate podvirt-api gets as files (on a cluster it makes them
// itself: the stack's handlers are processes, with no Secret volume to mount). On the real lane the CA is the cluster CA (the testbed's
// cluster CA signs nothing else that could claim that CN; a cluster would use a CA of its own);
// on the in-repo lane it is a CA made for the stack (`inRepoAggregation`), which also turns on
// the in-repo API server's aggregation layer with a front-proxy CA and client of its own.
import { readFile } from 'node:fs/promises';
import { NODE_API_SERVER_NAME } from '@podvirt/podvirt-api';
import type { ApiServer } from '../apiserver/api-server.js';
import { FRONT_PROXY_CLIENT, issueCertificate, makeCa, makeFrontProxyPki, type ClusterPki } from '../control-plane/cluster-pki.js';
import { freePort } from '../free-port.js';
import type { HandlerApiAccess } from './podvirt-api-process.js';

export const PODVIRT_API_NODE_CLIENT = 'podvirt-api';

export type CertificateAuthority = Pick<ClusterPki, 'dir' | 'caCert' | 'caKey'>;

export interface NodeApiAccess {
  /**
   * Per node: the handler's TLS flags. Appended after the DaemonSet's own (its Secret volume's
   * files, which a process here does not have), they replace them: a repeated flag takes its
   * last value.
   */
  readonly handlerArgs: ReadonlyMap<string, readonly string[]>;
  readonly access: HandlerApiAccess;
}

export async function nodeApiAccess(ca: CertificateAuthority, nodes: readonly string[]): Promise<NodeApiAccess> {
  const handlerArgs = new Map<string, string[]>();
  const addresses = new Map<string, string>();
  // One at a time: each issue writes the CA's serial file.
  for (const node of nodes) {
    const port = await freePort();
    const serving = await issueCertificate(ca, `node-api-${node}`, `/CN=podvirt-handler ${node}`, 'serverAuth', `DNS:${NODE_API_SERVER_NAME},IP:127.0.0.1`);
    handlerArgs.set(node, [
      `--node-api-tls-port=${port}`, '--node-api-tls-address=127.0.0.1', `--tls-cert=${serving.cert}`, `--tls-key=${serving.key}`,
      `--tls-client-ca=${ca.caCert}`, `--tls-allowed-client=CN=${PODVIRT_API_NODE_CLIENT}`,
    ]);
    addresses.set(node, `127.0.0.1:${port}`);
  }
  const client = await issueCertificate(ca, 'podvirt-api-node-client', `/CN=${PODVIRT_API_NODE_CLIENT}`, 'clientAuth');
  return { handlerArgs, access: { ca: ca.caCert, client, addresses } };
}

/**
 * The in-repo lane's share of what the real lane's cluster PKI gives, made in `dir` (which
 * exists): the aggregation layer of `apiServer` turned on with a front-proxy CA and client
 * certificate, as kube-apiserver runs with --requestheader-client-ca-file and --proxy-client-*,
 * and the node API's TLS for `nodes` on a CA of the stack's own.
 */
export async function inRepoAggregation(dir: string, apiServer: ApiServer, nodes: readonly string[]): Promise<NodeApiAccess> {
  const [frontProxy, access] = await Promise.all([
    makeFrontProxyPki(dir),
    makeCa(dir, 'node-api-ca', '/CN=podvirt-testbed-node-api-ca').then((ca) => nodeApiAccess(ca, nodes)),
  ]);
  const [requestHeaderCa, cert, key] = await Promise.all([frontProxy.ca.caCert, frontProxy.client.cert, frontProxy.client.key].map((f) => readFile(f, 'utf8')));
  apiServer.enableAggregation({ requestHeaderCa: requestHeaderCa ?? '', proxyClient: { cert: cert ?? '', key: key ?? '' }, allowedNames: [FRONT_PROXY_CLIENT] });
  return access;
}
