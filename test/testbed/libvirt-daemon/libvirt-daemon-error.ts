export type LibvirtDaemonErrorCode = 'PODVIRT_LIBVIRTD_START_FAILED' | 'PODVIRT_LIBVIRTD_START_TIMEOUT';

/** The test libvirt daemon did not come up; the message carries its stderr. */
export class LibvirtDaemonError extends Error {
  override readonly name = 'LibvirtDaemonError';
  readonly code: LibvirtDaemonErrorCode;

  constructor(code: LibvirtDaemonErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}
