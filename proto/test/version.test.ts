import assert from 'node:assert/strict';
import { test } from 'node:test';
import { highestCommonVersion } from '../src/version.js';

const cases: { ours: number[]; theirs: number[]; want: number | undefined }[] = [
  { ours: [1], theirs: [1], want: 1 },
  { ours: [1, 2], theirs: [1], want: 1 },
  { ours: [1], theirs: [1, 2, 3], want: 1 },
  { ours: [1, 2, 3], theirs: [2, 3, 4], want: 3 },
  { ours: [1], theirs: [2], want: undefined },
  { ours: [1], theirs: [], want: undefined },
];

for (const { ours, theirs, want } of cases) {
  test(`highestCommonVersion(${JSON.stringify(ours)}, ${JSON.stringify(theirs)}) = ${want}`, () => {
    assert.equal(highestCommonVersion(ours, theirs), want);
  });
}
