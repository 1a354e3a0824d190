import { ProtocolError } from '../errors.js';
import { HEADER_SIZE, LENGTH_WORD, MESSAGE_MAX } from './header.js';

/**
 * Reassembles frames from socket chunks of any size: a read may end mid-length-word, or carry
 * several frames. Chunks are kept as a list and joined once per frame, so a large message
 * arriving in many small reads costs O(size), not O(size²).
 */
export class FrameDecoder {
  #chunks: Buffer[] = [];
  #buffered = 0;
  #expected = -1; // frame length once the length word is known

  /** Feeds one chunk; returns the complete frames it finished, without their length words. */
  push(chunk: Buffer): Buffer[] {
    if (chunk.length > 0) {
      this.#chunks.push(chunk);
      this.#buffered += chunk.length;
    }
    const frames: Buffer[] = [];
    for (;;) {
      if (this.#expected < 0) {
        if (this.#buffered < LENGTH_WORD) break;
        const len = this.#peekLength();
        if (len < LENGTH_WORD + HEADER_SIZE || len > MESSAGE_MAX) {
          throw new ProtocolError(`invalid frame length ${len}`);
        }
        this.#expected = len;
      }
      if (this.#buffered < this.#expected) break;
      const all = this.#chunks.length === 1 ? (this.#chunks[0] as Buffer) : Buffer.concat(this.#chunks, this.#buffered);
      frames.push(all.subarray(LENGTH_WORD, this.#expected));
      const rest = all.subarray(this.#expected);
      this.#chunks = rest.length > 0 ? [rest] : [];
      this.#buffered = rest.length;
      this.#expected = -1;
    }
    return frames;
  }

  /** Bytes held that do not yet make a whole frame. */
  get pending(): number {
    return this.#buffered;
  }

  #peekLength(): number {
    const first = this.#chunks[0] as Buffer;
    if (first.length >= LENGTH_WORD) return first.readUInt32BE(0);
    const joined = Buffer.concat(this.#chunks, this.#buffered);
    this.#chunks = [joined];
    return joined.readUInt32BE(0);
  }
}
