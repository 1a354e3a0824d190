// Kubernetes resource quantities (`128Mi`, `1.5Gi`, `500m`, `1e3`), parsed exactly with
// bigint. Like Kubernetes, a value is kept to nano precision, rounded away from zero (asking
// for a sliver of a resource still gets some), and remembers which notation it was written
// in so that formatting gives back the canonical form Kubernetes would print.

import { QuantityError } from './quantity-error.js';

export type QuantityFormat = 'BinarySI' | 'DecimalSI' | 'DecimalExponent';

export interface Quantity {
  /** The value times 10^9, so that milli and nano values stay integers. */
  readonly nanos: bigint;
  readonly format: QuantityFormat;
}

export const NANOS_PER_UNIT = 1_000_000_000n;

const BINARY_SUFFIXES: Readonly<Record<string, number>> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const DECIMAL_SUFFIXES: Readonly<Record<string, number>> = {
  n: -9,
  u: -6,
  m: -3,
  '': 0,
  k: 3,
  M: 6,
  G: 9,
  T: 12,
  P: 15,
  E: 18,
};

// Bounds the bigint arithmetic: Kubernetes itself limits exponents to int32, which would let
// `1e2000000000` allocate gigabytes here.
const MAX_EXPONENT = 100;
const MAX_INPUT_LENGTH = 256;

const NUMBER_RE = /^([+-]?)([0-9]*)(?:\.([0-9]*))?(.*)$/s;
const EXPONENT_RE = /^[eE]([+-]?[0-9]+)$/;

interface Suffix {
  readonly format: QuantityFormat;
  readonly base2: number;
  readonly base10: number;
}

function parseSuffix(input: string, suffix: string): Suffix {
  const binary = BINARY_SUFFIXES[suffix];
  if (binary !== undefined) return { format: 'BinarySI', base2: binary, base10: 0 };
  const decimal = DECIMAL_SUFFIXES[suffix];
  if (decimal !== undefined) return { format: 'DecimalSI', base2: 0, base10: decimal };
  const exponent = EXPONENT_RE.exec(suffix);
  if (exponent?.[1] !== undefined) {
    const value = Number(exponent[1]);
    if (Math.abs(value) > MAX_EXPONENT) {
      throw new QuantityError(input, `exponent ${value} is outside ±${MAX_EXPONENT}`);
    }
    return { format: 'DecimalExponent', base2: 0, base10: value };
  }
  throw new QuantityError(
    input,
    `unknown suffix ${JSON.stringify(suffix)}; accepted are Ki Mi Gi Ti Pi Ei, n u m k M G T P E, or an exponent like e3`,
  );
}

/** Divides and rounds the magnitude up, which is rounding away from zero for the signed value. */
function divideUp(numerator: bigint, denominator: bigint): bigint {
  return (numerator + denominator - 1n) / denominator;
}

/**
 * Parses a quantity string. Throws QuantityError on anything Kubernetes would reject, and also
 * on a sign or a dot without any digit (Kubernetes reads those as zero; a typo is likelier).
 */
export function parseQuantity(input: string): Quantity {
  if (typeof input !== 'string') throw new QuantityError(String(input), 'not a string');
  if (input.length === 0) throw new QuantityError(input, 'empty string');
  if (input.length > MAX_INPUT_LENGTH) throw new QuantityError(input, `longer than ${MAX_INPUT_LENGTH} characters`);
  const match = NUMBER_RE.exec(input);
  const whole = match?.[2] ?? '';
  const fraction = match?.[3] ?? '';
  if (!match || whole.length + fraction.length === 0) {
    throw new QuantityError(input, 'expected a number such as 128Mi, 1.5Gi, 500m or 1e3');
  }
  const suffix = parseSuffix(input, match[4] ?? '');
  const mantissa = BigInt(whole + fraction) * 2n ** BigInt(suffix.base2);
  const scale = suffix.base10 - fraction.length + 9;
  const magnitude = scale >= 0 ? mantissa * 10n ** BigInt(scale) : divideUp(mantissa, 10n ** BigInt(-scale));
  const nanos = match[1] === '-' ? -magnitude : magnitude;
  return { nanos, format: suffix.format };
}

/** Like parseQuantity, but also accepts a JSON number, as Kubernetes' decoder does. */
export function parseQuantityValue(value: string | number): Quantity {
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new QuantityError(String(value), 'not a finite number');
    return parseQuantity(String(value));
  }
  return parseQuantity(value);
}
