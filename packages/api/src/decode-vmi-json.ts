// decodeVmiJson: the VMI as JSON text (the launcher's `vmi_json`), decoded through decodeVmi
// with the integer literals JSON.parse would round, so errors show numbers as written.

import { decodeVmi, type DecodeOptions } from './decode-vmi.js';
import { unsafeIntegerLiterals } from './exact-integers.js';
import type { DefaultedVmi } from './types/defaulted.js';
import { VmiInvalidError } from './vmi-invalid-error.js';

export interface DecodeJsonOptions extends DecodeOptions {
  /** The field that carries the text (`vmi_json` of a Cmd request), named when it is not JSON. */
  readonly jsonField?: string;
}

export function decodeVmiJson(text: string, options: DecodeJsonOptions = {}): DefaultedVmi {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw new VmiInvalidError([{ field: options.jsonField ?? '', type: 'TypeInvalid', message: `not valid JSON: ${reason}` }], { cause: err });
  }
  return decodeVmi(raw, { ...options, exactIntegers: unsafeIntegerLiterals(text) });
}
