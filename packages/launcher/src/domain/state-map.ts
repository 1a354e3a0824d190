import type { DomainStatus } from './domain-connection.js';

/** KubeVirt's LifeCycle names for libvirt's domain states. */
const STATES: Readonly<Record<string, string>> = {
  NOSTATE: 'NoState',
  RUNNING: 'Running',
  BLOCKED: 'Blocked',
  PAUSED: 'Paused',
  SHUTDOWN: 'ShuttingDown',
  SHUTOFF: 'Shutoff',
  CRASHED: 'Crashed',
  PMSUSPENDED: 'PMSuspended',
};

/** KubeVirt's StateChangeReason names, per libvirt state (reason tables differ by state). */
const REASONS: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  RUNNING: {
    UNKNOWN: 'Unknown', BOOTED: 'Booted', MIGRATED: 'Migrated', RESTORED: 'Restored', FROM_SNAPSHOT: 'FromSnapshot',
    UNPAUSED: 'Unpaused', MIGRATION_CANCELED: 'MigrationCanceled', SAVE_CANCELED: 'SaveCanceled', WAKEUP: 'Wakeup',
    CRASHED: 'Crashed', POSTCOPY: 'Postcopy', POSTCOPY_FAILED: 'PostcopyFailed',
  },
  PAUSED: {
    UNKNOWN: 'Unknown', USER: 'User', MIGRATION: 'Migration', SAVE: 'Save', DUMP: 'Dump', IOERROR: 'IOError',
    WATCHDOG: 'Watchdog', FROM_SNAPSHOT: 'FromSnapshot', SHUTTING_DOWN: 'ShuttingDown', SNAPSHOT: 'Snapshot',
    CRASHED: 'Crashed', STARTING_UP: 'StartingUp', POSTCOPY: 'Postcopy', POSTCOPY_FAILED: 'PostcopyFailed',
  },
  SHUTDOWN: { UNKNOWN: 'Unknown', USER: 'User' },
  SHUTOFF: {
    UNKNOWN: 'Unknown', SHUTDOWN: 'Shutdown', DESTROYED: 'Destroyed', CRASHED: 'Crashed', MIGRATED: 'Migrated',
    SAVED: 'Saved', FAILED: 'Failed', FROM_SNAPSHOT: 'FromSnapshot', DAEMON: 'Unknown',
  },
  CRASHED: { UNKNOWN: 'Unknown', PANICKED: 'Panicked' },
  NOSTATE: { UNKNOWN: 'Unknown' },
  BLOCKED: { UNKNOWN: 'Unknown' },
  PMSUSPENDED: { UNKNOWN: 'Unknown' },
};

export interface KubevirtState {
  readonly state: string;
  readonly reason: string;
}

/** libvirt state + reason → KubeVirt LifeCycle + StateChangeReason; anything unknown maps to NoState/Unknown. */
export function toKubevirtState(status: DomainStatus | undefined): KubevirtState {
  if (status === undefined) return { state: 'NoState', reason: 'NonExistent' };
  return { state: STATES[status.state] ?? 'NoState', reason: REASONS[status.state]?.[status.reason] ?? 'Unknown' };
}

/** The domain's qemu is gone: the launcher's reason to exit once the final state is delivered. */
export function isDown(status: DomainStatus | undefined): boolean {
  return status === undefined || status.state === 'SHUTOFF' || status.state === 'CRASHED';
}
