// One way to stop a gRPC server, checked on the source: every server, in the programs, their
// tests, the testbed and the benchmarks, stops through `shutdownGrpcServer` of @podvirt/proto
// (running calls may finish, then are cut at a bound). A hand-written `tryShutdown` can wait
// for ever on a call in flight; a bare `forceShutdown` cuts calls a graceful stop would finish.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { repoRoot } from '../testbed/guest/repo-root.js';

const ROOT = repoRoot(import.meta.url);

/** The one file that may call grpc-js's shutdown methods itself. */
const THE_ONE_WAY = 'proto/src/grpc-server-shutdown.ts';

/** Folders that hold no source of ours: build output, dependencies, generated code. */
const SKIP = new Set(['node_modules', 'dist', 'gen', '.cache', '.testbed']);

function* tsFiles(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory() && !SKIP.has(entry.name)) yield* tsFiles(path);
    else if (entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) yield path;
  }
}

function sourceFiles(): string[] {
  const packages = readdirSync(join(ROOT, 'packages'), { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => join(ROOT, 'packages', e.name));
  return [...packages, join(ROOT, 'proto'), join(ROOT, 'test')].flatMap((dir) => [...tsFiles(dir)]).map((path) => relative(ROOT, path));
}

test('every gRPC server stops through shutdownGrpcServer, never a hand-written tryShutdown or forceShutdown', () => {
  const files = sourceFiles();
  assert.ok(files.includes(THE_ONE_WAY), `${THE_ONE_WAY} is among the files read`);
  assert.ok(files.some((f) => f.startsWith('test/')) && files.some((f) => f.includes('/test/')), 'the tests are read too');
  const problems: string[] = [];
  for (const file of files) {
    if (file === THE_ONE_WAY) continue;
    readFileSync(join(ROOT, file), 'utf8').split('\n').forEach((line, i) => {
      const call = /\.(tryShutdown|forceShutdown)\(/.exec(line);
      if (call !== null) problems.push(`${file}:${i + 1}: ${call[1]}() — stop the server with shutdownGrpcServer(server, boundMs) of @podvirt/proto`);
    });
  }
  assert.deepEqual(problems, []);
});
