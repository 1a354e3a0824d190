import { DurationError, parseDuration as parseGoDuration } from '@podvirt/api/duration';

/** The launcher's settings, from the flags KubeVirt's launcher pod passes plus podvirt's own. */
export interface LauncherFlags {
  readonly name: string | undefined;
  readonly namespace: string | undefined;
  readonly uid: string | undefined;
  readonly qemuTimeoutMs: number;
  readonly shareDir: string;
  readonly ephemeralDiskDir: string;
  readonly containerDiskDir: string;
  readonly privateDir: string;
  readonly secretsDir: string;
  /** Where block PVCs appear as devices (`/dev`; tests point it elsewhere). */
  readonly devDir: string;
  readonly gracePeriodSeconds: number;
  readonly allowEmulation: boolean;
  readonly capsCacheDir: string | undefined;
  readonly simulateCrash: boolean;
  /** Flags accepted for compatibility that change nothing here; logged once at start. */
  readonly ignored: readonly string[];
}

export class FlagError extends Error {
  override readonly name = 'FlagError';
  readonly code = 'LAUNCHER_ERR_FLAG';
}

const VALUE = new Set([
  'name', 'namespace', 'uid', 'qemu-timeout', 'kubevirt-share-dir', 'ephemeral-disk-dir', 'container-disk-dir',
  'private-dir', 'secrets-dir', 'dev-dir', 'grace-period-seconds', 'libvirt-caps-cache', 'allow-emulation',
]);
const BOOL = new Set(['allow-emulation', 'simulate-crash']);
// KubeVirt passes these; they concern features podvirt does not have (or the monitor).
const IGNORED_VALUE = new Set(['hook-sidecars', 'ovmf-path', 'disk-memory-limit', 'hypervisor', 'image-volume', 'libvirt-log-filters', 'vm-stats-collector']);
const IGNORED_BOOL = new Set(['keep-after-failure', 'run-as-nonroot', 'upgrade-ordinal-ifaces', 'vgpu-dedicated-hook', 'firmware-auto-selection']);

/** A duration flag in the one grammar (`240s`, `3m`, `1h30m`, plain seconds). */
export function parseDuration(text: string): number {
  try {
    return parseGoDuration(text);
  } catch (err) {
    if (err instanceof DurationError) throw new FlagError(`invalid duration: ${err.message}`);
    throw err;
  }
}

function parseBool(text: string, flag: string): boolean {
  if (text === 'true' || text === '1') return true;
  if (text === 'false' || text === '0') return false;
  throw new FlagError(`--${flag}: expected true or false, got ${JSON.stringify(text)}`);
}

/**
 * Pure: argv after the program name, and the environment. Unknown flags are an error, not a guess.
 * Split by hand, not by node:util's parseArgs (which the handler, the controller and podvirtctl
 * use): KubeVirt's launcher pod speaks Go's flag grammar — one or two dashes (`-name`), a boolean
 * with or without `=value` — and parseArgs would read `-name` as five short flags.
 */
export function parseFlags(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): LauncherFlags {
  const values = new Map<string, string[]>();
  const ignored: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    const m = /^--?([a-z0-9-]+)(?:=(.*))?$/.exec(arg);
    if (m === null) throw new FlagError(`unexpected argument ${JSON.stringify(arg)}`);
    const [, flag = '', inline] = m;
    const isBool = BOOL.has(flag) || IGNORED_BOOL.has(flag);
    const takesValue = (VALUE.has(flag) && !BOOL.has(flag)) || IGNORED_VALUE.has(flag);
    if (!isBool && !takesValue) throw new FlagError(`unknown flag --${flag}`);
    let value = inline;
    if (value === undefined && takesValue) {
      value = argv[++i];
      if (value === undefined) throw new FlagError(`--${flag} needs a value`);
    }
    if (IGNORED_VALUE.has(flag) || IGNORED_BOOL.has(flag)) {
      ignored.push(flag);
      continue;
    }
    values.set(flag, [...(values.get(flag) ?? []), value ?? 'true']);
  }
  const one = (flag: string): string | undefined => values.get(flag)?.at(-1);
  const share = one('kubevirt-share-dir') ?? '/var/run/kubevirt';
  const grace = Number(one('grace-period-seconds') ?? '30');
  if (!Number.isInteger(grace) || grace < 0) throw new FlagError('--grace-period-seconds must be a non-negative integer');
  const emulation = one('allow-emulation') ?? env['PODVIRT_ALLOW_EMULATION'];
  const privateDir = one('private-dir') ?? '/var/run/kubevirt-private';
  return {
    name: one('name'),
    namespace: one('namespace'),
    uid: one('uid'),
    qemuTimeoutMs: parseDuration(one('qemu-timeout') ?? '3m'),
    shareDir: share,
    ephemeralDiskDir: one('ephemeral-disk-dir') ?? '/var/run/kubevirt-ephemeral-disks',
    containerDiskDir: one('container-disk-dir') ?? `${share}/container-disks`,
    privateDir,
    secretsDir: one('secrets-dir') ?? `${privateDir}/secret`,
    devDir: one('dev-dir') ?? '/dev',
    gracePeriodSeconds: grace,
    allowEmulation: emulation === undefined ? false : parseBool(emulation, 'allow-emulation'),
    capsCacheDir: one('libvirt-caps-cache') ?? env['PODVIRT_LIBVIRT_CAPS_CACHE'],
    simulateCrash: one('simulate-crash') === 'true',
    ignored,
  };
}
