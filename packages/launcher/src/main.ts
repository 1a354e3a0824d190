// podvirt-launcher: the process entry point. Only this file touches process.*.
//
// Start-up order matters for every VMI's start: the libvirt daemon takes ~0.2 s to come up, and
// so does loading the launcher's code (gRPC, the libvirt client, the converter). So this module
// loads only what starting the daemon needs, starts it, and loads the rest (launcher.ts, a
// separate chunk of the bundle) while the daemon comes up.
import { vmiLogBindings } from '@podvirt/api/vmi-log-bindings';
import { destination, pino, stdTimeFunctions } from 'pino';
import { DEFAULT_LIBVIRT_DIRS, startDaemon, type StartedDaemon } from './daemon/start-daemon.js';
import { parseFlags } from './flags.js';
import { checkCapabilities } from './host/capabilities.js';

const log = pino({ base: { component: 'virt-launcher' }, timestamp: stdTimeFunctions.isoTime }, destination({ sync: true }));

async function main(): Promise<number> {
  // startedAt: when this process was exec'd, for the start-up stage benchmark (test/bench).
  log.info({ startedAt: Math.round(performance.timeOrigin) }, 'launcher starting');
  const flags = parseFlags(process.argv.slice(2), process.env);
  // Before the daemon starts: a container without what libvirt needs fails here, naming it.
  // PODVIRT_CAPABILITY_CHECK=off lets test/bench/compute-capabilities.ts see what fails instead.
  if (process.env['PODVIRT_CAPABILITY_CHECK'] !== 'off') await checkCapabilities();
  const stop = new AbortController();
  for (const sig of ['SIGTERM', 'SIGINT', 'SIGQUIT', 'SIGHUP'] as const) {
    process.on(sig, () => {
      log.info({ signal: sig }, 'stop signal received');
      stop.abort();
    });
  }
  // A launcher pod names its VMI on the command line; a standalone run (STANDALONE_VMI) starts
  // its daemon in runLauncher once the VMI is read.
  const { namespace, name, uid } = flags;
  let daemon: Promise<StartedDaemon> | undefined;
  if (namespace && name && uid && !flags.simulateCrash) {
    daemon = startDaemon(DEFAULT_LIBVIRT_DIRS, flags.capsCacheDir, log.child(vmiLogBindings({ namespace, name, uid })), stop.signal, flags.daemon, flags.virtqemud);
    daemon.catch(() => undefined);
  }
  const { runLauncher } = await import('./launcher.js');
  const raw = process.env['STANDALONE_VMI'];
  const standaloneVmi = raw ? (await import('./standalone-vmi.js')).decodeStandaloneVmi(raw) : undefined;
  return runLauncher({ flags, log, pid: process.pid, ...(standaloneVmi ? { standaloneVmi } : {}), ...(daemon ? { daemon } : {}) }, stop.signal);
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    log.fatal({ err }, 'launcher failed');
    process.exit(1);
  },
);
