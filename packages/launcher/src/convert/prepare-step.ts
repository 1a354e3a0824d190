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
    };

/** Where a cloud-init document comes from; secret references are read from the mounted secret volume. */
export type DataSource =
  | { readonly inline: string }
  | { readonly base64: string }
  | { readonly secret: string; readonly keys: readonly string[] };
