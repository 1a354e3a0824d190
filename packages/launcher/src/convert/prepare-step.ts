/**
 * A side effect the converter asks for: files that must exist before the domain starts. The
 * converter stays pure and lists them; the prepare step (src/prepare/) performs them.
 */
export type PrepareStep =
  | { readonly kind: 'overlay'; readonly path: string; readonly backingFile: string; readonly backingFormat: 'raw' | 'qcow2' }
  /** `field` names the capacity in the VMI, for an error about the size. */
  | { readonly kind: 'emptyDisk'; readonly path: string; readonly sizeBytes: bigint; readonly field?: string }
  | {
      readonly kind: 'cloudInitNoCloud';
      readonly path: string;
      readonly volume: string;
      readonly userData?: DataSource;
      readonly networkData?: DataSource;
      readonly instanceId: string;
      readonly hostname: string;
    }
  | {
      /** A raw image in a directory the pod mounts (PVC, hostDisk); created sparse when missing and `sizeBytes` is set. */
      readonly kind: 'diskImage';
      /** The mount: the image must really lie inside it, symlinks resolved. */
      readonly root: string;
      readonly path: string;
      /** For messages: `claim data`, `hostDisk /var/disks/a.img`. */
      readonly what: string;
      readonly sizeBytes?: bigint;
      /** An existing image larger than this does not fit its claim. */
      readonly maxBytes?: bigint;
    }
  | { readonly kind: 'blockDevice'; readonly root: string; readonly path: string; readonly what: string };

/** Where a cloud-init document comes from; secret references are read from the mounted secret volume. */
export type DataSource =
  | { readonly inline: string }
  | { readonly base64: string }
  | { readonly secret: string; readonly keys: readonly string[] };
