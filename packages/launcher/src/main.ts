// podvirt-launcher: the process entry point. Only this file touches process.*.
import { decodeVmi } from '@podvirt/api';
import { destination, pino, stdTimeFunctions } from 'pino';
import { parse as parseYaml } from 'yaml';
import { parseFlags } from './flags.js';
import { runLauncher } from './launcher.js';

const log = pino({ base: { component: 'virt-launcher' }, timestamp: stdTimeFunctions.isoTime }, destination({ sync: true }));

async function main(): Promise<number> {
  // startedAt: when this process was exec'd, for the start-up stage benchmark (test/bench).
  log.info({ startedAt: Math.round(performance.timeOrigin) }, 'launcher starting');
  const flags = parseFlags(process.argv.slice(2), process.env);
  const raw = process.env['STANDALONE_VMI'];
  // YAML is a superset of JSON, so one parser takes both spellings.
  const standaloneVmi = raw ? decodeVmi(parseYaml(raw)) : undefined;
  const stop = new AbortController();
  for (const sig of ['SIGTERM', 'SIGINT', 'SIGQUIT', 'SIGHUP'] as const) {
    process.on(sig, () => {
      log.info({ signal: sig }, 'stop signal received');
      stop.abort();
    });
  }
  return runLauncher({ flags, log, pid: process.pid, ...(standaloneVmi ? { standaloneVmi } : {}) }, stop.signal);
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    log.fatal({ err }, 'launcher failed');
    process.exit(1);
  },
);
