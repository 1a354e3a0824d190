// `testbed up [--state-dir DIR]` / `testbed down [--state-dir DIR]`.
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { repoRoot } from '../guest/repo-root.js';
import { testbedDown, testbedUp } from './testbed-processes.js';

const usage = 'usage: testbed up|down [--state-dir DIR]\n';
let parsed;
try {
  // strict: an unknown flag is refused, not ignored.
  parsed = parseArgs({ allowPositionals: true, strict: true, options: { 'state-dir': { type: 'string' } } });
} catch (err) {
  process.stderr.write(`testbed: ${(err as Error).message}\n${usage}`);
  process.exit(2);
}
const { values, positionals } = parsed;
const stateDir = values['state-dir'] ?? join(repoRoot(import.meta.url), '.testbed');
const command = positionals.length === 1 ? positionals[0] : undefined;
try {
  if (command === 'up') {
    const up = await testbedUp(stateDir);
    process.stdout.write(`export KUBECONFIG=${up.kubeconfigPath}\n`);
  } else if (command === 'down') {
    await testbedDown(stateDir);
  } else {
    process.stderr.write(usage);
    process.exitCode = 2;
  }
} catch (err) {
  process.stderr.write(`testbed: ${(err as Error).message}\n`);
  process.exitCode = 1;
}
