// podvirt-handler: the node agent. The only file that touches process.*: flags, environment,
// signals, exit code. SIGTERM stops taking work, lets in-flight reconciles finish within a
// bound, closes the launcher streams and exits 0 — the VMs keep running in their pods.

import { KubeConfig } from '@kubernetes/client-node';
import { destination, pino, stdTimeFunctions } from 'pino';
import { HandlerController } from './handler-controller.js';
import { HANDLER_USAGE, parseHandlerArgs, type HandlerArgs } from './handler-args.js';
import { isHandlerError } from './handler-error.js';
import { KubeEventApi } from './kube/kube-event-api.js';
import { KubeVmiApi } from './kube/kube-vmi-api.js';

// Bound on finishing in-flight reconciles at shutdown: a Sync may take KubeVirt's 20 s long
// timeout, but a DaemonSet pod gets 30 s by default before SIGKILL.
const SHUTDOWN_GRACE_MS = 15_000;

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

const kc = new KubeConfig();
if (args.kubeconfig === undefined) kc.loadFromDefault();
else kc.loadFromFile(args.kubeconfig);

const controller = new HandlerController({
  nodeName: args.nodeName,
  podsDir: args.podsDir,
  vmiApi: new KubeVmiApi(kc),
  eventApi: new KubeEventApi(kc),
  log: log.child({ node: args.nodeName }),
  workers: args.workers,
  watchdogMs: args.watchdogMs,
  resyncPeriodMs: args.resyncPeriodMs,
});

const stopping = new AbortController();
const stop = (signal: NodeJS.Signals): void => {
  if (stopping.signal.aborted) return;
  log.info({ signal }, 'stopping');
  stopping.abort();
  controller.close(SHUTDOWN_GRACE_MS).then(
    () => process.exit(0),
    (err: unknown) => {
      log.error({ err }, 'shutdown failed');
      process.exit(1);
    },
  );
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);

log.info({ node: args.nodeName, podsDir: args.podsDir, workers: args.workers }, 'starting');
controller.start(stopping.signal).catch((err: unknown) => {
  log.fatal({ err }, 'handler failed to start');
  process.exit(1);
});
