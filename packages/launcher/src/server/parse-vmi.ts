import { InvalidVmiError } from '../errors.js';
import type { Vmi } from '../vmi.js';

/** The request's VMI JSON; anything but a JSON object is refused by the field that carries it. */
export function parseVmiJson(bytes: Uint8Array): Vmi {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(bytes).toString('utf8'));
  } catch (err) {
    throw new InvalidVmiError('vmi_json', `not valid JSON: ${(err as Error).message}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new InvalidVmiError('vmi_json', 'must be a JSON object');
  return parsed as Vmi;
}
