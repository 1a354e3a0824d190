// How long the fuzz tests run: a fixed seed and a few hundred cases in the suite (seconds);
// scripts/fuzz sets PODVIRT_FUZZ_RUNS and PODVIRT_FUZZ_SEED for a longer, fresh run.

import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type fc from 'fast-check';

export function fuzzParameters<T>(defaultRuns: number): fc.Parameters<T> {
  const runs = Number(process.env['PODVIRT_FUZZ_RUNS'] ?? defaultRuns);
  const seed = process.env['PODVIRT_FUZZ_SEED'];
  return {
    numRuns: Number.isFinite(runs) && runs > 0 ? runs : defaultRuns,
    seed: seed === undefined ? 20_261_123 : Number(seed),
    // The counterexample printed on failure goes into fuzz-corpus/ as a JSON file.
    verbose: 1,
  };
}

export interface CorpusEntry {
  readonly file: string;
  readonly target: 'vmi' | 'cmd';
  readonly note: string;
  /** For `vmi`: the VMI object. */
  readonly vmi?: unknown;
  /** For `cmd`: the method and the vmi_json text sent. */
  readonly method?: string;
  readonly vmiJson?: string;
  /**
   * For `cmd`: the string `"<nested>"` in vmiJson stands for an array (`[[[…]]]`) or object
   * (`{"a":{"a":…}}`) nested this deep, too large to keep written out.
   */
  readonly nested?: { readonly depth: number; readonly kind: 'array' | 'object' };
  /** For `vmi`: the fields decoding must name; absent means the VMI must be accepted. */
  readonly refusedFields?: readonly string[];
}

const CORPUS = fileURLToPath(new URL('../../../test/fuzz-corpus/', import.meta.url));

/** Inputs that once failed, kept as JSON files and replayed by the fuzz tests. */
export function corpus(target: CorpusEntry['target']): CorpusEntry[] {
  return readdirSync(CORPUS)
    .filter((file) => file.endsWith('.json'))
    .sort()
    .map((file) => ({ file, ...(JSON.parse(readFileSync(`${CORPUS}${file}`, 'utf8')) as Omit<CorpusEntry, 'file'>) }))
    .filter((entry) => entry.target === target)
    .map((entry) => (entry.nested === undefined || entry.vmiJson === undefined ? entry : { ...entry, vmiJson: entry.vmiJson.replace('"<nested>"', nestedText(entry.nested)) }));
}

function nestedText({ depth, kind }: NonNullable<CorpusEntry['nested']>): string {
  return kind === 'array' ? `${'['.repeat(depth)}${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
}
