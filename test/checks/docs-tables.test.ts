// Keeps the docs' tables in step with the code:
// - every flag a program takes (read from its own option or command table) is in each flags
//   table or section that describes the program, and nothing is listed that it does not take;
// - every file a README's file table names exists; every package README has a file table, and
//   it names (or covers by a listed folder) every file of its `src/`, unless the paragraph above
//   the table says it lists a selection.
// - every relative link in a Markdown file of the repository reaches a file, and the heading it
//   names when it names one (the README links to the docs/ pages that hold the detail).
// A failure names the document, the place in it and what to add or remove.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { test } from 'node:test';
import { CONTROLLER_OPTIONS } from '@podvirt/controller';
import { COMMANDS, FLAGS, type CommandName } from '@podvirt/ctl';
import { HANDLER_OPTIONS } from '@podvirt/handler';
import { LAUNCHER_OPTIONS, TAIL_OPTIONS } from '@podvirt/launcher';
import { MONITOR_OPTIONS } from '@podvirt/launcher-monitor';
import { API_OPTIONS } from '@podvirt/podvirt-api';
import { repoRoot } from '../testbed/guest/repo-root.js';
import { anchors, longFlags, relativeLinks, section, tableRow, tables, ticked, type MarkdownTable } from './markdown.js';

const ROOT = repoRoot(import.meta.url);
const read = (file: string): string => readFileSync(join(ROOT, file), 'utf8');

/** The operations page: the one flags table of every program, and every podvirtctl command. */
const OPERATIONS = 'docs/operations.md';

/** Where a program's flags are listed: a row of a table (by heading and first cell) or a whole section. */
type Place = { readonly file: string; readonly heading: string; readonly row?: string };

interface Program {
  readonly name: string;
  /** Its flags, from the table its parser reads. */
  readonly flags: readonly string[];
  readonly places: readonly Place[];
}

const PROGRAMS: readonly Program[] = [
  {
    name: 'podvirt-controller',
    flags: Object.keys(CONTROLLER_OPTIONS),
    places: [{ file: OPERATIONS, heading: 'Flags', row: 'podvirt-controller' }, { file: 'packages/controller/README.md', heading: 'Command line' }],
  },
  {
    name: 'podvirt-handler',
    flags: Object.keys(HANDLER_OPTIONS),
    places: [{ file: OPERATIONS, heading: 'Flags', row: 'podvirt-handler' }, { file: 'packages/handler/README.md', heading: 'Command line' }],
  },
  {
    name: 'podvirt-api',
    flags: Object.keys(API_OPTIONS),
    places: [{ file: OPERATIONS, heading: 'Flags', row: 'podvirt-api' }, { file: 'packages/podvirt-api/README.md', heading: 'Command line' }],
  },
  {
    name: 'podvirt-launcher-monitor',
    flags: Object.keys(MONITOR_OPTIONS),
    places: [{ file: OPERATIONS, heading: 'Flags', row: 'podvirt-launcher-monitor' }, { file: 'packages/launcher-monitor/README.md', heading: 'Command line' }],
  },
  {
    name: 'podvirt-launcher',
    flags: Object.keys(LAUNCHER_OPTIONS),
    places: [{ file: OPERATIONS, heading: 'Flags', row: 'podvirt-launcher' }, { file: 'packages/launcher/README.md', heading: 'Flags' }],
  },
  {
    name: 'podvirt-tail',
    flags: Object.keys(TAIL_OPTIONS),
    places: [{ file: OPERATIONS, heading: 'Flags', row: 'podvirt-tail' }],
  },
  {
    name: 'podvirtctl',
    flags: Object.keys(FLAGS),
    places: [{ file: OPERATIONS, heading: 'Flags', row: 'podvirtctl' }],
  },
];

function placeText(p: Place): string | undefined {
  const md = read(p.file);
  return p.row === undefined ? section(md, p.heading) : tableRow(md, p.heading, p.row);
}

const describePlace = (p: Place): string => `${p.file}, ${p.row === undefined ? `section "${p.heading}"` : `table under "${p.heading}", row ${p.row}`}`;

/** What is wrong between the flags a text lists and those the program takes. */
function flagProblems(where: string, program: string, listed: ReadonlySet<string>, taken: readonly string[]): string[] {
  const problems: string[] = [];
  const missing = taken.filter((f) => !listed.has(f));
  const extra = [...listed].filter((f) => !taken.includes(f));
  if (missing.length > 0) problems.push(`${where}: add ${missing.map((f) => `--${f}`).join(', ')} (${program} takes it)`);
  if (extra.length > 0) problems.push(`${where}: remove ${extra.map((f) => `--${f}`).join(', ')} (${program} has no such flag)`);
  return problems;
}

test('each flags table and section lists every flag of its program, and only those', () => {
  const problems: string[] = [];
  for (const program of PROGRAMS) {
    assert.ok(program.flags.length > 0, `${program.name}: no flags read from its option table`);
    for (const place of program.places) {
      const text = placeText(place);
      if (text === undefined) {
        problems.push(`${describePlace(place)}: not found (the check looks there for ${program.name}'s flags)`);
        continue;
      }
      problems.push(...flagProblems(describePlace(place), program.name, longFlags(text), program.flags));
    }
  }
  assert.deepEqual(problems, []);
});

test('the operations page names every podvirtctl command, and the ctl README lists each command with exactly its flags', () => {
  const problems: string[] = [];
  const names = Object.keys(COMMANDS) as CommandName[];
  const row = tableRow(read(OPERATIONS), 'Flags', 'podvirtctl') ?? '';
  const named = new Set(ticked(row).flatMap((t) => t.split(/\s+/)));
  const unnamed = names.filter((c) => !named.has(c));
  if (unnamed.length > 0) problems.push(`${OPERATIONS}, table under "Flags", row podvirtctl: add the commands ${unnamed.map((c) => `\`${c}\``).join(', ')}`);
  const commands = tables(read('packages/ctl/README.md')).find((t) => t.heading === 'Commands');
  if (commands === undefined) {
    problems.push('packages/ctl/README.md: no table under "Commands" (one row per command: `command` | its flags | what it does)');
  } else {
    const rows = new Map(commands.rows.map((r) => [(r[0] ?? '').replace(/`/g, ''), r.slice(1).join(' | ')]));
    for (const name of names) {
      const text = rows.get(name);
      if (text === undefined) problems.push(`packages/ctl/README.md, table under "Commands": add a row for \`${name}\``);
      else problems.push(...flagProblems(`packages/ctl/README.md, table under "Commands", row ${name}`, `podvirtctl ${name}`, longFlags(text), COMMANDS[name].flags));
    }
    for (const name of rows.keys()) if (!names.includes(name as CommandName)) problems.push(`packages/ctl/README.md, table under "Commands": remove the row ${name} (podvirtctl has no such command)`);
  }
  assert.deepEqual(problems, []);
});

/** The Markdown files whose tables are checked: the repository's and each package's. */
function documents(): string[] {
  const packages = readdirSync(join(ROOT, 'packages')).map((p) => `packages/${p}/README.md`);
  const docs = readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`);
  return ['README.md', 'CONTRIBUTING.md', 'proto/README.md', 'test/README.md', ...docs, ...packages].filter((f) => existsSync(join(ROOT, f)));
}

/** The header of a file column: `file`, `files` or `path`, with "(in `dir/`)" when its names are relative to a folder. */
const FILE_COLUMN = /^(file|files|path)( \(in `[^`]+`\))?$/i;

/** A backticked word that names a file or folder: a path with a slash, or a name with an extension. */
function isPath(word: string): boolean {
  if (/[\s<>{}@$]/.test(word) || word.startsWith('-') || word.startsWith('/') || word.includes('://')) return false;
  return word.includes('/') || /\.[a-z]{1,4}$/.test(word);
}

/**
 * The folders a table's names are relative to: "(in `dir/`)" in the column's header, else the
 * document's folder, its `src/` and the repository's root, in that order.
 */
function bases(doc: string, header: string): string[] {
  const dir = dirname(doc);
  const named = /\bin `([^`]+)`/.exec(header)?.[1];
  return named !== undefined ? [join(dir, named)] : [...new Set([dir, join(dir, 'src'), '.'])];
}

interface FileTable {
  readonly doc: string;
  readonly table: MarkdownTable;
  /** What the table covers, as patterns over paths relative to the repository. */
  readonly listed: RegExp[];
}

const escape = (s: string): string => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&');

/** A listed name as a pattern: a file, a folder (all below it), or a name with `*` (any characters but `/`). */
function pattern(path: string, folder: boolean): RegExp {
  const body = path.split('*').map(escape).join('[^/]*');
  return new RegExp(`^${body}${folder ? '/.+' : ''}$`);
}

/** Paths (relative to the repository) a pattern with `*` matches under `base`. */
function matches(base: string, name: string): string[] {
  const dir = join(base, dirname(name));
  if (!existsSync(join(ROOT, dir))) return [];
  const re = pattern(join(base, name), false);
  return readdirSync(join(ROOT, dir)).map((f) => join(dir, f)).filter((f) => re.test(f));
}

function resolve(doc: string, table: MarkdownTable, column: number, problems: string[]): FileTable {
  const listed: RegExp[] = [];
  const header = table.header[column] ?? '';
  for (const row of table.rows) {
    for (const word of ticked(row[column] ?? '').filter(isPath)) {
      const folder = word.endsWith('/*') || word.endsWith('/');
      const name = word.replace(/\/\*$/, '').replace(/\/$/, '');
      const found = bases(doc, header).find((b) => (name.includes('*') ? matches(b, name).length > 0 : existsSync(join(ROOT, b, name))));
      if (found === undefined) {
        problems.push(`${doc}:${table.line}, table under "${table.heading}": \`${word}\` does not exist (looked in ${bases(doc, header).map((b) => `${b}/`).join(' and ')}); fix or remove the row`);
      } else {
        const path = join(found, name);
        listed.push(pattern(path, folder || (!name.includes('*') && statSync(join(ROOT, path)).isDirectory())));
      }
    }
  }
  return { doc, table, listed };
}

function filesUnder(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    return e.isDirectory() ? filesUnder(path) : [path];
  });
}

test('every file a README\'s file table names exists; every package README has file tables covering all of its src/ unless they say they list a selection', () => {
  const problems: string[] = [];
  const byDoc = new Map<string, FileTable[]>();
  for (const doc of documents()) {
    for (const table of tables(read(doc))) {
      const column = table.header.findIndex((h) => FILE_COLUMN.test(h));
      if (column < 0) continue;
      byDoc.set(doc, [...(byDoc.get(doc) ?? []), resolve(doc, table, column, problems)]);
    }
  }
  for (const doc of documents().filter((d) => d.startsWith('packages/') && existsSync(join(ROOT, dirname(d), 'src')))) {
    if (!byDoc.has(doc)) problems.push(`${doc}: no file table (a table with a \`file\` column naming what each file or folder of its src/ does)`);
  }
  for (const [doc, fileTables] of byDoc) {
    const src = join(dirname(doc), 'src');
    if (!doc.startsWith('packages/') && !doc.startsWith('proto/')) continue;
    if (!existsSync(join(ROOT, src))) continue;
    if (fileTables.some((t) => /\bselection\b/i.test(t.table.intro))) continue;
    const listed = fileTables.flatMap((t) => t.listed);
    const unlisted = filesUnder(src).filter((f) => !listed.some((l) => l.test(f)));
    if (unlisted.length > 0) {
      const where = fileTables.map((t) => `line ${t.table.line}`).join(', ');
      problems.push(`${doc} (file tables at ${where}): add ${unlisted.map((f) => `\`${relative(src, f)}\``).join(', ')}, or say above the table that it lists a selection`);
    }
  }
  assert.deepEqual(problems, []);
});

/** Folders no document of the repository lives in. */
const NOT_DOCS = new Set(['node_modules', '.git', '.cache', '.testbed', 'dist']);

function markdownFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const path = dir === '.' ? e.name : join(dir, e.name);
    if (e.isDirectory()) return NOT_DOCS.has(e.name) ? [] : markdownFiles(path);
    return e.name.endsWith('.md') ? [path] : [];
  });
}

test('every relative link in the repository\'s Markdown reaches a file, and the heading it names', () => {
  const problems: string[] = [];
  const files = markdownFiles('.');
  assert.ok(files.includes('README.md') && files.some((f) => f.startsWith('docs/')), `the walk found the README and docs/: ${files.join(', ')}`);
  for (const doc of files) {
    for (const link of relativeLinks(read(doc))) {
      const target = link.path === '' ? doc : join(dirname(doc), decodeURIComponent(link.path));
      const where = `${doc}:${link.line}: (${link.path}${link.fragment === undefined ? '' : `#${link.fragment}`})`;
      if (!existsSync(join(ROOT, target))) {
        problems.push(`${where}: ${target} does not exist`);
        continue;
      }
      if (link.fragment === undefined || link.fragment === '' || !target.endsWith('.md')) continue;
      if (!anchors(read(target)).has(link.fragment)) problems.push(`${where}: ${target} has no heading #${link.fragment}`);
    }
  }
  assert.deepEqual(problems, []);
});
