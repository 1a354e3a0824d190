// The certificates and keys of one real control plane, made at its start with Debian's openssl
// as an operator following the upstream PKI documentation would: one cluster CA that signs the
// API server's serving certificate and every client certificate (the API server trusts it as
// --client-ca-file), and the service-account key pair the API server signs tokens with. A
// client certificate's CN is the user name and its O the groups, so the Node authoriser and
// NodeRestriction see a kubelet as system:node:<name> in system:nodes.

import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const EC_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
const DAYS = '2';

export interface CertPair {
  readonly cert: string;
  readonly key: string;
}

export interface ClusterPki {
  readonly dir: string;
  readonly caCert: string;
  readonly caKey: string;
  /** The API server's serving certificate: 127.0.0.1, localhost and the kubernetes Service's names. */
  readonly apiServer: CertPair;
  /** What the API server shows a kubelet (logs, exec). */
  readonly apiServerKubeletClient: CertPair;
  /** kubernetes-admin in system:masters: kubectl, the testbed's own set-up. */
  readonly admin: CertPair;
  readonly controllerManager: CertPair;
  readonly scheduler: CertPair;
  /** system:node:<name> in system:nodes, one per node. */
  readonly nodes: ReadonlyMap<string, CertPair>;
  /** Each node's kubelet serving certificate (127.0.0.1, where the testbed's kubelets listen). */
  readonly nodeServing: ReadonlyMap<string, CertPair>;
  /** The aggregation layer: the requestheader CA (its own, as kubeadm's front-proxy CA) and the client certificate kube-apiserver shows an aggregated API server. */
  readonly frontProxyCaCert: string;
  readonly frontProxyClient: CertPair;
  /** Signs service-account tokens (private) and verifies them (public). */
  readonly serviceAccountKey: string;
  readonly serviceAccountPub: string;
}

/** The CN of kube-apiserver's proxy client certificate, its --requestheader-allowed-names. */
export const FRONT_PROXY_CLIENT = 'front-proxy-client';

export interface ClusterPkiOptions {
  readonly nodes: readonly string[];
  /** The kubernetes Service's ClusterIP (the first of --service-cluster-ip-range). */
  readonly serviceIP: string;
  /** Where the API server listens when not on loopback alone (the real node's address). */
  readonly apiServerIPs?: readonly string[];
}

/**
 * A certificate signed by the cluster CA of `pki` (written into its directory as NAME.crt and
 * NAME.key): `subject` as openssl writes it (/O=group/CN=user), `san` as subjectAltName wants it.
 */
export async function issueCertificate(pki: Pick<ClusterPki, 'dir' | 'caCert' | 'caKey'>, name: string, subject: string, usage: 'serverAuth' | 'clientAuth', san?: string): Promise<CertPair> {
  const dir = pki.dir;
  const ext = join(dir, `${name}.ext`);
  await writeFile(ext, `basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=${usage}\n${san === undefined ? '' : `subjectAltName=${san}\n`}`);
  await run('openssl', ['req', ...EC_KEY, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', subject], { cwd: dir });
  await run('openssl', ['x509', '-req', '-in', `${name}.csr`, '-CA', pki.caCert, '-CAkey', pki.caKey, '-CAcreateserial', '-days', DAYS, '-extfile', ext, '-out', `${name}.crt`], { cwd: dir });
  return { cert: join(dir, `${name}.crt`), key: join(dir, `${name}.key`) };
}

/** A CA that signs what `issueCertificate` issues: NAME.crt and NAME.key in `dir` (which exists). */
export async function makeCa(dir: string, name: string, subject: string): Promise<Pick<ClusterPki, 'dir' | 'caCert' | 'caKey'>> {
  await run('openssl', ['req', '-x509', ...EC_KEY, '-keyout', `${name}.key`, '-out', `${name}.crt`, '-days', DAYS, '-subj', subject,
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign,digitalSignature'], { cwd: dir });
  return { dir, caCert: join(dir, `${name}.crt`), caKey: join(dir, `${name}.key`) };
}

/** The aggregation layer's PKI: the requestheader CA (its own, as kubeadm's front-proxy CA) and the proxy client certificate it signs. */
export async function makeFrontProxyPki(dir: string): Promise<{ ca: Pick<ClusterPki, 'dir' | 'caCert' | 'caKey'>; client: CertPair }> {
  const ca = await makeCa(dir, 'front-proxy-ca', '/CN=podvirt-testbed-front-proxy-ca');
  return { ca, client: await issueCertificate(ca, 'front-proxy-client', `/CN=${FRONT_PROXY_CLIENT}`, 'clientAuth') };
}

/** Writes the whole PKI under `dir` (mode 0700). */
export async function makeClusterPki(dir: string, o: ClusterPkiOptions): Promise<ClusterPki> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const ssl = (...args: string[]): Promise<unknown> => run('openssl', args, { cwd: dir });
  const ca = await makeCa(dir, 'ca', '/CN=podvirt-testbed-kubernetes-ca');
  const { ca: frontProxyCa, client: frontProxyClient } = await makeFrontProxyPki(dir);
  const issue = (name: string, subject: string, usage: 'serverAuth' | 'clientAuth', san?: string): Promise<CertPair> => issueCertificate(ca, name, subject, usage, san);
  const serviceNames = ['kubernetes', 'kubernetes.default', 'kubernetes.default.svc', 'kubernetes.default.svc.cluster.local'];
  const apiServer = await issue('apiserver', '/CN=kube-apiserver', 'serverAuth', ['IP:127.0.0.1', `IP:${o.serviceIP}`, ...(o.apiServerIPs ?? []).map((ip) => `IP:${ip}`), 'DNS:localhost', ...serviceNames.map((n) => `DNS:${n}`)].join(','));
  const apiServerKubeletClient = await issue('apiserver-kubelet-client', '/O=system:masters/CN=kube-apiserver-kubelet-client', 'clientAuth');
  const admin = await issue('admin', '/O=system:masters/CN=kubernetes-admin', 'clientAuth');
  const controllerManager = await issue('controller-manager', '/CN=system:kube-controller-manager', 'clientAuth');
  const scheduler = await issue('scheduler', '/CN=system:kube-scheduler', 'clientAuth');
  const nodes = new Map<string, CertPair>();
  const nodeServing = new Map<string, CertPair>();
  for (const node of o.nodes) {
    nodes.set(node, await issue(`node-${node}`, `/O=system:nodes/CN=system:node:${node}`, 'clientAuth'));
    nodeServing.set(node, await issue(`kubelet-${node}`, `/CN=${node}`, 'serverAuth', `IP:127.0.0.1,DNS:${node}`));
  }
  await ssl('genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048', '-out', 'sa.key');
  await ssl('pkey', '-in', 'sa.key', '-pubout', '-out', 'sa.pub');
  return {
    dir,
    caCert: join(dir, 'ca.crt'),
    caKey: join(dir, 'ca.key'),
    apiServer,
    apiServerKubeletClient,
    admin,
    controllerManager,
    scheduler,
    nodes,
    nodeServing,
    frontProxyCaCert: frontProxyCa.caCert,
    frontProxyClient,
    serviceAccountKey: join(dir, 'sa.key'),
    serviceAccountPub: join(dir, 'sa.pub'),
  };
}
