// A node:test reporter that prints, once a run ends, how long each test file's tests took (the
// sum of its top-level tests and suites, which run one after the other) for the slowest files,
// and the run's total: where a pass spends its time, read from any CI log. Used by
// scripts/run-tests.mjs beside the spec reporter. A default export: `--test-reporter=<module>`
// loads a module's default export.
import { relative } from 'node:path';

const SHOWN = 15;

export default async function* fileTimes(source) {
  const byFile = new Map();
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { nesting, file, details } = event.data;
    if (nesting !== 0 || file === undefined) continue;
    byFile.set(file, (byFile.get(file) ?? 0) + (details?.duration_ms ?? 0));
  }
  if (byFile.size === 0) return;
  const rows = [...byFile].sort((a, b) => b[1] - a[1]);
  const total = rows.reduce((sum, [, ms]) => sum + ms, 0);
  const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`.padStart(8);
  yield `ℹ time by file (${rows.length} file${rows.length === 1 ? '' : 's'}, ${seconds(total).trim()} in all; the ${Math.min(SHOWN, rows.length)} slowest):\n`;
  for (const [file, ms] of rows.slice(0, SHOWN)) yield `ℹ ${seconds(ms)}  ${relative(process.cwd(), file)}\n`;
}
