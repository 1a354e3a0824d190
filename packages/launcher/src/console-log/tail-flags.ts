import { GoFlagError, parseGoFlags } from '@podvirt/api/go-flags';

/**
 * podvirt-tail's flags, as KubeVirt's virt-tail takes them: `--logfile PATH` (required); other
 * flags (verbosity) are accepted and ignored, as virt-tail does.
 */
export function parseTailFlags(argv: readonly string[]): { readonly logFile: string } {
  const { values } = parseGoFlags(argv, { options: { logfile: { type: 'string' } }, unknown: 'keep' });
  const logFile = values.logfile;
  if (logFile === undefined || logFile === '') throw new GoFlagError('logfile', 'a log file PATH is required');
  return { logFile };
}
