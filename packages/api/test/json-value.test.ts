// JSON equality as the API server stores values: it must agree with comparing the values' JSON
// text with keys sorted, on every case where key order, undefined properties, null and arrays meet.
// The JSON copy: equal to structuredClone's on JSON values, and sharing nothing with its source.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { jsonClone, jsonEqual } from '../src/index.js';

/** The slow reference the walk replaces: both values as JSON with their keys sorted. */
function sortedJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v);
}

const CASES: [string, unknown, unknown, boolean][] = [
  ['key order does not matter', { a: 1, b: { c: [1, 2], d: 'x' } }, { b: { d: 'x', c: [1, 2] }, a: 1 }, true],
  ['an undefined property is no property', { a: 1, b: undefined }, { a: 1 }, true],
  ['… on either side', { a: 1 }, { a: 1, b: undefined }, true],
  ['a property with null is one', { a: 1, b: null }, { a: 1 }, false],
  ['a missing property differs from a present one', { a: 1 }, { a: 1, b: 0 }, false],
  ['an undefined array element is null', [1, undefined], [1, null], true],
  ['array order matters', [1, 2], [2, 1], false],
  ['array lengths', [1], [1, 1], false],
  ['an array is not an object', [], {}, false],
  ['an object is not an array', {}, [], false],
  ['null is not an empty object', null, {}, false],
  ['numbers and their strings differ', { a: 1 }, { a: '1' }, false],
  ['false is not absent', { a: false }, {}, false],
  ['nested difference', { c: [{ type: 'Paused', status: 'True' }] }, { c: [{ type: 'Paused', status: 'False' }] }, false],
  ['nested undefined inside an array element', { c: [{ type: 'Ready', reason: undefined }] }, { c: [{ type: 'Ready' }] }, true],
];

for (const [what, a, b, equal] of CASES) {
  test(`jsonEqual: ${what}`, () => {
    assert.equal(jsonEqual(a, b), equal);
    assert.equal(jsonEqual(b, a), equal, 'symmetric');
    assert.equal(sortedJson(a) === sortedJson(b), equal, 'the reference agrees');
  });
}

test('jsonClone: the same value as structuredClone gives, sharing no object or array with its source', () => {
  const source = {
    metadata: { name: 'vm', labels: { a: 'b' }, finalizers: ['x'] },
    status: { conditions: [{ type: 'Ready', status: 'True', lastProbeTime: null, reason: undefined }], nodeName: 'n', ready: false, count: 0, ips: ['10.0.0.2', 'fd00::2'] },
    nested: [[1, 2], [], [{}]],
  };
  const copy = jsonClone(source);
  assert.deepStrictEqual(copy, structuredClone(source));
  assert.ok(Object.hasOwn(copy.status.conditions[0] ?? {}, 'reason'), 'an undefined property is kept, as structuredClone keeps it');
  copy.metadata.labels.a = 'changed';
  copy.metadata.finalizers.push('y');
  copy.status.conditions[0]!.status = 'False';
  copy.nested[0]!.push(3);
  assert.equal(source.metadata.labels.a, 'b');
  assert.deepEqual(source.metadata.finalizers, ['x']);
  assert.equal(source.status.conditions[0]?.status, 'True');
  assert.deepEqual(source.nested[0], [1, 2]);
  for (const scalar of ['s', 1, true, null]) assert.equal(jsonClone(scalar), scalar);
});
