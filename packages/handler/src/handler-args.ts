// The handler's command line, parsed without touching process.*: main.ts passes argv and env.

import { parseArgs } from 'node:util';
import { HandlerError } from './handler-error.js';

export interface HandlerArgs {
  /** Undefined: in-cluster config, else $KUBECONFIG or ~/.kube/config. */
  readonly kubeconfig: string | undefined;
  readonly nodeName: string;
  readonly podsDir: string;
  readonly workers: number;
  readonly watchdogMs: number;
  readonly resyncPeriodMs: number;
}

// Defaults from virt-handler: 10 VM workers, --watchdog-timeout 30s, a 300 s domain resync.
const DEFAULTS = { podsDir: '/pods', workers: 10, watchdog: '30s', resync: '5m' } as const;

export const HANDLER_USAGE = `usage: podvirt-handler [--kubeconfig PATH] [--node-name NAME] [--pods-dir DIR]
                      [--workers N] [--watchdog-timeout DURATION] [--resync-period DURATION]
  --node-name defaults to $NODE_NAME; durations take ms, s, m or h (a bare number is seconds).`;

export function parseHandlerArgs(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): HandlerArgs {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        kubeconfig: { type: 'string' },
        'node-name': { type: 'string' },
        'pods-dir': { type: 'string', default: DEFAULTS.podsDir },
        workers: { type: 'string', default: String(DEFAULTS.workers) },
        'watchdog-timeout': { type: 'string', default: DEFAULTS.watchdog },
        'resync-period': { type: 'string', default: DEFAULTS.resync },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    throw new HandlerError('HANDLER_ERR_INVALID_ARGS', (err as Error).message, { cause: err });
  }
  const nodeName = values['node-name'] ?? env['NODE_NAME'];
  if (nodeName === undefined || nodeName === '') throw new HandlerError('HANDLER_ERR_INVALID_ARGS', '--node-name or NODE_NAME is required');
  const workers = Number(values.workers);
  if (!Number.isInteger(workers) || workers < 1) throw new HandlerError('HANDLER_ERR_INVALID_ARGS', `--workers must be a positive integer, got ${values.workers}`);
  return {
    kubeconfig: values.kubeconfig,
    nodeName,
    podsDir: values['pods-dir'],
    workers,
    watchdogMs: parseDuration('--watchdog-timeout', values['watchdog-timeout']),
    resyncPeriodMs: parseDuration('--resync-period', values['resync-period']),
  };
}

const UNITS: Readonly<Record<string, number>> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, '': 1_000 };

export function parseDuration(flag: string, text: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h|)$/.exec(text.trim());
  const unit = match === null ? undefined : UNITS[match[2] ?? ''];
  const ms = match === null || unit === undefined ? Number.NaN : Number(match[1]) * unit;
  if (!Number.isFinite(ms) || ms <= 0) throw new HandlerError('HANDLER_ERR_INVALID_ARGS', `${flag}: not a positive duration: ${text}`);
  return Math.round(ms);
}
