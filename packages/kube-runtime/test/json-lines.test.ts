// jsonLines at every possible chunk boundary, byte by byte.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { jsonLines } from '../src/json-lines.js';

async function collect(chunks: Buffer[]): Promise<unknown[]> {
  const out: unknown[] = [];
  async function* source(): AsyncGenerator<Buffer> {
    yield* chunks;
  }
  for await (const value of jsonLines(source())) out.push(value);
  return out;
}

const values = [{ a: 'ä€😀' }, { b: [1, 2] }, { c: null }];
const wire = Buffer.from(`${JSON.stringify(values[0])}\r\n\n${JSON.stringify(values[1])}\n${JSON.stringify(values[2])}\n`);

test('every single cut point, and one byte per chunk, give the same documents', async () => {
  for (let cut = 0; cut <= wire.length; cut++) {
    assert.deepEqual(await collect([wire.subarray(0, cut), wire.subarray(cut)]), values, `cut at ${cut}`);
  }
  assert.deepEqual(await collect([...wire].map((b) => Buffer.from([b]))), values);
});

test('an unterminated last document is kept when whole and dropped when cut off', async () => {
  assert.deepEqual(await collect([Buffer.from('{"x":1}\n{"y":2}')]), [{ x: 1 }, { y: 2 }]);
  assert.deepEqual(await collect([Buffer.from('{"x":1}\n{"y":')]), [{ x: 1 }]);
});

test('a terminated line that is not JSON is a bad response', async () => {
  await assert.rejects(collect([Buffer.from('{"x":1}\nnope\n')]), { code: 'KUBE_ERR_BAD_RESPONSE' });
});
