// podvirt-controller: the entry point, and the only module that touches `process`.

import { homedir, hostname } from 'node:os';
import { HttpEndpoints, KubeClient, loadKubeConfig, metricsRoute, probeRoutes } from '@podvirt/kube-runtime';
import { destination, pino } from 'pino';
import { ControllerApp } from './controller-app.js';
import { ControllerError } from './controller-error.js';
import { parseControllerFlags } from './controller-flags.js';
import { defaultLauncherImage } from './default-launcher-image.js';
import { ControllerMetrics } from './metrics/controller-metrics.js';

// Bounds a stop that hangs (an API call that never returns): the pod's grace period is longer.
const CLOSE_TIMEOUT_MS = 20_000;

async function main(): Promise<number> {
  // Synchronous stdout: a pod that gets SIGKILLed must not lose its last lines.
  const root = pino({ base: { component: 'podvirt-controller' }, level: process.env['PODVIRT_LOG_LEVEL'] ?? 'info' }, destination({ sync: true }));
  let flags;
  try {
    flags = parseControllerFlags(process.argv.slice(2));
  } catch (err) {
    root.error({ err, code: err instanceof ControllerError ? err.code : undefined }, 'bad command line');
    return 2;
  }
  root.level = flags.logLevel;
  let client: KubeClient;
  try {
    client = await KubeClient.create(await loadKubeConfig({ kubeconfig: flags.kubeconfig, env: process.env, homeDir: homedir() }), { userAgent: 'podvirt-controller' });
  } catch (err) {
    root.fatal({ err }, 'cannot load the Kubernetes client configuration');
    return 1;
  }
  const identity = process.env['POD_NAME'] ?? hostname();
  // /metrics, /healthz (the process serves) and /readyz (caches synced) from before the sync on.
  const metrics = new ControllerMetrics({ processMetrics: true });
  let ready = false;
  const endpoints = await HttpEndpoints.listen({
    host: flags.httpAddress,
    port: flags.metricsPort,
    routes: { '/metrics': metricsRoute(metrics.registry), ...probeRoutes(() => (ready ? [] : ['caches-synced'])) },
  });
  root.info({ address: flags.httpAddress, port: endpoints.port, paths: ['/metrics', '/healthz', '/readyz'] }, 'HTTP endpoints listening');
  const app = await ControllerApp.start({
    metrics,
    client,
    log: root,
    launcherImage: flags.launcherImage ?? defaultLauncherImage(),
    allowEmulation: flags.allowEmulation,
    hostDisk: flags.hostDisk,
    evictionStrategy: flags.evictionStrategy,
    nodeHeartbeatTimeoutMs: flags.nodeHeartbeatTimeoutMs,
    unschedulableTimeoutMs: flags.migrationUnschedulableTimeoutMs,
    workers: flags.workers,
    namespace: flags.namespace,
    instance: identity,
    leaderElection: flags.leaderElect ? { namespace: flags.leaseNamespace, name: flags.leaseName, identity, timings: flags.leaderElection } : undefined,
  });
  ready = true;
  root.info({ workers: flags.workers, leaderElect: flags.leaderElect, ...(flags.leaderElect && { leaderElection: flags.leaderElection }), hostDisk: flags.hostDisk }, 'controller started');
  const stop = (signal: NodeJS.Signals): void => {
    root.info({ signal }, 'stopping');
    void app.close();
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  const end = await app.done;
  const closed = app.close().then(() => true);
  const timeout = new Promise<boolean>((resolve) => setTimeout(() => resolve(false), CLOSE_TIMEOUT_MS).unref());
  if (!(await Promise.race([closed, timeout]))) root.warn({ timeoutMs: CLOSE_TIMEOUT_MS }, 'close timed out');
  await client.close();
  await endpoints.close();
  // A replica that lost the Lease exits non-zero so that its Deployment restarts it clean.
  return end === 'lost' ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`podvirt-controller: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
