// Canonical text of a quantity, by Kubernetes' rules: binary values that are whole multiples
// of 1024 keep a binary suffix, everything else is written as an integer times a power of
// 1000 with the largest SI suffix that keeps the number whole (`1.5G` → `1500M`).

import { NANOS_PER_UNIT, type Quantity } from './quantity.js';

const BINARY_SUFFIXES = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];
const DECIMAL_SUFFIXES: ReadonlyMap<number, string> = new Map([
  [-9, 'n'],
  [-6, 'u'],
  [-3, 'm'],
  [0, ''],
  [3, 'k'],
  [6, 'M'],
  [9, 'G'],
  [12, 'T'],
  [15, 'P'],
  [18, 'E'],
]);

function abs(value: bigint): bigint {
  return value < 0n ? -value : value;
}

function formatBinary(units: bigint): string {
  let mantissa = units;
  let step = 0;
  while (step < BINARY_SUFFIXES.length - 1 && mantissa % 1024n === 0n) {
    mantissa /= 1024n;
    step += 1;
  }
  return `${mantissa}${BINARY_SUFFIXES[step] ?? ''}`;
}

function formatDecimal(nanos: bigint, exponentNotation: boolean): string {
  let mantissa = nanos;
  let exponent = -9;
  while (mantissa % 1000n === 0n) {
    mantissa /= 1000n;
    exponent += 3;
  }
  if (exponentNotation) return exponent === 0 ? `${mantissa}` : `${mantissa}e${exponent}`;
  const suffix = DECIMAL_SUFFIXES.get(exponent);
  return suffix === undefined ? `${mantissa}e${exponent}` : `${mantissa}${suffix}`;
}

export function formatQuantity(quantity: Quantity): string {
  const { nanos, format } = quantity;
  if (nanos === 0n) return '0';
  // Below 1024 a binary suffix cannot appear, and a fraction cannot be written in binary
  // notation without rounding, so both fall back to decimal as Kubernetes does.
  const binary = format === 'BinarySI' && abs(nanos) >= 1024n * NANOS_PER_UNIT && nanos % NANOS_PER_UNIT === 0n;
  if (binary) return formatBinary(nanos / NANOS_PER_UNIT);
  return formatDecimal(nanos, format === 'DecimalExponent');
}
