import { spawn } from 'node:child_process';

export interface CommandResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to completion with optional stdin and environment; never rejects on a non-zero exit. */
export function runCommand(
  argv: readonly string[],
  opts: { stdin?: string; env?: Readonly<Record<string, string>>; timeoutMs?: number; cwd?: string } = {},
): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const [command, ...args] = argv;
    if (command === undefined) throw new Error('empty argv');
    const child = spawn(command, args, {
      stdio: ['pipe', 'pipe', 'pipe'],
      ...(opts.env === undefined ? {} : { env: { ...opts.env } }),
      ...(opts.cwd === undefined ? {} : { cwd: opts.cwd }),
      timeout: opts.timeoutMs ?? 30_000,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.stdin.on('error', () => undefined);
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(opts.stdin ?? '');
  });
}
