// VMI phases as KubeVirt spells them. Pending/Scheduling/Scheduled belong to the controller,
// Running/Succeeded/Failed to the handler; Unknown exists in the API but no controller sets it.

export const VmiPhase = {
  Unset: '',
  Pending: 'Pending',
  Scheduling: 'Scheduling',
  Scheduled: 'Scheduled',
  Running: 'Running',
  Succeeded: 'Succeeded',
  Failed: 'Failed',
  Unknown: 'Unknown',
} as const;

export type VmiPhase = (typeof VmiPhase)[keyof typeof VmiPhase];

export const VMI_PHASES: readonly VmiPhase[] = Object.values(VmiPhase);

/** A VMI in a final phase never moves again; its launcher pod is only cleaned up. */
export function isFinalPhase(phase: string | undefined): boolean {
  return phase === VmiPhase.Succeeded || phase === VmiPhase.Failed;
}

export function isVmiPhase(value: unknown): value is VmiPhase {
  return typeof value === 'string' && (VMI_PHASES as readonly string[]).includes(value);
}
