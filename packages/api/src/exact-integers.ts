// JSON numbers beyond 2^53 lose digits in JSON.parse: 2^63-1 becomes 9223372036854775808. To
// tell the user the value they wrote, the literals are read from the JSON text itself; the
// validator looks up the parsed (rounded) number to find what was written.

/** A JSON integer literal that does not survive JSON.parse exactly, by the number it became. */
export type ExactIntegers = ReadonlyMap<number, string>;

const NUMBER_RE = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

/** Scans JSON text (outside strings) for integer literals that JSON.parse rounds. */
export function unsafeIntegerLiterals(text: string): ExactIntegers {
  const found = new Map<number, string>();
  // Most documents have no long digit run at all: nothing to scan for.
  if (!/\d{16}/.test(text)) return found;
  let i = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      i = skipString(text, i + 1);
      continue;
    }
    if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      NUMBER_RE.lastIndex = i;
      const match = NUMBER_RE.exec(text);
      const literal = match?.[0] ?? text[i] ?? '';
      if (/^-?\d+$/.test(literal)) {
        const value = Number(literal);
        if (!Number.isSafeInteger(value) && !found.has(value)) found.set(value, literal);
      }
      i += Math.max(1, literal.length);
      continue;
    }
    i += 1;
  }
  return found;
}

function skipString(text: string, from: number): number {
  let i = from;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === 0x5c) i += 2;
    else if (c === 0x22) return i + 1;
    else i += 1;
  }
  return i;
}

/** How to print an integer a user wrote: exactly when the text is known, else marked as rounded. */
export function showInteger(value: number, exact: ExactIntegers | undefined): string {
  if (Number.isSafeInteger(value)) return String(value);
  const literal = exact?.get(value);
  if (literal !== undefined) return literal;
  return `about ${value.toExponential()} (beyond 2^53, where JSON numbers lose digits)`;
}
