import { GoFlagError, parseGoFlags } from '@podvirt/api/go-flags';

/** podvirt-tail's one flag (the docs check lists it against the READMEs). */
export const TAIL_OPTIONS = { logfile: { type: 'string' } } as const;

/**
 * podvirt-tail's flags, as KubeVirt's virt-tail takes them: `--logfile PATH` (required); other
 * flags (verbosity) are accepted and ignored, as virt-tail does.
 */
export function parseTailFlags(argv: readonly string[]): { readonly logFile: string } {
  const { values } = parseGoFlags(argv, { options: TAIL_OPTIONS, unknown: 'keep' });
  const logFile = values.logfile;
  if (logFile === undefined || logFile === '') throw new GoFlagError('logfile', 'a log file PATH is required');
  return { logFile };
}
