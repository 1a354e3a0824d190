import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatDuration, parseDuration } from '../src/duration.js';

const parsed: [string, number | undefined][] = [
  ['300', 300_000], ['0', 0], ['300s', 300_000], ['5m', 300_000], ['1h30m', 5_400_000], ['250ms', 250],
  ['1.5s', 1500], ['2m3s', 123_000], ['', undefined], ['5', 5000], ['5x', undefined], ['m', undefined],
  ['-1', undefined], ['1 m', undefined], ['1m ', undefined],
];
for (const [text, ms] of parsed) {
  test(`parseDuration(${JSON.stringify(text)}) = ${ms}`, () => assert.equal(parseDuration(text), ms));
}

const formatted: [number, string][] = [[250, '250ms'], [20_000, '20s'], [300_000, '5m'], [90_000, '1m30s'], [3_600_000, '1h'], [1500, '1.5s']];
for (const [ms, text] of formatted) {
  test(`formatDuration(${ms}) = ${text}`, () => assert.equal(formatDuration(ms), text));
}
