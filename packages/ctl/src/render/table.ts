// kubectl's plain table: upper-case headers, columns left-aligned and three spaces apart,
// no trailing blanks.
export function renderTable(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const all = [headers, ...rows];
  const widths = headers.map((_, col) => Math.max(...all.map((row) => (row[col] ?? '').length)));
  const lines = all.map((row) =>
    headers
      .map((_, col) => {
        const cell = row[col] ?? '';
        return col === headers.length - 1 ? cell : cell.padEnd((widths[col] ?? 0) + 3);
      })
      .join('')
      .trimEnd(),
  );
  return `${lines.join('\n')}\n`;
}
