// The VMI as the one decode path gives it (the API's defaults applied, every check passed), for
// what a reconcile pass reads of the spec: the grace period, ACPI, live migratability. KubeVirt's
// API server persists the defaults; podvirt has no admission webhook, so the handler applies them
// here, once, and nothing downstream defaults a field again.

import { decodeVmi, VmiInvalidError, type DefaultedVmi, type VirtualMachineInstance } from '@podvirt/api';

/** Distinct VMIs remembered; a node runs far fewer than this. */
const DEFAULT_MAX = 256;

export class DefaultedVmis {
  readonly #max: number;
  readonly #decoded = new Map<string, DefaultedVmi | undefined>();

  constructor(max = DEFAULT_MAX) {
    this.#max = max;
  }

  /**
   * The VMI's spec and metadata, defaulted; undefined for a VMI gone or one that does not decode
   * (edited into something invalid: its Sync names the field). The status is not decoded: read
   * it from the VMI itself. Every pass asks, and the answer depends on the spec and the metadata
   * alone, so the decode (~0.5 ms) runs once for each distinct pair; resourceVersion moves with
   * every status write and is left out.
   */
  get(vmi: VirtualMachineInstance | undefined): DefaultedVmi | undefined {
    if (vmi === undefined) return undefined;
    const { resourceVersion: _moves, ...metadata } = vmi.metadata;
    const key = JSON.stringify([metadata, vmi.spec]);
    if (this.#decoded.has(key)) return this.#decoded.get(key);
    const decoded = decodeOrUndefined({ ...vmi, status: {} });
    if (this.#decoded.size >= this.#max) this.#decoded.clear();
    this.#decoded.set(key, decoded);
    return decoded;
  }
}

function decodeOrUndefined(vmi: VirtualMachineInstance): DefaultedVmi | undefined {
  try {
    return decodeVmi(vmi);
  } catch (err) {
    if (err instanceof VmiInvalidError) return undefined;
    throw err;
  }
}
