// Any failure → what to print on stderr and the exit code: 1 the node API refused or failed,
// 2 usage error, 3 cannot connect, 130 interrupted (the shell's code for SIGINT).
import { ApiTimeoutError } from '../api-deadline.js';
import type { CommandName } from '../command-table.js';
import { ConnectError, type ConnectFailure } from '../connect-error.js';
import { NODE_API_SOCKET_ENV } from '../defaults.js';
import { formatDuration } from '@podvirt/api/duration';
import { NodeApiError, type StatusName } from '../node-api-error.js';
import type { Connection } from '../parse-args.js';
import { UsageError } from '../usage-error.js';
import { formatShortUsage } from '../usage.js';

export const EXIT_FAILED = 1;
export const EXIT_USAGE = 2;
export const EXIT_CONNECT = 3;
export const EXIT_INTERRUPTED = 130;

export interface FailureContext {
  readonly command: CommandName | undefined;
  readonly connection: Connection | undefined;
  readonly timeoutMs: number | undefined;
  // SIGINT arrived: whatever failed after that failed because of it.
  readonly interrupted: boolean;
}

export interface Failure {
  readonly exitCode: number;
  readonly stderr: string;
}

export function renderFailure(err: unknown, context: FailureContext): Failure {
  if (context.interrupted) {
    return { exitCode: EXIT_INTERRUPTED, stderr: 'error: interrupted; the call was cancelled (the handler may still complete it)\n' };
  }
  if (err instanceof UsageError) {
    return { exitCode: EXIT_USAGE, stderr: `error: ${err.message}\n${formatShortUsage(err.command ?? context.command)}` };
  }
  if (err instanceof ConnectError) {
    return { exitCode: EXIT_CONNECT, stderr: `error: ${err.message}\nhint: ${connectHint(err.failure, context.connection)}\n` };
  }
  if (err instanceof ApiTimeoutError) {
    return { exitCode: EXIT_FAILED, stderr: `error: ${err.message}\nhint: the API server, or podvirt-api behind it for a subresource, is slow or stuck: check "kubectl get apiservice v1.subresources.kubevirt.io" and podvirt-api's logs, or allow longer with --timeout\n` };
  }
  if (err instanceof NodeApiError) {
    // Through the API server (no node connection) the message is the API server's and says enough.
    const hint = context.connection === undefined ? undefined : statusHint(err.status, context);
    return { exitCode: EXIT_FAILED, stderr: `error: ${err.message}\n${hint === undefined ? '' : `hint: ${hint}\n`}` };
  }
  const message = err instanceof Error ? err.message : String(err);
  return { exitCode: EXIT_FAILED, stderr: `error: ${message}\n` };
}

function connectHint(failure: ConnectFailure, connection: Connection | undefined): string {
  switch (failure) {
    case 'socket-missing':
      return `is podvirt-handler running on this node? If its socket is elsewhere, pass --socket PATH or set ${NODE_API_SOCKET_ENV}`;
    case 'permission-denied':
      return 'the node API socket is root-only: run podvirtctl as root (sudo podvirtctl ...), or inside the handler pod with kubectl exec';
    case 'refused':
      return 'the socket is stale: podvirt-handler is not running on this node, or is restarting; retry in a moment';
    case 'timeout':
      return 'the handler accepts no connections in time: it may be overloaded or stuck; check its logs';
    case 'unreachable':
      return connection?.kind === 'tls'
        ? 'check --server, that the handler serves its TLS port there, and that --ca, --cert and --key belong to that cluster'
        : 'check the socket path given with --socket';
  }
}

function statusHint(status: StatusName, context: FailureContext): string | undefined {
  switch (status) {
    case 'NOT_FOUND':
      return 'check the name with "podvirtctl list -A"; only VMIs on this node are known here';
    case 'UNAVAILABLE':
      return `is the handler running on this node, and the VMI's launcher pod? node API: ${where(context.connection)}`;
    case 'DEADLINE_EXCEEDED': {
      const waited = context.timeoutMs === undefined ? 'in time' : `within ${formatDuration(context.timeoutMs)}`;
      return `no answer ${waited}: the guest agent or the launcher may be busy; retry, or allow longer with --timeout`;
    }
    case 'INVALID_ARGUMENT':
      return 'the handler rejected the request; the message names the field';
    case 'PERMISSION_DENIED':
    case 'UNAUTHENTICATED':
      return 'the node API refused this client; check --cert and --key';
    case 'UNIMPLEMENTED':
      return 'the handler does not offer this call: is it older than podvirtctl?';
    default:
      // FAILED_PRECONDITION and the rest: the server's message is the reason and says what to do.
      return undefined;
  }
}

function where(connection: Connection | undefined): string {
  if (connection === undefined) return 'unknown';
  return connection.kind === 'unix' ? `socket ${connection.path}` : connection.address;
}
