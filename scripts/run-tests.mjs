// Runs every compiled `*.test.js` on node's test runner. Node 20's directory mode would also
// treat every module under a `test/` folder as a test file (and so start testbed entry
// points), so the files are listed explicitly. Arguments filter by path substring.
//
// Two runners side by side. The files under test/ that start stacks, libvirt daemons, guests or
// network namespaces (test/e2e, test/integration, test/testbed) run one at a time, as they
// always have: their waits are timed against VMs sharing the machine's cores. The unit tests of
// the packages, proto and test/checks (no VM, no testbed; only their own temp dirs and child
// processes) and the files under test/ that start none of that either (IN_PROCESS: an API server
// in the test's own process at most, a controller or kubectl against it) run in a second
// runner beside them, one file at a time too, so that the two never take more than the two cores
// of a CI machine; their report is held and printed once the first runner's ends, so the two
// reports never interleave. Each report ends with its time by file (test-file-times.mjs).
// PODVIRT_TEST_ONE_RUNNER=1 runs every file in one runner, one at a time.
import { Buffer } from 'node:buffer';
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const roots = ['packages', 'proto', 'test'];
const filters = process.argv.slice(2);
const fileTimes = fileURLToPath(new URL('./test-file-times.mjs', import.meta.url));

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

const oneRunner = process.env['PODVIRT_TEST_ONE_RUNNER'] === '1';
// Files under test/ that start no testbed stack, VM, libvirt daemon, container or network
// namespace (a file that starts one belongs in neither list: it runs with the stack files).
const IN_PROCESS = [
  /^test\/dist\/e2e\/(testbed-apiserver-[a-z-]+|testbed-kubectl|ship-manifests|controller-(lifecycle|migration|process|vm))\.test\.js$/,
  /^test\/dist\/testbed\/(close-on-signal|control-plane\/service-account-tokens|guest\/wait-for-console-text|kubelet\/(container-log|testbed-pod-status)|real-node\/node-config|scheduler\/[a-z-]+)\.test\.js$/,
];
const onHost = (file) => /^test\/dist\/(e2e|integration|testbed)\//.test(file) && !IN_PROCESS.some((re) => re.test(file));
const groups = (oneRunner ? [files] : [files.filter(onHost), files.filter((f) => !onHost(f))]).filter((g) => g.length > 0);

const children = new Set();
// A signal to this process reaches the runners (each stops its test files, which close their stacks).
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    for (const child of children) child.kill(signal);
  });
}

/** One `node --test` over `list`; `hold` keeps its output (both streams, in order) for later. */
function runner(list, hold) {
  const args = ['--test', '--test-concurrency=1', '--test-reporter=spec', '--test-reporter-destination=stdout',
    `--test-reporter=${fileTimes}`, '--test-reporter-destination=stdout', ...list];
  const child = spawn(process.execPath, args, { stdio: hold ? ['ignore', 'pipe', 'pipe'] : 'inherit' });
  children.add(child);
  child.on('exit', () => children.delete(child));
  const held = [];
  if (hold) for (const stream of [child.stdout, child.stderr]) stream.on('data', (chunk) => held.push(chunk));
  return new Promise((resolve) => {
    child.on('error', (err) => resolve({ code: 1, held: [Buffer.from(`run-tests: ${err.message}\n`)] }));
    child.on('exit', (code, signal) => resolve({ code: code ?? (signal ? 1 : 0), held }));
  });
}

const results = await Promise.all(groups.map((list, i) => runner(list, i > 0)));
for (const { held } of results) for (const chunk of held) process.stdout.write(chunk);
process.exit(results.some((r) => r.code !== 0) ? 1 : 0);
