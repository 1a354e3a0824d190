// Command-line flags of podvirt-controller. Parsing is pure so it can be tested; main.ts
// supplies argv and the environment.

import { parseArgs } from 'node:util';
import { ControllerError } from './controller-error.js';

export interface ControllerFlags {
  readonly kubeconfig: string | undefined;
  readonly launcherImage: string | undefined;
  readonly allowEmulation: boolean;
  readonly namespace: string | undefined;
  readonly workers: number;
  readonly leaderElect: boolean;
  readonly leaseNamespace: string;
  readonly leaseName: string;
  readonly logLevel: string;
  /** Bind address of /metrics, /healthz and /readyz. */
  readonly httpAddress: string;
  /** Their port; 0 picks a free one (logged). */
  readonly metricsPort: number;
}

/** KubeVirt's virt-controller runs 3 VMI workers by default. */
export const DEFAULT_WORKERS = 3;

/** virt-controller serves its metrics on 8443 too. */
export const DEFAULT_METRICS_PORT = 8443;

export function parseControllerFlags(argv: readonly string[]): ControllerFlags {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        kubeconfig: { type: 'string' },
        'launcher-image': { type: 'string' },
        'allow-emulation': { type: 'boolean', default: false },
        namespace: { type: 'string' },
        workers: { type: 'string', default: String(DEFAULT_WORKERS) },
        'leader-elect': { type: 'boolean', default: false },
        'lease-namespace': { type: 'string', default: 'kube-system' },
        'lease-name': { type: 'string', default: 'podvirt-controller' },
        'log-level': { type: 'string', default: 'info' },
        'http-address': { type: 'string', default: '127.0.0.1' },
        'metrics-port': { type: 'string', default: String(DEFAULT_METRICS_PORT) },
      },
    });
  } catch (err) {
    throw new ControllerError('CONTROLLER_ERR_BAD_FLAG', err instanceof Error ? err.message : String(err), { cause: err });
  }
  const v = parsed.values;
  const workers = Number(v.workers);
  if (!Number.isInteger(workers) || workers < 1 || workers > 64) {
    throw new ControllerError('CONTROLLER_ERR_BAD_FLAG', `--workers must be an integer from 1 to 64, got ${String(v.workers)}`);
  }
  const port = Number(v['metrics-port']);
  if (!/^\d+$/.test(v['metrics-port']) || port > 65_535) {
    throw new ControllerError('CONTROLLER_ERR_BAD_FLAG', `--metrics-port must be a port number (0: any free port), got ${v['metrics-port']}`);
  }
  return {
    kubeconfig: v.kubeconfig,
    launcherImage: v['launcher-image'],
    allowEmulation: v['allow-emulation'],
    namespace: v.namespace,
    workers,
    leaderElect: v['leader-elect'],
    leaseNamespace: v['lease-namespace'],
    leaseName: v['lease-name'],
    logLevel: v['log-level'],
    httpAddress: v['http-address'],
    metricsPort: port,
  };
}
