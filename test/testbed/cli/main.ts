// `testbed up [--state-dir DIR]` / `testbed down [--state-dir DIR]`.
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { repoRoot } from '../guest/repo-root.js';
import { testbedDown, testbedUp } from './testbed-processes.js';

const { values, positionals } = parseArgs({ allowPositionals: true, options: { 'state-dir': { type: 'string' } } });
const stateDir = values['state-dir'] ?? join(repoRoot(import.meta.url), '.testbed');
const command = positionals[0];
try {
  if (command === 'up') {
    const up = await testbedUp(stateDir);
    process.stdout.write(`export KUBECONFIG=${up.kubeconfigPath}\n`);
  } else if (command === 'down') {
    await testbedDown(stateDir);
  } else {
    process.stderr.write('usage: testbed up|down [--state-dir DIR]\n');
    process.exitCode = 2;
  }
} catch (err) {
  process.stderr.write(`testbed: ${(err as Error).message}\n`);
  process.exitCode = 1;
}
