import { XdrError } from '../errors.js';

/** Reads XDR (RFC 4506) data from one buffer, checking bounds and declared maxima. */
export class XdrReader {
  readonly #buf: Buffer;
  #off = 0;

  constructor(buf: Buffer) {
    this.#buf = buf;
  }

  get remaining(): number {
    return this.#buf.length - this.#off;
  }

  int(): number {
    const v = this.#buf.readInt32BE(this.#take(4));
    return v;
  }

  uint(): number {
    return this.#buf.readUInt32BE(this.#take(4));
  }

  hyper(): bigint {
    return this.#buf.readBigInt64BE(this.#take(8));
  }

  uhyper(): bigint {
    return this.#buf.readBigUInt64BE(this.#take(8));
  }

  double(): number {
    return this.#buf.readDoubleBE(this.#take(8));
  }

  bool(): boolean {
    const v = this.int();
    if (v !== 0 && v !== 1) throw new XdrError(`bool must be 0 or 1, got ${v}`);
    return v === 1;
  }

  /** Fixed-length opaque; the result is a copy, so it outlives the message buffer. */
  opaqueFixed(size: number): Buffer {
    const at = this.#take(size + ((4 - (size % 4)) % 4));
    return Buffer.from(this.#buf.subarray(at, at + size));
  }

  opaque(max: number): Buffer {
    const n = this.uint();
    if (n > max) throw new XdrError(`opaque of ${n} bytes exceeds maximum ${max}`);
    return this.opaqueFixed(n);
  }

  string(max: number): string {
    const n = this.uint();
    if (n > max) throw new XdrError(`string of ${n} bytes exceeds maximum ${max}`);
    const at = this.#take(n + ((4 - (n % 4)) % 4));
    return this.#buf.toString('utf8', at, at + n);
  }

  optional<T>(dec: (r: this) => T): T | null {
    return this.bool() ? dec(this) : null;
  }

  array<T>(max: number, dec: (r: this) => T): T[] {
    const n = this.uint();
    if (n > max) throw new XdrError(`array of ${n} elements exceeds maximum ${max}`);
    // Each element takes at least 4 bytes: refuse counts the data cannot hold before allocating.
    if (n * 4 > this.remaining) throw new XdrError(`array of ${n} elements exceeds the data`);
    const out: T[] = [];
    for (let i = 0; i < n; i++) out.push(dec(this));
    return out;
  }

  /** Fails when bytes are left over: a layout mismatch, not something to ignore. */
  done(): void {
    if (this.remaining !== 0) throw new XdrError(`${this.remaining} trailing bytes`);
  }

  #take(n: number): number {
    if (this.#off + n > this.#buf.length) {
      throw new XdrError(`short buffer: need ${n} bytes at offset ${this.#off}, have ${this.remaining}`);
    }
    const at = this.#off;
    this.#off += n;
    return at;
  }
}
