// Command-line flags of podvirt-controller. Parsing is pure so it can be tested; main.ts
// supplies argv and the environment.

import { parseArgs } from 'node:util';
import { GoFlagError, parseIntegerFlag } from '@podvirt/api/go-flags';
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
}

/** KubeVirt's virt-controller runs 3 VMI workers by default. */
export const DEFAULT_WORKERS = 3;

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
      },
    });
  } catch (err) {
    throw new ControllerError('CONTROLLER_ERR_BAD_FLAG', err instanceof Error ? err.message : String(err), { cause: err });
  }
  const v = parsed.values;
  let workers: number;
  try {
    workers = parseIntegerFlag('workers', v.workers, { min: 1, max: 64 });
  } catch (err) {
    if (err instanceof GoFlagError) throw new ControllerError('CONTROLLER_ERR_BAD_FLAG', err.message, { cause: err });
    throw err;
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
  };
}
