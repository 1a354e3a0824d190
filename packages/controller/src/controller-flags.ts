// Command-line flags of podvirt-controller. Parsing is pure so it can be tested; main.ts
// supplies argv and the environment.

import { parseArgs } from 'node:util';
import { GoFlagError, parseIntegerFlag } from '@podvirt/api/go-flags';
import { ControllerError } from './controller-error.js';
import { checkAllowedDir, HOST_DISK_GATE, type HostDiskPolicy } from './decide/host-disk-policy.js';

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
  /** `--feature-gates` (HostDisk) and `--host-disk-allowed-dir`. */
  readonly hostDisk: HostDiskPolicy;
}

/** The gates `--feature-gates` knows, by KubeVirt's names. */
const FEATURE_GATES: readonly string[] = [HOST_DISK_GATE];

/**
 * `--feature-gates=HostDisk` (KubeVirt's list of names) or `HostDisk=true` (a Kubernetes
 * component's map): both spellings, comma-separated; an unknown gate is an error.
 */
function parseFeatureGates(values: readonly string[]): ReadonlySet<string> {
  const on = new Set<string>();
  for (const item of values.flatMap((v) => v.split(',')).map((v) => v.trim()).filter((v) => v !== '')) {
    const [name = '', value = 'true', ...rest] = item.split('=');
    if (!FEATURE_GATES.includes(name)) {
      throw new ControllerError('CONTROLLER_ERR_BAD_FLAG', `--feature-gates: unknown feature gate ${JSON.stringify(name)}; known: ${FEATURE_GATES.join(', ')}`);
    }
    if (rest.length > 0 || (value !== 'true' && value !== 'false')) {
      throw new ControllerError('CONTROLLER_ERR_BAD_FLAG', `--feature-gates: ${JSON.stringify(item)} must be ${name} or ${name}=true|false`);
    }
    if (value === 'true') on.add(name);
    else on.delete(name);
  }
  return on;
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
        'feature-gates': { type: 'string', multiple: true, default: [] },
        'host-disk-allowed-dir': { type: 'string', multiple: true, default: [] },
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
    hostDisk: {
      enabled: parseFeatureGates(v['feature-gates']).has(HOST_DISK_GATE),
      allowedDirs: [...new Set(v['host-disk-allowed-dir'].map(checkAllowedDir))],
    },
  };
}
