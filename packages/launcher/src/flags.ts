import { parseGoBool, parseGoFlags } from '@podvirt/api/go-flags';
import { parseDaemonChoice, type DaemonChoice } from './daemon/daemon-config.js';

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
  /** virtqemud, or Debian's libvirtd as the fallback when asked (env PODVIRT_LIBVIRT_DAEMON). */
  readonly daemon: DaemonChoice;
  /** A virtqemud outside /usr/sbin (env PODVIRT_VIRTQEMUD). */
  readonly virtqemud: string | undefined;
  readonly simulateCrash: boolean;
  /** Flags accepted for compatibility that change nothing here; logged once at start. */
  readonly ignored: readonly string[];
}

// KubeVirt passes these; they concern features podvirt does not have (or the monitor).
const IGNORED = {
  'hook-sidecars': { type: 'string' }, 'ovmf-path': { type: 'string' }, 'disk-memory-limit': { type: 'string' },
  hypervisor: { type: 'string' }, 'image-volume': { type: 'string' }, 'libvirt-log-filters': { type: 'string' },
  'vm-stats-collector': { type: 'string' }, 'keep-after-failure': { type: 'boolean' }, 'run-as-nonroot': { type: 'boolean' },
  'upgrade-ordinal-ifaces': { type: 'boolean' }, 'vgpu-dedicated-hook': { type: 'boolean' }, 'firmware-auto-selection': { type: 'boolean' },
} as const;

const OPTIONS = {
  name: { type: 'string' }, namespace: { type: 'string' }, uid: { type: 'string' }, 'qemu-timeout': { type: 'duration' },
  'kubevirt-share-dir': { type: 'string' }, 'ephemeral-disk-dir': { type: 'string' }, 'container-disk-dir': { type: 'string' },
  'private-dir': { type: 'string' }, 'secrets-dir': { type: 'string' }, 'dev-dir': { type: 'string' },
  'grace-period-seconds': { type: 'integer' }, 'libvirt-caps-cache': { type: 'string' }, 'allow-emulation': { type: 'boolean' },
  'simulate-crash': { type: 'boolean' },
  ...IGNORED,
} as const;

const DEFAULT_QEMU_TIMEOUT_MS = 180_000;
const DEFAULT_GRACE_PERIOD_SECONDS = 30;

/** Pure: argv after the program name, and the environment. Unknown flags are an error, not a guess. */
export function parseFlags(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): LauncherFlags {
  const { values: v, given } = parseGoFlags(argv, { options: OPTIONS, unknown: 'error' });
  const share = v['kubevirt-share-dir'] ?? '/var/run/kubevirt';
  const emulationEnv = env['PODVIRT_ALLOW_EMULATION'];
  const privateDir = v['private-dir'] ?? '/var/run/kubevirt-private';
  return {
    name: v.name,
    namespace: v.namespace,
    uid: v.uid,
    qemuTimeoutMs: v['qemu-timeout'] ?? DEFAULT_QEMU_TIMEOUT_MS,
    shareDir: share,
    ephemeralDiskDir: v['ephemeral-disk-dir'] ?? '/var/run/kubevirt-ephemeral-disks',
    containerDiskDir: v['container-disk-dir'] ?? `${share}/container-disks`,
    privateDir,
    secretsDir: v['secrets-dir'] ?? `${privateDir}/secret`,
    devDir: v['dev-dir'] ?? '/dev',
    gracePeriodSeconds: v['grace-period-seconds'] ?? DEFAULT_GRACE_PERIOD_SECONDS,
    allowEmulation: v['allow-emulation'] ?? (emulationEnv === undefined ? false : parseGoBool('allow-emulation', emulationEnv)),
    capsCacheDir: v['libvirt-caps-cache'] ?? env['PODVIRT_LIBVIRT_CAPS_CACHE'],
    daemon: parseDaemonChoice(env['PODVIRT_LIBVIRT_DAEMON']),
    virtqemud: env['PODVIRT_VIRTQEMUD'],
    simulateCrash: v['simulate-crash'] ?? false,
    ignored: given.filter((flag) => Object.hasOwn(IGNORED, flag)),
  };
}

/** Every flag podvirt-launcher takes, and those it accepts only to ignore (the docs check lists both against the READMEs). */
export const LAUNCHER_OPTIONS = OPTIONS;
export const LAUNCHER_IGNORED_OPTIONS = IGNORED;
