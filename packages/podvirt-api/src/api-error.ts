// The one error class of podvirt-api. Callers match on `code`, never on message text.

export type PodvirtApiErrorCode =
  | 'PODVIRT_API_ERR_BAD_FLAG'
  | 'PODVIRT_API_ERR_CERTIFICATE'
  | 'PODVIRT_API_ERR_LISTEN'
  | 'PODVIRT_API_ERR_BAD_REVIEW';

export class PodvirtApiError extends Error {
  override readonly name = 'PodvirtApiError';
  readonly code: PodvirtApiErrorCode;

  constructor(code: PodvirtApiErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}
