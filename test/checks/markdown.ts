// Just enough Markdown for the docs check: headings and tables outside fenced code, a section's
// text, a table row by its first cell, and the `--flags` and backticked paths a text names.

export interface MarkdownTable {
  /** 1-based line of the header row. */
  readonly line: number;
  /** The heading the table sits under ('' before the first). */
  readonly heading: string;
  /** The paragraph right above the table (what it says it lists). */
  readonly intro: string;
  readonly header: readonly string[];
  readonly rows: readonly (readonly string[])[];
}

interface Line {
  readonly text: string;
  /** Inside a fenced code block (fences included). */
  readonly code: boolean;
}

function lines(md: string): Line[] {
  let fenced = false;
  return md.split('\n').map((text) => {
    const fence = /^\s*```/.test(text);
    if (fence) fenced = !fenced;
    return { text, code: fenced || fence };
  });
}

const HEADING = /^(#{1,6})\s+(.*)$/;

/** The section under the first heading whose text is `title`, up to the next heading of its level or higher; undefined when absent. */
export function section(md: string, title: string): string | undefined {
  const all = lines(md);
  const start = all.findIndex((l) => !l.code && HEADING.exec(l.text)?.[2]?.trim() === title);
  if (start < 0) return undefined;
  const level = HEADING.exec(all[start]?.text ?? '')?.[1]?.length ?? 1;
  const end = all.findIndex((l, i) => i > start && !l.code && (HEADING.exec(l.text)?.[1]?.length ?? 7) <= level);
  return all.slice(start + 1, end < 0 ? undefined : end).map((l) => l.text).join('\n');
}

function cells(row: string): string[] {
  // Split on pipes outside backticks: a cell may show `a|b`.
  const out: string[] = [];
  let cell = '';
  let ticked = false;
  for (const ch of row.trim().replace(/^\|/, '').replace(/\|$/, '')) {
    if (ch === '`') ticked = !ticked;
    if (ch === '|' && !ticked) {
      out.push(cell.trim());
      cell = '';
    } else {
      cell += ch;
    }
  }
  out.push(cell.trim());
  return out;
}

/** Every table outside fenced code. */
export function tables(md: string): MarkdownTable[] {
  const all = lines(md);
  const found: MarkdownTable[] = [];
  let heading = '';
  for (let i = 0; i < all.length; i++) {
    const l = all[i];
    if (l === undefined || l.code) continue;
    const h = HEADING.exec(l.text);
    if (h !== null) heading = h[2]?.trim() ?? '';
    const separator = all[i + 1]?.text ?? '';
    if (!l.text.startsWith('|') || !/^\|[\s:|-]+\|?\s*$/.test(separator)) continue;
    const rows: string[][] = [];
    let j = i + 2;
    for (; j < all.length && (all[j]?.text ?? '').startsWith('|'); j++) rows.push(cells(all[j]?.text ?? ''));
    const intro: string[] = [];
    let k = i - 1;
    while (k >= 0 && (all[k]?.text ?? '').trim() === '') k--;
    for (; k >= 0 && (all[k]?.text ?? '').trim() !== '' && HEADING.exec(all[k]?.text ?? '') === null; k--) intro.unshift(all[k]?.text ?? '');
    found.push({ line: i + 1, heading, intro: intro.join(' '), header: cells(l.text), rows });
    i = j - 1;
  }
  return found;
}

/** The row of a table under `title` whose first cell is `first` (backticks ignored), as one text. */
export function tableRow(md: string, title: string, first: string): string | undefined {
  const row = tables(md).filter((t) => t.heading === title).flatMap((t) => t.rows).find((r) => (r[0] ?? '').replace(/`/g, '') === first);
  return row?.join(' | ');
}

/**
 * The long flags a text names (`--name`, `--name=value`, `--name VALUE`), without the dashes;
 * `--flag` is the grammar's placeholder (`--flag value`), not a flag.
 */
export function longFlags(text: string): Set<string> {
  return new Set([...text.matchAll(/(?<![\w-])--([a-z][a-z0-9-]*)/g)].map((m) => m[1] ?? '').filter((f) => f !== 'flag'));
}

/** The backticked words of a text. */
export function ticked(text: string): string[] {
  return [...text.matchAll(/`([^`]+)`/g)].map((m) => m[1] ?? '');
}

/** A heading's anchor as GitHub renders it: lower case, punctuation dropped, spaces as dashes. */
export function anchor(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors of every heading outside fenced code (a repeated heading gets `-1`, `-2` …). */
export function anchors(md: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const l of lines(md)) {
    const h = l.code ? null : HEADING.exec(l.text);
    if (h === null) continue;
    const base = anchor(h[2]?.trim() ?? '');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

export interface MarkdownLink {
  /** 1-based line. */
  readonly line: number;
  /** The file part of the target ('' for a link within the document). */
  readonly path: string;
  /** The part after `#`, if any. */
  readonly fragment?: string;
}

/** Every relative link `[text](target)` outside fenced code and inline code (web addresses left out). */
export function relativeLinks(md: string): MarkdownLink[] {
  const found: MarkdownLink[] = [];
  lines(md).forEach((l, i) => {
    if (l.code) return;
    const text = l.text.replace(/`[^`]*`/g, '');
    for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = m[1] ?? '';
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
      const hash = target.indexOf('#');
      found.push(hash < 0 ? { line: i + 1, path: target } : { line: i + 1, path: target.slice(0, hash), fragment: target.slice(hash + 1) });
    }
  });
  return found;
}
