// The one parser of Go-style command lines (the launcher's, the monitor's, podvirt-tail's).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GoFlagError, parseGoBool, parseGoFlags, parseIntegerFlag } from '../src/go-flags.js';

const OPTIONS = {
  name: { type: 'string' },
  verbose: { type: 'boolean' },
  timeout: { type: 'duration' },
  count: { type: 'integer' },
  port: { type: 'integer', min: 1, max: 65_535 },
} as const;

const parses: [string, string[], 'error' | 'keep', object, string[], string[]][] = [
  // label, argv, unknown, values, given, rest
  ['nothing', [], 'error', {}, [], []],
  ['--flag value', ['--name', 'vm'], 'error', { name: 'vm' }, ['name'], []],
  ['--flag=value', ['--name=vm'], 'error', { name: 'vm' }, ['name'], []],
  ['Go\'s single dash', ['-name', 'vm', '-verbose'], 'error', { name: 'vm', verbose: true }, ['name', 'verbose'], []],
  ['an empty value', ['--name='], 'error', { name: '' }, ['name'], []],
  ['a value that starts with a dash', ['--name', '-x'], 'error', { name: '-x' }, ['name'], []],
  ['a value with = and a newline', ['--name=a=b\nc'], 'error', { name: 'a=b\nc' }, ['name'], []],
  ['the last value wins', ['--name', 'a', '--name=b'], 'error', { name: 'b' }, ['name'], []],
  ['a bare boolean is true', ['--verbose'], 'error', { verbose: true }, ['verbose'], []],
  ['a boolean =false', ['--verbose=false'], 'error', { verbose: false }, ['verbose'], []],
  ['a boolean never takes the next argument', ['--verbose', '--name', 'x'], 'error', { verbose: true, name: 'x' }, ['verbose', 'name'], []],
  ['a duration in the one grammar', ['--timeout', '1h30m'], 'error', { timeout: 5_400_000 }, ['timeout'], []],
  ['a duration in bare seconds', ['--timeout=1.5'], 'error', { timeout: 1_500 }, ['timeout'], []],
  ['an integer', ['--count', '42'], 'error', { count: 42 }, ['count'], []],
  ['an integer 0 and one at its bound', ['-count=0', '--port', '65535'], 'error', { count: 0, port: 65_535 }, ['count', 'port'], []],
  ['nothing after -- (none left)', ['--name', 'a', '--'], 'error', { name: 'a' }, ['name'], []],
  ['unknown arguments kept in order', ['--uid', '107', '--verbose', '-v=3', 'pos'], 'keep', { verbose: true }, ['verbose'], ['--uid', '107', '-v=3', 'pos']],
  ['nothing after -- is interpreted', ['--x', '--', '--verbose', '--name'], 'keep', {}, [], ['--x', '--verbose', '--name']],
];
for (const [label, argv, unknown, values, given, rest] of parses) {
  test(`parses ${label}`, () => {
    const parsed = parseGoFlags(argv, { options: OPTIONS, unknown });
    assert.deepEqual({ ...parsed.values }, values);
    assert.deepEqual(parsed.given, given);
    assert.deepEqual(parsed.rest, rest);
  });
}

const refused: [string, string[], string | undefined, RegExp][] = [
  // label, argv, the flag named, message
  ['an unknown flag', ['--frobnicate'], 'frobnicate', /^--frobnicate: unknown flag$/],
  ['an unknown single-dash flag', ['-frobnicate=1'], 'frobnicate', /^--frobnicate: unknown flag$/],
  ['a positional argument', ['vm'], undefined, /unexpected argument "vm"/],
  ['an argument after --', ['--', 'vm'], undefined, /unexpected argument "vm"/],
  ['a value flag at the end', ['--name'], 'name', /^--name: needs a value$/],
  ['a boolean that is not one', ['--verbose=maybe'], 'verbose', /^--verbose: "maybe" is not true or false$/],
  ['a duration that is not one', ['--timeout', 'soon'], 'timeout', /^--timeout: "soon" is not a duration/],
  ['a negative duration', ['--timeout=-1s'], 'timeout', /^--timeout: "-1s" is negative/],
  ['a duration longer than a timer', ['--timeout', '40000m'], 'timeout', /^--timeout: "40000m" is too long$/],
  ['an integer with a sign', ['--count', '-1'], 'count', /^--count: "-1" is not a non-negative integer$/],
  ['an integer with a fraction', ['--count=1.5'], 'count', /^--count: "1.5" is not a non-negative integer$/],
  ['an integer in exponent form', ['--count=1e3'], 'count', /^--count: "1e3" is not a non-negative integer$/],
  ['an empty integer', ['--count='], 'count', /^--count: "" is not a non-negative integer$/],
  ['an integer beyond 2^53', ['--count', '9007199254740993'], 'count', /is not a non-negative integer$/],
  ['an integer below its bound', ['--port', '0'], 'port', /^--port: "0" is not an integer from 1 to 65535$/],
  ['an integer above its bound', ['--port', '65536'], 'port', /^--port: "65536" is not an integer from 1 to 65535$/],
  ['an inherited property name', ['--constructor'], 'constructor', /unknown flag/],
];
for (const [label, argv, flag, message] of refused) {
  test(`refuses ${label}, naming the flag`, () => {
    assert.throws(() => parseGoFlags(argv, { options: OPTIONS, unknown: 'error' }), (err: unknown) =>
      err instanceof GoFlagError && err.code === 'API_ERR_FLAG' && err.flag === flag && message.test(err.message));
  });
}

test('an unknown flag is kept, not refused, with unknown: keep; a known one is still checked', () => {
  assert.deepEqual(parseGoFlags(['--frobnicate'], { options: OPTIONS, unknown: 'keep' }).rest, ['--frobnicate']);
  assert.throws(() => parseGoFlags(['--timeout=soon'], { options: OPTIONS, unknown: 'keep' }), /--timeout:/);
});

test('booleans take Go\'s spellings, as a flag value or an environment variable standing in for one', () => {
  for (const text of ['1', 't', 'T', 'true', 'TRUE', 'True']) assert.equal(parseGoBool('x', text), true);
  for (const text of ['0', 'f', 'F', 'false', 'FALSE', 'False']) assert.equal(parseGoBool('x', text), false);
  assert.throws(() => parseGoBool('x', 'yes'), (err: unknown) => err instanceof GoFlagError && err.message === '--x: "yes" is not true or false');
});

test('an integer flag parsed alone (a parseArgs caller) names its bounds', () => {
  assert.equal(parseIntegerFlag('workers', '7', { min: 1 }), 7);
  assert.throws(() => parseIntegerFlag('workers', '0', { min: 1 }), (err: unknown) =>
    err instanceof GoFlagError && err.flag === 'workers' && err.message === '--workers: "0" is not an integer of at least 1');
});
