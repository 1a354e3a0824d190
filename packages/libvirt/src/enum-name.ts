/**
 * Reverse lookup in a generated constants table: the name of `value`, or 'UNKNOWN' when the
 * daemon is newer than the table. The tables are small (≤ ~120 entries) and lookups happen
 * per error or per event, so a scan beats keeping a second, reversed copy in sync.
 */
export function enumName<T extends Readonly<Record<string, number>>>(table: T, value: number): keyof T | 'UNKNOWN' {
  for (const key in table) {
    if (table[key] === value) return key;
  }
  return 'UNKNOWN';
}
