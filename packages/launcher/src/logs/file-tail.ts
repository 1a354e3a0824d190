import { open, stat } from 'node:fs/promises';

export interface FileTailOptions {
  readonly path: string;
  readonly onLine: (line: string) => void;
  readonly intervalMs?: number;
}

/**
 * Follows a log file that may not exist yet, may be truncated (a restarted qemu starts it
 * over, copytruncate rotation) or replaced by a new file (rename rotation), emitting whole
 * lines; a replaced file is read from its start. Polling keeps it simple and works on every filesystem; the
 * timer is unref'd and `close()` flushes what is left.
 */
export class FileTail {
  readonly #o: FileTailOptions;
  readonly #timer: NodeJS.Timeout;
  #offset = 0;
  #ino: number | undefined;
  #partial = '';
  #busy: Promise<void> = Promise.resolve();

  constructor(o: FileTailOptions) {
    this.#o = o;
    this.#timer = setInterval(() => void this.poll(), o.intervalMs ?? 250);
    this.#timer.unref();
  }

  /** Reads what was appended since the last poll. */
  poll(): Promise<void> {
    this.#busy = this.#busy.then(() => this.#read()).catch(() => undefined);
    return this.#busy;
  }

  async #read(): Promise<void> {
    const st = await stat(this.#o.path).then((s) => s, () => undefined);
    if (st === undefined) return;
    const size = st.size;
    if (this.#ino !== undefined && st.ino !== this.#ino) {
      if (this.#partial !== '') this.#o.onLine(this.#partial);
      this.#offset = 0;
      this.#partial = '';
    }
    this.#ino = st.ino;
    if (size < this.#offset) {
      this.#offset = 0;
      this.#partial = '';
    }
    if (size === this.#offset) return;
    const fh = await open(this.#o.path, 'r');
    try {
      const buf = Buffer.alloc(size - this.#offset);
      const { bytesRead } = await fh.read(buf, 0, buf.length, this.#offset);
      this.#offset += bytesRead;
      const lines = (this.#partial + buf.subarray(0, bytesRead).toString('utf8')).split('\n');
      this.#partial = lines.pop() ?? '';
      for (const line of lines) if (line !== '') this.#o.onLine(line);
    } finally {
      await fh.close();
    }
  }

  async close(): Promise<void> {
    clearInterval(this.#timer);
    await this.poll();
    if (this.#partial !== '') this.#o.onLine(this.#partial);
    this.#partial = '';
  }
}
