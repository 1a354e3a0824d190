// The real Kubernetes control plane of the testbed's `real` lane: etcd, kube-apiserver,
// kube-controller-manager and kube-scheduler built from their Go modules (tools/build-binaries),
// run as child processes on loopback only. The API server serves TLS with certificates made at
// start (cluster-pki.ts), authorises with Node,RBAC, runs NodeRestriction beside the default
// admission plugins and executes ValidatingAdmissionPolicies (GA, on by default). Each node's
// kubelet gets a kubeconfig of its own as system:node:<name>.

import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { eventually } from '@podvirt/test-support';
import { writeTlsKubeconfig } from '../apiserver/kubeconfig.js';
import { freePort } from '../free-port.js';
import { StackProcess } from '../stack/stack-process.js';
import { FRONT_PROXY_CLIENT, makeClusterPki, type CertPair, type ClusterPki } from './cluster-pki.js';
import { ControlPlaneError, controlPlaneBinaries, type ControlPlaneBinaries } from './control-plane-binaries.js';

export interface RealControlPlaneOptions {
  /** Holds PKI, etcd's data, kubeconfigs and each component's log; the caller removes it. */
  readonly dir: string;
  readonly repoRoot: string;
  /** The nodes that get a system:node:<name> kubeconfig. */
  readonly nodes: readonly string[];
  readonly logger: Logger;
  /**
   * The address the API server listens and advertises on (default 127.0.0.1): the real node's
   * own address (real-node/), so its pods reach the API server too. Never the machine's address.
   */
  readonly address?: string;
}

export type ControlPlaneComponent = 'etcd' | 'kube-apiserver' | 'kube-controller-manager' | 'kube-scheduler';

// The Service range must not overlap the pod network (10.200.0.0/13, sandbox/stack-network.ts).
const SERVICE_RANGE = '10.96.0.0/16';
/** The kubernetes Service's ClusterIP, which pods are told the API server is at. */
export const SERVICE_IP = '10.96.0.1';
// A cold kube-apiserver installs its bootstrap RBAC and priority levels before /readyz says ok:
// 10–20 s on this 2-core machine under load; the bound is generous, not an expectation.
const READY_TIMEOUT_MS = 120_000;
const STOP_GRACE_MS = 15_000;
// Every request once it is answered (a watch also when it starts), at Metadata level: no bodies.
const AUDIT_POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
`;

export class RealControlPlane {
  readonly url: string;
  /** Where the API server listens (the port is in `url`). */
  readonly address: string;
  readonly pki: ClusterPki;
  readonly binaries: ControlPlaneBinaries;
  /** system:masters: what kubectl and the testbed's own set-up use. */
  readonly adminKubeconfig: string;
  /**
   * kube-apiserver's audit log (JSON lines, Metadata level: verb, resource, user, user agent,
   * response code; see audit-log.ts): who asked what, which apiserver_request_total cannot say.
   */
  readonly auditLogPath: string;
  /** etcd's client URL (plain HTTP on loopback; its JSON gateway serves /v3/kv/*). */
  readonly etcdUrl: string;
  readonly #o: RealControlPlaneOptions;
  readonly #etcdUrl: string;
  readonly #peerUrl: string;
  readonly #port: number;
  readonly #log: Logger;
  readonly #processes = new Map<ControlPlaneComponent, StackProcess>();
  readonly #logs = new Map<ControlPlaneComponent, WriteStream>();
  #closing: Promise<void> | undefined;

  private constructor(o: RealControlPlaneOptions, pki: ClusterPki, binaries: ControlPlaneBinaries, ports: { etcd: number; peer: number; api: number }) {
    this.#o = o;
    this.pki = pki;
    this.binaries = binaries;
    this.#etcdUrl = `http://127.0.0.1:${ports.etcd}`;
    this.etcdUrl = this.#etcdUrl;
    this.#peerUrl = `http://127.0.0.1:${ports.peer}`;
    this.#port = ports.api;
    this.address = o.address ?? '127.0.0.1';
    this.url = `https://${this.address}:${ports.api}`;
    this.adminKubeconfig = join(o.dir, 'admin.kubeconfig');
    this.auditLogPath = join(o.dir, 'audit.log');
    this.#log = o.logger.child({ component: 'real-control-plane' });
  }

  /** Builds nothing: the binaries come from tools/build-binaries (scripts/setup). */
  static async start(o: RealControlPlaneOptions): Promise<RealControlPlane> {
    const binaries = await controlPlaneBinaries(o.repoRoot);
    await mkdir(o.dir, { recursive: true, mode: 0o700 });
    const pki = await makeClusterPki(join(o.dir, 'pki'), { nodes: o.nodes, serviceIP: SERVICE_IP, ...(o.address === undefined ? {} : { apiServerIPs: [o.address] }) });
    const cp = new RealControlPlane(o, pki, binaries, { etcd: await freePort(), peer: await freePort(), api: await freePort() });
    try {
      await cp.#startAll();
    } catch (err) {
      await cp.close();
      throw err;
    }
    return cp;
  }

  /** A kubeconfig for the node's kubelet: its own client certificate, system:node:<name>. */
  async nodeKubeconfig(nodeName: string): Promise<string> {
    const pair = this.pki.nodes.get(nodeName);
    if (pair === undefined) throw new ControlPlaneError('CONTROL_PLANE_START_FAILED', `no client certificate for node ${nodeName}`);
    return this.#kubeconfig(`node-${nodeName}`, pair);
  }

  /** The component's process (fault tests kill and restart it). */
  process(component: ControlPlaneComponent): StackProcess | undefined {
    return this.#processes.get(component);
  }

  /** Starts a component again after it exited (a fault test killed it); resolves once it serves. */
  async restart(component: ControlPlaneComponent): Promise<void> {
    await this.#processes.get(component)?.exited;
    await this.#startComponent(component);
  }

  async #startAll(): Promise<void> {
    for (const c of ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler'] as const) await this.#startComponent(c);
  }

  async #startComponent(c: ControlPlaneComponent): Promise<void> {
    const argv = await this.#argv(c);
    let log = this.#logs.get(c);
    if (log === undefined) {
      log = createWriteStream(join(this.#o.dir, `${c}.log`), { flags: 'a' });
      this.#logs.set(c, log);
    }
    const out = log;
    const proc = new StackProcess({ name: c, argv, env: { PATH: process.env['PATH'] }, onLine: (l) => out.write(`${l}\n`), onStderrLine: (l) => out.write(`${l}\n`) });
    this.#processes.set(c, proc);
    const what = `${c} to be ready (log: ${join(this.#o.dir, `${c}.log`)})`;
    const ready = (check: () => Promise<boolean>) => eventually(async () => {
      if (!proc.running) throw new ControlPlaneError('CONTROL_PLANE_START_FAILED', `${c} exited while starting\n${proc.stderr.slice(-3000)}`);
      return check();
    }, { what, deadlineMs: READY_TIMEOUT_MS, stepMs: 250 });
    if (c === 'etcd') await ready(async () => (await fetch(`${this.#etcdUrl}/health`).then((r) => r.json(), () => ({})) as { health?: string }).health === 'true');
    else if (c === 'kube-apiserver') await ready(async () => (await this.#get('/readyz').catch(() => undefined)) === 'ok');
    // The controller-manager and scheduler serve nothing here (--secure-port=0); their work shows
    // in the API: the controller-manager makes the default namespace's ServiceAccount.
    else if (c === 'kube-controller-manager') await ready(async () => (await this.#get('/api/v1/namespaces/default/serviceaccounts/default').catch(() => undefined)) !== undefined);
    this.#log.info({ component: c, pid: proc.pid }, 'control-plane component started');
  }

  async #argv(c: ControlPlaneComponent): Promise<string[]> {
    const { pki, binaries: b } = this;
    const dir = this.#o.dir;
    switch (c) {
      case 'etcd':
        return [b.etcd, '--name=testbed', `--data-dir=${join(dir, 'etcd')}`, `--listen-client-urls=${this.#etcdUrl}`, `--advertise-client-urls=${this.#etcdUrl}`,
          `--listen-peer-urls=${this.#peerUrl}`, `--initial-advertise-peer-urls=${this.#peerUrl}`, `--initial-cluster=testbed=${this.#peerUrl}`,
          // A test cluster: losing the last writes on a machine crash costs nothing, fsyncs cost a lot on a shared disk.
          '--unsafe-no-fsync', '--log-level=warn'];
      case 'kube-apiserver':
        await writeTlsKubeconfig(this.adminKubeconfig, this.url, pki.caCert, pki.admin);
        await writeFile(join(dir, 'audit-policy.yaml'), AUDIT_POLICY);
        return [b.kubeApiserver, `--etcd-servers=${this.#etcdUrl}`, `--bind-address=${this.address}`, `--advertise-address=${this.address}`, `--secure-port=${this.#port}`,
          `--tls-cert-file=${pki.apiServer.cert}`, `--tls-private-key-file=${pki.apiServer.key}`, `--client-ca-file=${pki.caCert}`,
          '--service-account-issuer=https://kubernetes.default.svc.cluster.local', `--service-account-key-file=${pki.serviceAccountPub}`,
          `--service-account-signing-key-file=${pki.serviceAccountKey}`, `--service-cluster-ip-range=${SERVICE_RANGE}`,
          '--authorization-mode=Node,RBAC', '--enable-admission-plugins=NodeRestriction', '--allow-privileged=true',
          `--kubelet-client-certificate=${pki.apiServerKubeletClient.cert}`, `--kubelet-client-key=${pki.apiServerKubeletClient.key}`,
          '--kubelet-preferred-address-types=InternalIP', `--kubelet-certificate-authority=${pki.caCert}`,
          // The kubernetes Service's endpoint would be 127.0.0.1, which Endpoints refuse; nothing here needs it.
          '--endpoint-reconciler-type=none', '--profiling=false',
          // No kube-proxy: a webhook's (or aggregated API's) Service is called on one of its endpoints' pod IPs, not its ClusterIP.
          '--enable-aggregator-routing=true',
          // The aggregation layer: the front proxy's identity and the headers it names the user in
          // (published in kube-system/extension-apiserver-authentication for podvirt-api).
          `--requestheader-client-ca-file=${pki.frontProxyCaCert}`, `--requestheader-allowed-names=${FRONT_PROXY_CLIENT}`,
          '--requestheader-username-headers=X-Remote-User', '--requestheader-group-headers=X-Remote-Group', '--requestheader-extra-headers-prefix=X-Remote-Extra-',
          `--proxy-client-cert-file=${pki.frontProxyClient.cert}`, `--proxy-client-key-file=${pki.frontProxyClient.key}`,
          // Blocking mode (the log backend's default): an event is on disk before its answer, so a kill -9 loses none.
          `--audit-policy-file=${join(dir, 'audit-policy.yaml')}`, `--audit-log-path=${this.auditLogPath}`];
      case 'kube-controller-manager':
        return [b.kubeControllerManager, `--kubeconfig=${await this.#kubeconfig('controller-manager', pki.controllerManager)}`, '--secure-port=0', '--leader-elect=false',
          '--use-service-account-credentials=true', `--root-ca-file=${pki.caCert}`, `--service-account-private-key-file=${pki.serviceAccountKey}`,
          `--cluster-signing-cert-file=${pki.caCert}`, `--cluster-signing-key-file=${pki.caKey}`, `--service-cluster-ip-range=${SERVICE_RANGE}`];
      case 'kube-scheduler':
        return [b.kubeScheduler, `--kubeconfig=${await this.#kubeconfig('scheduler', pki.scheduler)}`, '--secure-port=0', '--leader-elect=false'];
    }
  }

  async #kubeconfig(name: string, pair: CertPair): Promise<string> {
    const path = join(this.#o.dir, `${name}.kubeconfig`);
    await writeTlsKubeconfig(path, this.url, this.pki.caCert, pair);
    return path;
  }

  /** GET as admin; the body on 2xx, a rejection otherwise. */
  async #get(path: string): Promise<string> {
    const [ca, cert, key] = await Promise.all([this.pki.caCert, this.pki.admin.cert, this.pki.admin.key].map((f) => readFile(f)));
    return new Promise((resolve, reject) => {
      const req = request(`${this.url}${path}`, { ca, cert, key, timeout: 5000 }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => ((res.statusCode ?? 0) < 300 ? resolve(body) : reject(new Error(`${path}: ${res.statusCode} ${body}`))));
      });
      req.on('timeout', () => req.destroy(new Error(`${path}: timed out`)));
      req.on('error', reject);
      req.end();
    });
  }

  /** Stops scheduler, controller-manager, API server and etcd, newest first; idempotent. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      for (const c of ['kube-scheduler', 'kube-controller-manager', 'kube-apiserver', 'etcd'] as const) {
        const exit = await this.#processes.get(c)?.stop(STOP_GRACE_MS);
        if (exit?.signal === 'SIGKILL') this.#log.warn({ component: c }, 'control-plane component did not stop in time and was killed');
      }
      await Promise.all([...this.#logs.values()].map((l) => new Promise((r) => l.end(r))));
    })();
    return this.#closing;
  }
}
