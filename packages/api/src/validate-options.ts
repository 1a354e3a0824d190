// Knobs of validation that depend on the machine rather than on KubeVirt's API.

import type { ExactIntegers } from './exact-integers.js';

export interface ValidateOptions {
  /**
   * Smallest guest memory accepted, in bytes. Under TCG with the podvirt guest kernel, 64 MiB
   * gives no kernel output at all and 72 MiB is the least that boots.
   */
  readonly minGuestMemoryBytes?: bigint;
  /** Integer literals of the VMI's JSON text that JSON.parse rounded (see exact-integers.ts). */
  readonly exactIntegers?: ExactIntegers;
}

export const DEFAULT_MIN_GUEST_MEMORY_BYTES = 72n * 1024n * 1024n;

export function resolveValidateOptions(options: ValidateOptions = {}): Required<ValidateOptions> {
  return {
    minGuestMemoryBytes: options.minGuestMemoryBytes ?? DEFAULT_MIN_GUEST_MEMORY_BYTES,
    exactIntegers: options.exactIntegers ?? new Map(),
  };
}
