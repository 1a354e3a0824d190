// podvirtctl's entry point and the only file that touches the process: argv, environment,
// stdout/stderr, SIGINT and the exit code.
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { runCli } from './cli.js';
import { NODE_API_SOCKET_ENV } from './defaults.js';
import { EXIT_INTERRUPTED } from './render/failure.js';

// dist/src/main.js → the package's package.json, the one place the version is written.
const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: string };

const controller = new AbortController();
// The first Ctrl-C cancels the call and lets it report; a second one does not wait any more.
const onSigint = (): void => {
  if (controller.signal.aborted) process.exit(EXIT_INTERRUPTED);
  controller.abort(new Error('interrupted by SIGINT'));
};
process.on('SIGINT', onSigint);
// The console leaves raw mode and says why on these too (a closed terminal sends SIGHUP).
const onTerminate = (sig: NodeJS.Signals): void => controller.abort(new Error(`interrupted by ${sig}`));
process.on('SIGTERM', onTerminate);
process.on('SIGHUP', onTerminate);

process.exitCode = await runCli({
  argv: process.argv.slice(2),
  env: { socket: process.env[NODE_API_SOCKET_ENV] },
  stdout: process.stdout,
  stderr: process.stderr,
  signal: controller.signal,
  version: manifest.version ?? 'unknown',
  kube: { env: process.env, homeDir: homedir() },
  // A getter: only console and vnc touch stdin, which other commands must leave alone.
  get terminal() {
    return { stdin: process.stdin, stdout: process.stdout };
  },
});
process.off('SIGINT', onSigint);
process.off('SIGTERM', onTerminate);
process.off('SIGHUP', onTerminate);
