// Phases of a VirtualMachineInstanceMigration as KubeVirt spells them. The controller moves a
// migration from Pending to Scheduled and on to a final phase; the handlers report what the
// target and the source did in between (PreparingTarget, TargetReady, Running).

export const MigrationPhase = {
  Unset: '',
  Pending: 'Pending',
  Scheduling: 'Scheduling',
  Scheduled: 'Scheduled',
  PreparingTarget: 'PreparingTarget',
  TargetReady: 'TargetReady',
  Running: 'Running',
  Succeeded: 'Succeeded',
  Failed: 'Failed',
} as const;

export type MigrationPhase = (typeof MigrationPhase)[keyof typeof MigrationPhase];

/** A migration in a final phase never moves again. */
export function isFinalMigrationPhase(phase: string | undefined): boolean {
  return phase === MigrationPhase.Succeeded || phase === MigrationPhase.Failed;
}
