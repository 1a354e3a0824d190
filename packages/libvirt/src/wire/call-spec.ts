import type { XdrReader } from '../xdr/xdr-reader.js';
import type { XdrWriter } from '../xdr/xdr-writer.js';

/** One procedure: where it goes, how its arguments are written and its reply read. */
export interface CallSpec<A, R> {
  readonly prog: number;
  readonly proc: number;
  readonly writeArgs: (w: XdrWriter, args: A) => void;
  readonly readRet: (r: XdrReader) => R;
}

export const noArgs = (): void => undefined;
export const noRet = (): void => undefined;
