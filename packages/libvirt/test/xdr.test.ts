import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { XdrError, XdrReader, XdrWriter, readTypedParam, writeTypedParam } from '../src/index.js';
import type { TypedParam } from '../src/index.js';

const hex = (w: XdrWriter): string => w.toBuffer().toString('hex');
const reader = (w: XdrWriter): XdrReader => new XdrReader(Buffer.from(w.toBuffer()));

describe('XDR codec', () => {
  it('round-trips ints, uints, hypers, doubles and bools at their limits', () => {
    const w = new XdrWriter(4); // tiny initial size: forces the buffer to grow
    w.int(-0x80000000).int(0x7fffffff).uint(0).uint(0xffffffff);
    w.hyper(-(2n ** 63n)).hyper(2n ** 63n - 1n).uhyper(2n ** 64n - 1n).double(-1.5).bool(true).bool(false);
    const r = reader(w);
    assert.equal(r.int(), -0x80000000);
    assert.equal(r.int(), 0x7fffffff);
    assert.equal(r.uint(), 0);
    assert.equal(r.uint(), 0xffffffff);
    assert.equal(r.hyper(), -(2n ** 63n));
    assert.equal(r.hyper(), 2n ** 63n - 1n);
    assert.equal(r.uhyper(), 2n ** 64n - 1n);
    assert.equal(r.double(), -1.5);
    assert.equal(r.bool(), true);
    assert.equal(r.bool(), false);
    r.done();
  });

  it('refuses values out of range when encoding', () => {
    assert.throws(() => new XdrWriter().int(0x80000000), XdrError);
    assert.throws(() => new XdrWriter().uint(-1), XdrError);
    assert.throws(() => new XdrWriter().int(1.5), XdrError);
    assert.throws(() => new XdrWriter().hyper(2n ** 63n), XdrError);
    assert.throws(() => new XdrWriter().uhyper(-1n), XdrError);
  });

  it('pads opaque data and strings to 4 bytes with zeros', () => {
    assert.equal(hex(new XdrWriter().string('abc', 10)), '00000003' + '616263' + '00');
    assert.equal(hex(new XdrWriter().string('abcd', 10)), '00000004' + '61626364');
    assert.equal(hex(new XdrWriter().string('', 10)), '00000000');
    assert.equal(hex(new XdrWriter().opaqueFixed(Buffer.from([1, 2, 3, 4, 5]), 5)), '0102030405000000');
    const r = reader(new XdrWriter().opaque(Buffer.from([9, 8, 7]), 3).string('é', 2).int(7));
    assert.deepEqual([...r.opaque(3)], [9, 8, 7]);
    assert.equal(r.string(2), 'é'); // two UTF-8 bytes: the maximum counts bytes
    assert.equal(r.int(), 7);
    r.done();
  });

  it('enforces string and opaque maxima on both sides, exactly at the limit', () => {
    assert.equal(reader(new XdrWriter().string('x'.repeat(8), 8)).string(8), 'x'.repeat(8));
    assert.throws(() => new XdrWriter().string('x'.repeat(9), 8), /exceeds maximum 8/);
    const nine = new XdrWriter().string('x'.repeat(9), 100);
    assert.throws(() => reader(nine).string(8), (e: unknown) => e instanceof XdrError && e.code === 'LIBVIRT_ERR_XDR');
    assert.throws(() => reader(nine).opaque(8), XdrError);
    assert.throws(() => new XdrWriter().opaqueFixed(Buffer.alloc(3), 4), XdrError);
  });

  it('encodes optional data as a boolean then the value', () => {
    const w = new XdrWriter().optional(null, (x, v: string) => x.string(v, 9)).optional('hi', (x, v) => x.string(v, 9));
    assert.equal(hex(w), '00000000' + '00000001' + '00000002' + '68690000');
    const r = reader(w);
    assert.equal(r.optional((x) => x.string(9)), null);
    assert.equal(r.optional((x) => x.string(9)), 'hi');
  });

  it('encodes variable arrays with a count and checks the maximum', () => {
    const w = new XdrWriter().array([1, 2, 3], 3, (x, v) => x.int(v));
    assert.equal(hex(w), '00000003' + '00000001' + '00000002' + '00000003');
    assert.deepEqual(reader(w).array(3, (x) => x.int()), [1, 2, 3]);
    assert.throws(() => reader(w).array(2, (x) => x.int()), /exceeds maximum 2/);
    assert.throws(() => new XdrWriter().array([1, 2, 3], 2, (x, v) => x.int(v)), XdrError);
    // A count larger than the remaining bytes is refused before anything is allocated.
    assert.throws(() => new XdrReader(Buffer.from('7fffffff', 'hex')).array(0xffffffff, (x) => x.int()), /exceeds the data/);
  });

  it('reports short buffers, trailing bytes and invalid booleans', () => {
    assert.throws(() => new XdrReader(Buffer.alloc(3)).int(), /short buffer/);
    assert.throws(() => new XdrReader(Buffer.from('00000005616263', 'hex')).string(10), /short buffer/);
    const r = new XdrReader(Buffer.alloc(8));
    r.int();
    assert.throws(() => r.done(), /4 trailing bytes/);
    assert.throws(() => new XdrReader(Buffer.from('00000002', 'hex')).bool(), /bool must be 0 or 1/);
  });

  it('round-trips every typed-parameter union arm', () => {
    const params: TypedParam[] = [
      { field: 'i', type: 'INT', value: -5 },
      { field: 'u', type: 'UINT', value: 4000000000 },
      { field: 'l', type: 'LLONG', value: -(2n ** 40n) },
      { field: 'ul', type: 'ULLONG', value: 2n ** 63n },
      { field: 'd', type: 'DOUBLE', value: 0.25 },
      { field: 'b', type: 'BOOLEAN', value: true },
      { field: 's', type: 'STRING', value: 'ext4' },
    ];
    const w = new XdrWriter().array(params, 10, writeTypedParam);
    assert.deepEqual(reader(w).array(10, readTypedParam), params);
    // The discriminant is virTypedParameterType: BOOLEAN = 6, carried as an int.
    assert.equal(hex(new XdrWriter().string('b', 9)) + '00000006' + '00000001', hex(new XdrWriter().array([params[5] as TypedParam], 1, writeTypedParam)).slice(8));
  });

  it('rejects an unknown typed-parameter type', () => {
    const w = new XdrWriter().string('x', 9).int(99).int(0);
    assert.throws(() => readTypedParam(reader(w)), /unknown type 99/);
  });
});
