import { status } from '@grpc/grpc-js';

export type StatusName = keyof typeof status;

// The node API answered with a gRPC status other than OK. `status` is the status's name
// (NOT_FOUND, FAILED_PRECONDITION ...), which is what callers match on; the message is the
// server's own text.
export class NodeApiError extends Error {
  readonly code = 'CTL_ERR_NODE_API';
  readonly status: StatusName;

  constructor(statusName: StatusName, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'NodeApiError';
    this.status = statusName;
  }
}

export function statusName(code: number): StatusName {
  const found = (Object.keys(status) as StatusName[]).find((name) => status[name] === code);
  return found ?? 'UNKNOWN';
}
