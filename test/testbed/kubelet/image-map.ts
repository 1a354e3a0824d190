/** What an image gives a container: its ENTRYPOINT and CMD, as local commands. */
export interface ImageCommand {
  entrypoint: string[];
  cmd: string[];
}

export interface ImageMapEntry extends ImageCommand {
  /** An image reference; `*` matches any run of characters (`podvirt/launcher:*`). */
  pattern: string;
}

/** Resolves an image reference to the local command standing in for it. */
export type ImageMap = (image: string) => ImageCommand | undefined;

/**
 * The testbed has no container runtime: each image is a local command. This is the ONE
 * table of them; callers extend it (the launcher image maps to the built monitor entry
 * point once that exists). A busybox-like image runs the host's shell utilities.
 */
export const defaultImageTable: readonly ImageMapEntry[] = [
  { pattern: 'busybox', entrypoint: [], cmd: ['/bin/sh'] },
  { pattern: 'busybox:*', entrypoint: [], cmd: ['/bin/sh'] },
  { pattern: 'docker.io/library/busybox*', entrypoint: [], cmd: ['/bin/sh'] },
];

export function imageMapFrom(table: readonly ImageMapEntry[]): ImageMap {
  const compiled = table.map((entry) => ({
    entry,
    regex: new RegExp(`^${entry.pattern.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\/]/g, '\\$&')).join('.*')}$`),
  }));
  return (image) => {
    const found = compiled.find((c) => c.regex.test(image))?.entry;
    return found === undefined ? undefined : { entrypoint: [...found.entrypoint], cmd: [...found.cmd] };
  };
}

/** The argv a container runs: `command` replaces ENTRYPOINT, `args` replace CMD (and `command` drops CMD). */
export function containerArgv(image: ImageCommand, command: string[] | undefined, args: string[] | undefined): string[] {
  const entry = command ?? image.entrypoint;
  const rest = args ?? (command === undefined ? image.cmd : []);
  return [...entry, ...rest];
}
