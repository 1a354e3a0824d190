// podvirt-api: the entry point, and the only module that touches `process`.

import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { MIGRATION_RESOURCE, VMI_RESOURCE, type VirtualMachineInstance, type VirtualMachineInstanceMigration } from '@podvirt/api';
import { HttpEndpoints, KubeClient, KubeVmStateApi, KubeVolumeApi, loadKubeConfig, metricsRoute, probeRoutes, ResourceClient } from '@podvirt/kube-runtime';
import { destination, pino } from 'pino';
import { ApiApp } from './api-app.js';
import { PodvirtApiError } from './api-error.js';
import { parseApiFlags, servingNames, type ApiFlags } from './api-flags.js';
import { ApiMetrics } from './metrics/api-metrics.js';
import { kubeAccessReviewer } from './subresources/access-review.js';
import { KubeHandlerNodes } from './subresources/handler-nodes.js';
import { RequestHeaderSource } from './subresources/request-header-auth.js';
import { SubresourceApi } from './subresources/subresource-api.js';
import { SUBRESOURCE_API_SERVICE } from './subresources/subresource-routes.js';
import { NODE_API_SERVER_NAME, NodeApiCertificates } from './tls/node-api-certificates.js';

// Bounds a stop that hangs; the pod's grace period is longer.
const CLOSE_TIMEOUT_MS = 20_000;

async function main(): Promise<number> {
  // Synchronous stdout: a pod that gets SIGKILLed must not lose its last lines.
  const root = pino({ base: { component: 'podvirt-api' }, level: process.env['PODVIRT_LOG_LEVEL'] ?? 'info' }, destination({ sync: true }));
  let flags;
  try {
    flags = parseApiFlags(process.argv.slice(2));
  } catch (err) {
    root.error({ err, code: err instanceof PodvirtApiError ? err.code : undefined }, 'bad command line');
    return 2;
  }
  root.level = flags.logLevel;
  let client: KubeClient;
  try {
    client = await KubeClient.create(await loadKubeConfig({ kubeconfig: flags.kubeconfig, env: process.env, homeDir: homedir() }), { userAgent: 'podvirt-api' });
  } catch (err) {
    root.fatal({ err }, 'cannot load the Kubernetes client configuration');
    return 1;
  }
  const metrics = new ApiMetrics({ processMetrics: true });
  let ready = false;
  const endpoints = await HttpEndpoints.listen({
    host: flags.httpAddress,
    port: flags.metricsPort,
    routes: { '/metrics': metricsRoute(metrics.registry), ...probeRoutes(() => (ready ? [] : ['serving-certificate'])) },
  });
  root.info({ address: flags.httpAddress, port: endpoints.port, paths: ['/metrics', '/healthz', '/readyz'] }, 'HTTP endpoints listening');
  let handlers: KubeHandlerNodes | undefined;
  try {
    handlers = await handlerNodes(flags, client);
  } catch (err) {
    root.fatal({ err }, 'cannot read the node API client certificate');
    await client.close();
    await endpoints.close();
    return 1;
  }
  if (handlers === undefined) root.warn('no --node-api-ca-secret nor --handler-client-cert: the subresource API answers 503 (admission only)');
  const nodeApiSecrets = flags.handlerApi?.secrets;
  const nodeApi = nodeApiSecrets === undefined || handlers === undefined ? undefined : new NodeApiCertificates({
    client,
    namespace: flags.namespace,
    caSecretName: nodeApiSecrets.caSecret,
    handlerSecretName: nodeApiSecrets.handlerSecret,
    policy: flags.rotation,
    log: root.child({ subcomponent: 'node-api-certificates' }),
    onClientTls: (tls) => handlers.setTls(tls),
  });
  const subresources = new SubresourceApi({
    log: root.child({ subcomponent: 'subresources' }),
    identities: new RequestHeaderSource(client),
    review: kubeAccessReviewer(client),
    vmis: new ResourceClient<VirtualMachineInstance>(client, VMI_RESOURCE),
    vms: new KubeVmStateApi(client),
    volumes: new KubeVolumeApi(client),
    migrations: new ResourceClient<VirtualMachineInstanceMigration>(client, MIGRATION_RESOURCE),
    handlers,
  });
  let app: ApiApp;
  try {
    app = await ApiApp.start({
      client,
      log: root,
      metrics,
      namespace: flags.namespace,
      secretName: flags.tlsSecretName,
      servingNames: servingNames(flags),
      rotation: flags.rotation,
      validatingWebhooks: [flags.validatingWebhookConfiguration],
      mutatingWebhooks: [flags.mutatingWebhookConfiguration],
      apiServices: [SUBRESOURCE_API_SERVICE],
      bindAddress: flags.bindAddress,
      securePort: flags.securePort,
      evictionStrategy: flags.evictionStrategy,
      ...(process.env['POD_NAME'] === undefined ? {} : { instance: process.env['POD_NAME'] }),
      subresources,
      ...(nodeApi === undefined ? {} : { nodeApi }),
    });
  } catch (err) {
    root.fatal({ err }, 'cannot start');
    handlers?.close();
    await client.close();
    await endpoints.close();
    return 1;
  }
  ready = true;
  root.info({ address: flags.bindAddress, port: app.securePort }, 'podvirt-api started');
  await new Promise<void>((resolve) => {
    const stop = (signal: NodeJS.Signals): void => {
      root.info({ signal }, 'stopping');
      resolve();
    };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });
  ready = false;
  const closed = app.close().then(() => true);
  const timeout = new Promise<boolean>((resolve) => setTimeout(() => resolve(false), CLOSE_TIMEOUT_MS).unref());
  if (!(await Promise.race([closed, timeout]))) root.warn({ timeoutMs: CLOSE_TIMEOUT_MS }, 'close timed out');
  handlers?.close();
  await client.close();
  await endpoints.close();
  return 0;
}

/** The handlers' node API: with the client identity of the files given, or none yet (NodeApiCertificates gives it). */
async function handlerNodes(flags: ApiFlags, client: KubeClient): Promise<KubeHandlerNodes | undefined> {
  const h = flags.handlerApi;
  if (h === undefined) return undefined;
  const f = h.files;
  const tls = f === undefined ? undefined : await Promise.all([readFile(f.caFile), readFile(f.certFile), readFile(f.keyFile)]).then(([ca, cert, key]) => ({ ca, cert, key }));
  return new KubeHandlerNodes({ client, tls, serverName: NODE_API_SERVER_NAME, namespace: flags.namespace, port: h.port, addresses: h.addresses });
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`podvirt-api: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
