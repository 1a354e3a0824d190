// The one duration grammar every command line uses: Go's time.ParseDuration plus bare seconds.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DurationError, formatDuration, parseDuration } from '../src/duration.js';

const parsed: [string, number][] = [
  ['300', 300_000], ['0', 0], ['0s', 0], ['300s', 300_000], ['5m', 300_000], ['1h30m', 5_400_000], ['1h30m10s', 5_410_000],
  ['1.5h', 5_400_000], ['250ms', 250], ['300ms', 300], ['1.5s', 1500], ['.5s', 500], ['2m3s', 123_000], ['5', 5000],
  ['1500us', 2], ['1500µs', 2], ['2000000ns', 2], ['+1s', 1000], ['1m1m', 120_000],
];
for (const [text, ms] of parsed) {
  test(`parseDuration(${JSON.stringify(text)}) = ${ms}`, () => assert.equal(parseDuration(text), ms));
}

const refused = ['', '5x', 'm', '-1', '-1s', '1 m', '1m ', 's1', '1.2.3s', '1d', '+', '.s'];
for (const text of refused) {
  test(`parseDuration(${JSON.stringify(text)}) is refused by name`, () =>
    assert.throws(() => parseDuration(text), (e: unknown) => e instanceof DurationError && e.message.includes(JSON.stringify(text))));
}

const formatted: [number, string][] = [[0, '0s'], [250, '250ms'], [20_000, '20s'], [300_000, '5m'], [90_000, '1m30s'], [3_600_000, '1h'], [1500, '1.5s']];
for (const [ms, text] of formatted) {
  test(`formatDuration(${ms}) = ${text}`, () => {
    assert.equal(formatDuration(ms), text);
    assert.equal(parseDuration(text), ms, 'formatting round-trips');
  });
}
