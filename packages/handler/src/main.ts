// podvirt-handler: the node agent. The only file that touches process.*: flags, environment,
// signals, exit code. SIGTERM stops taking work, lets in-flight reconciles finish within a
// bound, closes the launcher streams, marks the node unschedulable and exits 0 — the VMs keep
// running in their pods.

import { homedir } from 'node:os';
import { KubeClient, KubeEventSink, loadKubeConfig } from '@podvirt/kube-runtime';
import { destination, pino, stdTimeFunctions } from 'pino';
import { HANDLER_USAGE, parseHandlerArgs, type HandlerArgs } from './handler-args.js';
import { isHandlerError } from './handler-error.js';
import { HandlerRuntime } from './handler-runtime.js';
import { KubeNodePatcher } from './heartbeat/kube-node-patcher.js';
import { KubeVmiApi } from './kube/kube-vmi-api.js';
import { PodNetworkWiring } from './network/pod-network-wiring.js';
import { ProxyEndpoints } from './live-migration/proxy-endpoints.js';
import { loadMigrationTlsIfPresent } from './migration-proxy/migration-tls.js';

// Synchronous stdout: a SIGKILLed pod must not lose its last lines.
const log = pino({ base: { component: 'virt-handler' }, timestamp: stdTimeFunctions.isoTime }, destination({ sync: true }));

let args: HandlerArgs;
try {
  args = parseHandlerArgs(process.argv.slice(2), process.env);
} catch (err) {
  if (!isHandlerError(err, 'HANDLER_ERR_INVALID_ARGS')) throw err;
  process.stderr.write(`${err.message}\n${HANDLER_USAGE}\n`);
  process.exit(2);
}

let kube: KubeClient;
try {
  kube = await KubeClient.create(await loadKubeConfig({ kubeconfig: args.kubeconfig, env: process.env, homeDir: homedir() }), { userAgent: 'podvirt-handler' });
} catch (err) {
  log.fatal({ err }, 'cannot load the Kubernetes client configuration');
  process.exit(1);
}

// Live migration: off without --migration-address, and off (said once, here) while its
// certificates are not there at all; a broken set of them stops the handler (README, Migration).
let migrationEndpoints: ProxyEndpoints | undefined;
if (args.migrationProxy === undefined) {
  log.info('live migration off: no --migration-address');
} else {
  try {
    const tls = await loadMigrationTlsIfPresent(args.migrationProxy.tlsDir);
    if (tls === undefined) log.warn({ dir: args.migrationProxy.tlsDir }, 'live migration off: no certificates (ca.crt, tls.crt, tls.key) in --migration-tls-dir');
    else {
      migrationEndpoints = new ProxyEndpoints({ address: args.migrationProxy.address, tls });
      log.info({ address: args.migrationProxy.address, dir: args.migrationProxy.tlsDir }, 'live migration on');
    }
  } catch (err) {
    log.fatal({ err }, 'cannot load the migration TLS files');
    process.exit(1);
  }
}

const runtime = new HandlerRuntime({
  args,
  vmiApi: new KubeVmiApi(kube),
  eventApi: new KubeEventSink(kube),
  nodePatcher: new KubeNodePatcher(kube),
  log: log.child({ node: args.nodeName }),
  processMetrics: true,
  network: new PodNetworkWiring({ log: log.child({ node: args.nodeName, subcomponent: 'pod-network' }) }),
  ...(migrationEndpoints === undefined ? {} : { migrationEndpoints }),
});

const stopping = new AbortController();
const stop = (signal: NodeJS.Signals): void => {
  if (stopping.signal.aborted) return;
  log.info({ signal }, 'stopping');
  stopping.abort();
  runtime.close().then(() => kube.close()).then(
    () => {
      log.info('stopped');
      process.exit(0);
    },
    (err: unknown) => {
      log.error({ err }, 'shutdown failed');
      process.exit(1);
    },
  );
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);

log.info({ node: args.nodeName, podsDir: args.podsDir, workers: args.workers }, 'starting');
runtime.start(stopping.signal).catch((err: unknown) => {
  log.fatal({ err }, 'handler failed to start');
  process.exit(1);
});
