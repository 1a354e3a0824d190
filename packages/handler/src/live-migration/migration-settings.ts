// The source handler's migration settings, from its flags: KubeVirt's `spec.migrations` knobs
// (bandwidthPerMigration, progressTimeout, completionTimeoutPerGiB, allowAutoConverge,
// allowPostCopy) with KubeVirt's defaults. Durations use the one grammar (`@podvirt/api/duration`).

import { durationFlagMs, integerFlag, invalidArgs as invalid } from '../flag-values.js';

export interface MigrationSettings {
  /** MiB/s; 0 is unlimited (KubeVirt's default). */
  readonly bandwidthMiBs: number;
  /** Abort when the data left has not shrunk for this long; 0 never. */
  readonly progressTimeoutSeconds: number;
  /** Abort after this many seconds per GiB of guest; 0 never. */
  readonly completionTimeoutPerGibSeconds: number;
  readonly allowAutoConverge: boolean;
}

export const DEFAULT_MIGRATION_SETTINGS: MigrationSettings = {
  bandwidthMiBs: 0,
  progressTimeoutSeconds: 150,
  completionTimeoutPerGibSeconds: 150,
  allowAutoConverge: false,
};

export const MIGRATION_OPTIONS = {
  'migration-bandwidth': { type: 'string', default: '0' },
  'migration-progress-timeout': { type: 'string', default: '150s' },
  'migration-completion-timeout-per-gib': { type: 'string', default: '150s' },
  'migration-allow-auto-converge': { type: 'boolean', default: false },
  'migration-allow-post-copy': { type: 'boolean', default: false },
} as const;

export const MIGRATION_USAGE = `                      [--migration-tls-dir DIR --migration-address ADDR]
                      [--migration-bandwidth MIB_PER_S] [--migration-progress-timeout DURATION]
                      [--migration-completion-timeout-per-gib DURATION] [--migration-allow-auto-converge]`;

export interface MigrationFlagValues {
  readonly 'migration-bandwidth': string;
  readonly 'migration-progress-timeout': string;
  readonly 'migration-completion-timeout-per-gib': string;
  readonly 'migration-allow-auto-converge': boolean;
  readonly 'migration-allow-post-copy': boolean;
}

export function parseMigrationSettings(values: MigrationFlagValues): MigrationSettings {
  if (values['migration-allow-post-copy']) {
    throw invalid('--migration-allow-post-copy: podvirt migrates pre-copy only (allowPostCopy is not supported)');
  }
  return {
    // MiB/s, 0: unlimited. The launcher's field is 64-bit; a petabyte a second is already a typo.
    bandwidthMiBs: integerFlag('--migration-bandwidth', values['migration-bandwidth'], { max: 1_000_000_000 }),
    progressTimeoutSeconds: seconds('--migration-progress-timeout', values['migration-progress-timeout']),
    completionTimeoutPerGibSeconds: seconds('--migration-completion-timeout-per-gib', values['migration-completion-timeout-per-gib']),
    allowAutoConverge: values['migration-allow-auto-converge'],
  };
}

/** Whole seconds (rounded up: a bound is never shortened), 0 meaning never; within a timer's reach, so within the 32-bit wire field. */
function seconds(flag: string, text: string): number {
  return Math.ceil(durationFlagMs(flag, text) / 1000);
}
