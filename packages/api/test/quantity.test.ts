import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  compareQuantities,
  formatQuantity,
  isZeroQuantity,
  parseQuantity,
  parseQuantityValue,
  QuantityError,
  toBytes,
  toMillis,
  type QuantityFormat,
} from '../src/index.js';

// input, format, canonical text, whole units (rounded away from zero), millis
const VALID: [string, QuantityFormat, string, bigint, bigint][] = [
  ['0', 'DecimalSI', '0', 0n, 0n],
  ['000', 'DecimalSI', '0', 0n, 0n],
  ['0Gi', 'BinarySI', '0', 0n, 0n],
  ['1', 'DecimalSI', '1', 1n, 1000n],
  ['128Mi', 'BinarySI', '128Mi', 134217728n, 134217728000n],
  ['1.5Gi', 'BinarySI', '1536Mi', 1610612736n, 1610612736000n],
  ['2048Ki', 'BinarySI', '2Mi', 2097152n, 2097152000n],
  ['1Ki', 'BinarySI', '1Ki', 1024n, 1024000n],
  ['1Ei', 'BinarySI', '1Ei', 1152921504606846976n, 1152921504606846976000n],
  ['1024Ei', 'BinarySI', '1024Ei', 1180591620717411303424n, 1180591620717411303424000n],
  ['0.5Ki', 'BinarySI', '512', 512n, 512000n],
  ['0.1Ki', 'BinarySI', '102400m', 103n, 102400n],
  ['500m', 'DecimalSI', '500m', 1n, 500n],
  ['1500m', 'DecimalSI', '1500m', 2n, 1500n],
  ['2000m', 'DecimalSI', '2', 2n, 2000n],
  ['1.5G', 'DecimalSI', '1500M', 1500000000n, 1500000000000n],
  ['3G', 'DecimalSI', '3G', 3000000000n, 3000000000000n],
  ['64M', 'DecimalSI', '64M', 64000000n, 64000000000n],
  ['1k', 'DecimalSI', '1k', 1000n, 1000000n],
  ['+3k', 'DecimalSI', '3k', 3000n, 3000000n],
  ['1E', 'DecimalSI', '1E', 1000000000000000000n, 1000000000000000000000n],
  ['100n', 'DecimalSI', '100n', 1n, 1n],
  ['10u', 'DecimalSI', '10u', 1n, 1n],
  ['1.', 'DecimalSI', '1', 1n, 1000n],
  ['.5', 'DecimalSI', '500m', 1n, 500n],
  ['1.G', 'DecimalSI', '1G', 1000000000n, 1000000000000n],
  ['1e3', 'DecimalExponent', '1e3', 1000n, 1000000n],
  ['1E3', 'DecimalExponent', '1e3', 1000n, 1000000n],
  ['12e2', 'DecimalExponent', '1200', 1200n, 1200000n],
  ['1.5e3', 'DecimalExponent', '1500', 1500n, 1500000n],
  ['1e+21', 'DecimalExponent', '1e21', 10n ** 21n, 10n ** 24n],
  ['1e-3', 'DecimalExponent', '1e-3', 1n, 1n],
  // Below a nano, values round up to one nano: a sliver asked for is a sliver given.
  ['1e-10', 'DecimalExponent', '1e-9', 1n, 1n],
  ['0.0000000001', 'DecimalSI', '1n', 1n, 1n],
  ['-1.5Gi', 'BinarySI', '-1536Mi', -1610612736n, -1610612736000n],
  ['-500m', 'DecimalSI', '-500m', -1n, -500n],
  ['123456789012345678901234567890', 'DecimalSI', '123456789012345678901234567890', 123456789012345678901234567890n, 123456789012345678901234567890000n],
];

const INVALID: [string, RegExp][] = [
  ['', /empty string/],
  ['-', /expected a number/],
  ['+', /expected a number/],
  ['.', /expected a number/],
  ['Gi', /expected a number/],
  ['abc', /expected a number/],
  ['--1', /expected a number/],
  ['1K', /unknown suffix "K"/],
  ['1ki', /unknown suffix "ki"/],
  ['1KiB', /unknown suffix "KiB"/],
  ['1 Gi', /unknown suffix " Gi"/],
  ['1Gi ', /unknown suffix "Gi "/],
  [' 1Gi', /expected a number/],
  ['1e', /unknown suffix "e"/],
  ['1e1.5', /unknown suffix "e1.5"/],
  ['1.2.3', /unknown suffix ".3"/],
  ['1Mi1', /unknown suffix "Mi1"/],
  ['1e1000', /exponent 1000 is outside/],
  ['1'.repeat(300), /longer than 256/],
];

describe('parseQuantity', () => {
  for (const [input, format, canonical, units, millis] of VALID) {
    it(`reads ${JSON.stringify(input)}`, () => {
      const quantity = parseQuantity(input);
      assert.equal(quantity.format, format);
      assert.equal(formatQuantity(quantity), canonical);
      assert.equal(toBytes(quantity), units);
      assert.equal(toMillis(quantity), millis);
      // The canonical text reads back to the same value.
      assert.equal(parseQuantity(canonical).nanos, quantity.nanos);
    });
  }

  for (const [input, reason] of INVALID) {
    it(`refuses ${JSON.stringify(input.length > 20 ? `${input.slice(0, 20)}…` : input)}`, () => {
      assert.throws(
        () => parseQuantity(input),
        (err: unknown) => err instanceof QuantityError && err.code === 'API_ERR_QUANTITY' && err.input === input && reason.test(err.message),
      );
    });
  }

  it('accepts JSON numbers as Kubernetes does', () => {
    assert.equal(toBytes(parseQuantityValue(134217728)), 134217728n);
    assert.equal(toMillis(parseQuantityValue(0.5)), 500n);
    assert.equal(toBytes(parseQuantityValue(1e21)), 10n ** 21n);
    assert.throws(() => parseQuantityValue(Number.NaN), QuantityError);
    assert.throws(() => parseQuantityValue(Number.POSITIVE_INFINITY), QuantityError);
  });
});

describe('compareQuantities', () => {
  const rows: [string | number, string | number, -1 | 0 | 1][] = [
    ['1Gi', '1024Mi', 0],
    ['1G', '1Gi', -1],
    ['1.5Gi', '1536Mi', 0],
    ['1', '1000m', 0],
    ['999m', 1, -1],
    ['2', '1999m', 1],
    ['-1', '0', -1],
    ['1e3', '1k', 0],
    [134217728, '128Mi', 0],
  ];
  for (const [a, b, expected] of rows) {
    it(`${String(a)} vs ${String(b)} is ${expected}`, () => {
      assert.equal(compareQuantities(a, b), expected);
      assert.equal(compareQuantities(b, a), expected === 0 ? 0 : -expected);
    });
  }

  it('throws on a malformed operand', () => {
    assert.throws(() => compareQuantities('1Gi', 'lots'), QuantityError);
  });

  it('knows zero in every notation', () => {
    for (const zero of ['0', '0Mi', '0e3', '-0', '0.000']) assert.equal(isZeroQuantity(zero), true, zero);
    assert.equal(isZeroQuantity('1n'), false);
  });
});
