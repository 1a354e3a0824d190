// Reading numbers out of quantities: comparison, bytes, millis. Conversions round away from
// zero like Kubernetes' Value() and MilliValue(): `0.5` bytes is 1 byte, `1.0001` cpu is 1001m.

import { NANOS_PER_UNIT, parseQuantityValue, type Quantity } from './quantity.js';

type QuantityLike = Quantity | string | number;

function nanosOf(value: QuantityLike): bigint {
  return typeof value === 'object' ? value.nanos : parseQuantityValue(value).nanos;
}

function scaleUp(nanos: bigint, per: bigint): bigint {
  const magnitude = nanos < 0n ? -nanos : nanos;
  const scaled = (magnitude + per - 1n) / per;
  return nanos < 0n ? -scaled : scaled;
}

/** −1, 0 or 1 as `a` is less than, equal to or greater than `b`; strings are parsed first. */
export function compareQuantities(a: QuantityLike, b: QuantityLike): -1 | 0 | 1 {
  const left = nanosOf(a);
  const right = nanosOf(b);
  return left < right ? -1 : left > right ? 1 : 0;
}

/** The value in whole units (bytes for memory, cores for cpu), rounded away from zero. */
export function toBytes(value: QuantityLike): bigint {
  return scaleUp(nanosOf(value), NANOS_PER_UNIT);
}

/** The value in thousandths (millicores for cpu), rounded away from zero. */
export function toMillis(value: QuantityLike): bigint {
  return scaleUp(nanosOf(value), 1_000_000n);
}

export function isZeroQuantity(value: QuantityLike): boolean {
  return nanosOf(value) === 0n;
}
