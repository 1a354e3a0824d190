import { parseQuantityValue, toBytes } from '@podvirt/api';
import { InvalidVmiError } from '../errors.js';

/** A Kubernetes quantity as whole bytes (rounded up); a malformed one is refused by its field path. */
export function quantityToBytes(value: unknown, field: string): bigint {
  if (typeof value !== 'string' && typeof value !== 'number') {
    throw new InvalidVmiError(field, `invalid quantity ${JSON.stringify(value)} (expected e.g. 128Mi, 1G, 512)`);
  }
  try {
    return toBytes(parseQuantityValue(value));
  } catch (err) {
    throw new InvalidVmiError(field, `invalid quantity ${JSON.stringify(value)}: ${(err as Error).message}`);
  }
}
