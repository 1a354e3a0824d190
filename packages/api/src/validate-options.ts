// Knobs of validation that depend on the machine rather than on KubeVirt's API.

export interface ValidateOptions {
  /**
   * Smallest guest memory accepted, in bytes. Under TCG with the podvirt guest kernel, 64 MiB
   * gives no kernel output at all and 72 MiB is the least that boots.
   */
  readonly minGuestMemoryBytes?: bigint;
}

export const DEFAULT_MIN_GUEST_MEMORY_BYTES = 72n * 1024n * 1024n;

export function resolveValidateOptions(options: ValidateOptions = {}): Required<ValidateOptions> {
  return { minGuestMemoryBytes: options.minGuestMemoryBytes ?? DEFAULT_MIN_GUEST_MEMORY_BYTES };
}
