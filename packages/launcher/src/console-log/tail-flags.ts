export class TailFlagError extends Error {
  override readonly name = 'TailFlagError';
  readonly code = 'TAIL_ERR_FLAG';
}

/**
 * podvirt-tail's flags, as KubeVirt's virt-tail takes them: `--logfile PATH` (required); other
 * flags (verbosity) are accepted and ignored, as virt-tail does.
 */
export function parseTailFlags(argv: readonly string[]): { readonly logFile: string } {
  let logFile: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (arg === '--logfile') logFile = argv[++i];
    else if (arg.startsWith('--logfile=')) logFile = arg.slice('--logfile='.length);
  }
  if (logFile === undefined || logFile === '') throw new TailFlagError('--logfile PATH is required');
  return { logFile };
}
