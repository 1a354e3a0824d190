// A condition as Kubernetes writes them, on a VMI's status and a migration's alike (its own file
// so that status.ts and migration.ts, which each need the other's types, do not import each other).

import type { ConditionStatus } from '../conditions.js';

export interface VmiCondition {
  type: string;
  status: ConditionStatus;
  lastProbeTime?: string | null;
  lastTransitionTime?: string | null;
  reason?: string;
  message?: string;
}
