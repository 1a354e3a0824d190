import { XdrError } from '../errors.js';

const INITIAL_SIZE = 256;

/** Builds XDR (RFC 4506) data into one growing buffer. Every method returns `this`. */
export class XdrWriter {
  #buf: Buffer;
  #len = 0;

  constructor(initialSize = INITIAL_SIZE) {
    this.#buf = Buffer.alloc(initialSize);
  }

  get length(): number {
    return this.#len;
  }

  int(v: number): this {
    if (!Number.isInteger(v) || v < -0x80000000 || v > 0x7fffffff) throw new XdrError(`int out of range: ${v}`);
    const at = this.#reserve(4);
    this.#buf.writeInt32BE(v, at);
    return this;
  }

  uint(v: number): this {
    if (!Number.isInteger(v) || v < 0 || v > 0xffffffff) throw new XdrError(`unsigned int out of range: ${v}`);
    const at = this.#reserve(4);
    this.#buf.writeUInt32BE(v, at);
    return this;
  }

  hyper(v: bigint): this {
    if (v < -(2n ** 63n) || v >= 2n ** 63n) throw new XdrError(`hyper out of range: ${v}`);
    const at = this.#reserve(8);
    this.#buf.writeBigInt64BE(v, at);
    return this;
  }

  uhyper(v: bigint): this {
    if (v < 0n || v >= 2n ** 64n) throw new XdrError(`unsigned hyper out of range: ${v}`);
    const at = this.#reserve(8);
    this.#buf.writeBigUInt64BE(v, at);
    return this;
  }

  double(v: number): this {
    const at = this.#reserve(8);
    this.#buf.writeDoubleBE(v, at);
    return this;
  }

  bool(v: boolean): this {
    return this.int(v ? 1 : 0);
  }

  /** Fixed-length opaque: exactly `size` bytes, then zero padding to a multiple of 4. */
  opaqueFixed(data: Uint8Array, size: number): this {
    if (data.length !== size) throw new XdrError(`opaque[${size}] given ${data.length} bytes`);
    return this.#bytes(data);
  }

  /** Variable-length opaque: a length word, the bytes, padding. */
  opaque(data: Uint8Array, max: number): this {
    if (data.length > max) throw new XdrError(`opaque of ${data.length} bytes exceeds maximum ${max}`);
    this.uint(data.length);
    return this.#bytes(data);
  }

  /** A UTF-8 string; `max` counts bytes, as libvirt's limits do. */
  string(s: string, max: number): this {
    return this.opaque(Buffer.from(s, 'utf8'), max);
  }

  /** Optional data (an XDR pointer): a boolean, then the value when present. */
  optional<T>(v: T | null | undefined, enc: (w: this, v: T) => void): this {
    if (v === null || v === undefined) return this.bool(false);
    this.bool(true);
    enc(this, v);
    return this;
  }

  /** Variable-length array: a count word, then each element. */
  array<T>(items: readonly T[], max: number, enc: (w: this, v: T) => void): this {
    if (items.length > max) throw new XdrError(`array of ${items.length} elements exceeds maximum ${max}`);
    this.uint(items.length);
    for (const it of items) enc(this, it);
    return this;
  }

  /** The written bytes (a view; valid until the next write). */
  toBuffer(): Buffer {
    return this.#buf.subarray(0, this.#len);
  }

  #bytes(data: Uint8Array): this {
    const pad = (4 - (data.length % 4)) % 4;
    const at = this.#reserve(data.length + pad);
    this.#buf.set(data, at);
    this.#buf.fill(0, at + data.length, at + data.length + pad);
    return this;
  }

  // Callers must take the offset before touching #buf: growing replaces the buffer.
  #reserve(n: number): number {
    const at = this.#len;
    if (at + n > this.#buf.length) {
      const next = Buffer.alloc(Math.max(this.#buf.length * 2, at + n));
      this.#buf.copy(next, 0, 0, at);
      this.#buf = next;
    }
    this.#len = at + n;
    return at;
  }
}
