import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  FrameDecoder, HEADER_SIZE, MESSAGE_MAX, MessageStatus, MessageType, ProtocolError, REMOTE_PROGRAM, decodeMessage,
  encodeMessage,
} from '../src/index.js';

const frameOf = (serial: number, payload: Buffer): Buffer => encodeMessage(
  { prog: REMOTE_PROGRAM, vers: 1, proc: 23, type: MessageType.REPLY, serial, status: MessageStatus.OK },
  (w) => w.opaque(payload, payload.length),
);

const payloads = [Buffer.alloc(0), Buffer.from('hello'), Buffer.alloc(70000, 7)];
const frames = payloads.map((p, i) => frameOf(i + 1, p));
const stream = Buffer.concat(frames);

function check(out: Buffer[]): void {
  assert.equal(out.length, 3);
  out.forEach((frame, i) => {
    const { header, body } = decodeMessage(frame);
    assert.equal(header.serial, i + 1);
    assert.equal(header.prog, REMOTE_PROGRAM);
    assert.deepEqual(body.subarray(4, 4 + (payloads[i] as Buffer).length), payloads[i]);
  });
}

describe('FrameDecoder', () => {
  it('reassembles frames fed one byte at a time', () => {
    const d = new FrameDecoder();
    const out: Buffer[] = [];
    for (let i = 0; i < stream.length; i++) out.push(...d.push(stream.subarray(i, i + 1)));
    check(out);
    assert.equal(d.pending, 0);
  });

  it('splits coalesced reads carrying several frames', () => {
    const d = new FrameDecoder();
    check(d.push(stream));
  });

  it('handles chunk edges inside the length word and the header', () => {
    for (const cut of [1, 2, 3, 5, 4 + HEADER_SIZE - 1, 31, 4097]) {
      const d = new FrameDecoder();
      const out: Buffer[] = [];
      for (let at = 0; at < stream.length; at += cut) out.push(...d.push(stream.subarray(at, at + cut)));
      check(out);
    }
  });

  it('keeps a partial frame until the rest arrives', () => {
    const d = new FrameDecoder();
    const first = frames[1] as Buffer;
    assert.deepEqual(d.push(first.subarray(0, 10)), []);
    assert.equal(d.pending, 10);
    assert.equal(d.push(first.subarray(10)).length, 1);
  });

  it('rejects lengths below a header or above VIR_NET_MESSAGE_MAX', () => {
    const small = Buffer.alloc(4);
    small.writeUInt32BE(4 + HEADER_SIZE - 1);
    assert.throws(() => new FrameDecoder().push(small), ProtocolError);
    const big = Buffer.alloc(4);
    big.writeUInt32BE(MESSAGE_MAX + 1);
    assert.throws(() => new FrameDecoder().push(big), (e: unknown) => e instanceof ProtocolError && e.code === 'LIBVIRT_ERR_PROTOCOL');
  });

  it('accepts a message of exactly the maximum size and refuses to encode a larger one', () => {
    const bodyMax = MESSAGE_MAX - 4 - HEADER_SIZE - 4; // minus length word, header, opaque length
    const max = frameOf(9, Buffer.alloc(bodyMax));
    assert.equal(max.length, MESSAGE_MAX);
    const out = new FrameDecoder().push(max);
    assert.equal(out.length, 1);
    assert.throws(() => frameOf(9, Buffer.alloc(bodyMax + 4)), ProtocolError);
  });
});
