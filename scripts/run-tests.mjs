// Runs every compiled `*.test.js` on node's test runner. Node 20's directory mode would also
// treat every module under a `test/` folder as a test file (and so start testbed entry
// points), so the files are listed explicitly. Arguments filter by path substring.
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';

const roots = ['packages', 'proto', 'test'];
const filters = process.argv.slice(2);

function* walk(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules') continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* walk(path);
    else if (entry.name.endsWith('.test.js') && path.split('/').includes('dist')) yield path;
  }
}

const files = roots
  .flatMap((root) => [...walk(root)])
  .map((file) => relative('.', file))
  .filter((file) => filters.length === 0 || filters.some((f) => file.includes(f)))
  .sort();

if (files.length === 0) {
  console.error('run-tests: no test files matched');
  process.exit(1);
}
const child = spawn(process.execPath, ['--test', '--test-reporter=spec', ...files], { stdio: 'inherit' });
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
