import { join } from 'node:path';
import { launcherDaemon, launcherDaemonEnv, type LauncherDaemon } from '../libvirt-daemon/virtqemud-build.js';

/** What an image gives a container: its ENTRYPOINT, CMD and ENV, as local commands. */
export interface ImageCommand {
  entrypoint: string[];
  cmd: string[];
  /** The image's ENV: a container's own `env` entries win over these. */
  env?: Record<string, string>;
  /**
   * Executables the image holds at fixed paths (`/usr/bin/podvirt-launcher-monitor`), each
   * with the local argv standing in for it: a pod whose `command` names such a path runs
   * that argv instead, as the file would run in the real image.
   */
  files?: Record<string, string[]>;
}

export interface ImageMapEntry extends ImageCommand {
  /** An image reference; `*` matches any run of characters (`podvirt/launcher:*`). */
  pattern: string;
}

/** Resolves an image reference to the local command standing in for it. */
export type ImageMap = (image: string) => ImageCommand | undefined;

/** Where the testbed finds the built pieces its images stand for. */
export interface ImageTableSources {
  /** The repository root: the launcher, monitor and capabilities cache are found below it. */
  readonly repoRoot: string;
  /** The node binary that runs the monitor and launcher (the testbed's own). */
  readonly node: string;
  /** The libvirt daemon the launcher runs; by default launcherDaemon's (virtqemud unless PODVIRT_TESTBED_DAEMON=libvirtd). */
  readonly daemon?: LauncherDaemon | undefined;
}

// The test guest image's content, as a containerDisk / kernelBoot image would hold it:
// `boot/vmlinuz`, `boot/initrd.img` and `disk.img`. Its entrypoint copies that tree into the
// directory it is given (the launcher pod's init container passes its slot under
// container-disks), so the launcher finds `<slot>/disk.img` and `kernel-boot/boot/vmlinuz`.
// The build is resolved when the copy runs, so a missing guest fails the init container with
// the build hint, not the whole testbed. cp keeps the data disk sparse.
const COPY_GUEST = `set -eu
target=$1
guest=$(readlink -f "$PODVIRT_GUEST_DIR")
for f in vmlinuz initrd.img data.ext4; do
  [ -f "$guest/$f" ] || { echo "test guest not built ($guest/$f missing): run test/testbed/guest/build" >&2; exit 1; }
done
mkdir -p "$target/boot"
cp --sparse=always "$guest/vmlinuz" "$target/boot/vmlinuz"
cp --sparse=always "$guest/initrd.img" "$target/boot/initrd.img"
cp --sparse=always "$guest/data.ext4" "$target/disk.img"
`;

/**
 * The testbed has no container runtime: each image is a local command. This is the ONE
 * table of them. A busybox-like image runs the host's shell utilities; the launcher image
 * runs the built monitor (PID 1 of its container), which finds the built launcher through the
 * image's environment and seeds libvirt from the shared capabilities cache; the test guest
 * image copies the built guest files into the directory its container is given.
 */
export function defaultImageTable(sources: ImageTableSources): ImageMapEntry[] {
  const root = sources.repoRoot;
  const monitor = [sources.node, join(root, 'packages/launcher-monitor/bin/podvirt-launcher-monitor.js')];
  return [
    { pattern: 'busybox', entrypoint: [], cmd: ['/bin/sh'] },
    { pattern: 'busybox:*', entrypoint: [], cmd: ['/bin/sh'] },
    { pattern: 'docker.io/library/busybox*', entrypoint: [], cmd: ['/bin/sh'] },
    {
      pattern: 'podvirt/launcher:*',
      entrypoint: monitor,
      cmd: [],
      env: {
        PODVIRT_LAUNCHER_BIN: join(root, 'packages/launcher/bin/podvirt-launcher.js'),
        ...launcherDaemonEnv(sources.daemon ?? launcherDaemon(root)),
        // The stage benchmark's call trace (proto/src/op-trace.ts) reaches the launchers too.
        ...(process.env['PODVIRT_TRACE_OPS'] === '1' ? { PODVIRT_TRACE_OPS: '1' } : {}),
      },
      files: {
        '/usr/bin/podvirt-launcher-monitor': monitor,
        '/usr/bin/podvirt-tail': [sources.node, join(root, 'packages/launcher/bin/podvirt-tail.js')],
      },
    },
    // The init container gives the target directory as its only argument.
    {
      pattern: 'podvirt/test-guest:*',
      entrypoint: ['/bin/sh', '-c', COPY_GUEST, 'copy-guest'],
      cmd: [],
      env: { PODVIRT_GUEST_DIR: join(root, '.cache/guest/current') },
    },
  ];
}

export function imageMapFrom(table: readonly ImageMapEntry[]): ImageMap {
  const compiled = table.map((entry) => ({
    entry,
    regex: new RegExp(`^${entry.pattern.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\/]/g, '\\$&')).join('.*')}$`),
  }));
  return (image) => {
    const found = compiled.find((c) => c.regex.test(image))?.entry;
    if (found === undefined) return undefined;
    return {
      entrypoint: [...found.entrypoint],
      cmd: [...found.cmd],
      ...(found.env === undefined ? {} : { env: { ...found.env } }),
      ...(found.files === undefined ? {} : { files: structuredClone(found.files) }),
    };
  };
}

/**
 * The argv a container runs: `command` replaces ENTRYPOINT, `args` replace CMD (and `command`
 * drops CMD); a first word naming one of the image's files runs that file's local stand-in.
 */
export function containerArgv(image: ImageCommand, command: string[] | undefined, args: string[] | undefined): string[] {
  const entry = command ?? image.entrypoint;
  const rest = args ?? (command === undefined ? image.cmd : []);
  const [first, ...more] = [...entry, ...rest];
  if (first === undefined) return [];
  const standIn = image.files?.[first];
  return standIn === undefined ? [first, ...more] : [...standIn, ...more];
}
