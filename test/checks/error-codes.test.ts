// One error scheme across the packages, checked on the source: nothing a process throws is a
// bare Error (callers match on `code`, never on message text), every error class has a `code`,
// and every code is spelled `<PACKAGE>_ERR_<WHAT>` with its own package's prefix, as undici's
// `UND_ERR_*`, so a code in a log line says where it came from.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { repoRoot } from '../testbed/guest/repo-root.js';

const ROOT = repoRoot(import.meta.url);

/** The prefix of each package's codes. */
const PREFIX: Readonly<Record<string, string>> = {
  api: 'API',
  controller: 'CONTROLLER',
  ctl: 'CTL',
  handler: 'HANDLER',
  'kube-runtime': 'KUBE',
  launcher: 'LAUNCHER',
  'launcher-monitor': 'MONITOR',
  libvirt: 'LIBVIRT',
  'test-support': 'TEST_SUPPORT',
  'podvirt-api': 'PODVIRT_API',
};

/** Bare errors that may stay, and why. */
const BARE_ALLOWED: Readonly<Record<string, string>> = {
  // A failed wait in a test is an assertion failure for a person to read; no caller matches it.
  'packages/test-support/src/eventually.ts': 'a test assertion',
};

/** Error classes without a string code, and why. */
const UNCODED_ALLOWED: Readonly<Record<string, string>> = {
  // libvirt's own virErrorNumber, kept as the C library has it (codeName gives its stable name).
  LibvirtError: 'numeric libvirt code',
};

interface Source {
  readonly path: string;
  readonly pkg: string;
  readonly text: string;
}

function* tsFiles(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory() && entry.name !== 'gen') yield* tsFiles(path);
    else if (entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) yield path;
  }
}

function sources(): Source[] {
  const packages = join(ROOT, 'packages');
  return readdirSync(packages, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .flatMap((e) => [...tsFiles(join(packages, e.name, 'src'))].map((path) => ({ path: relative(ROOT, path), pkg: e.name, text: readFileSync(path, 'utf8') })));
}

const ALL = sources();

test('nothing in packages/*/src throws or rejects with a bare Error, TypeError or RangeError', () => {
  assert.ok(ALL.length > 100, 'the sources were found');
  const bare = /\b(?:throw|reject\()\s*new (?:Error|TypeError|RangeError|SyntaxError)\(/g;
  const found = ALL.flatMap((s) => [...s.text.matchAll(bare)].map((m) => `${s.path}:${s.text.slice(0, m.index).split('\n').length}`))
    .filter((where) => BARE_ALLOWED[where.split(':')[0] ?? ''] === undefined);
  assert.deepEqual(found, [], 'throw an error class with a stable code (HandlerError, LauncherError …) instead');
});

function errorClasses(): { name: string; base: string; body: string; path: string; pkg: string }[] {
  const decl = /class (\w+) extends (\w*Error)\b[^{]*\{([\s\S]*?)\n\}/g;
  return ALL.flatMap((s) => [...s.text.matchAll(decl)].map((m) => ({ name: m[1] ?? '', base: m[2] ?? '', body: m[3] ?? '', path: s.path, pkg: s.pkg })));
}

/** Comments go before any quote is read: an apostrophe in one would read as a quote. */
function uncommented(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
}

function quoted(text: string): string[] {
  return [...text.matchAll(/'([^']+)'/g)].map((m) => m[1] ?? '');
}

test('every error class has a code', () => {
  const classes = errorClasses();
  assert.ok(classes.length >= 20, `the error classes were found (${classes.length})`);
  const coded = new Set(classes.filter((c) => /\breadonly code\b/.test(c.body)).map((c) => c.name));
  const uncoded = classes.filter((c) => !coded.has(c.name) && !coded.has(c.base) && UNCODED_ALLOWED[c.name] === undefined);
  assert.deepEqual(uncoded.map((c) => `${c.path}: ${c.name}`), []);
});

test('every code is <PACKAGE>_ERR_<WHAT> with its own package\'s prefix', () => {
  const codes = [
    // In an error class: readonly code = 'X', or a constructor's readonly code: 'X' | 'Y'.
    ...errorClasses().flatMap((c) => [...uncommented(c.body).matchAll(/readonly code(?::[^=;,)]*)? = '([^']+)'|readonly code: ((?:\s*\|?\s*'[^']+')+)/g)]
      .flatMap((m) => (m[1] === undefined ? quoted(m[2] ?? '') : [m[1]])).map((code) => ({ path: c.path, pkg: c.pkg, code }))),
    // type FooErrorCode = | 'X' | 'Y';
    ...ALL.flatMap((s) => [...uncommented(s.text).matchAll(/type \w*ErrorCode =([^;]+);/g)].flatMap((m) => quoted(m[1] ?? '')).map((code) => ({ path: s.path, pkg: s.pkg, code }))),
  ];
  assert.ok(codes.length >= 60, `the codes were found (${codes.length})`);
  const wrong = codes.filter(({ pkg, code }) => PREFIX[pkg] === undefined || !new RegExp(`^${PREFIX[pkg]}_ERR_[A-Z0-9]+(?:_[A-Z0-9]+)*$`).test(code));
  assert.deepEqual(wrong.map((w) => `${w.path}: ${w.code}`), []);
});
