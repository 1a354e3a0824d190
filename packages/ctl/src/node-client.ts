// The node API as promises, through @podvirt/proto's promiseClient (deadline, AbortSignal →
// call.cancel()); a failed status becomes a typed error in exactly one place (#toError).
import * as grpc from '@grpc/grpc-js';
import type { cmd } from '@podvirt/proto';
import { CALL_DEADLINES, node, promiseClient, type PromiseMethods } from '@podvirt/proto';
import { ConnectError } from './connect-error.js';
import { NodeApiError, statusName } from './node-api-error.js';
import { openGuestStream, type GuestStreamClient, type GuestStreamKind, type OpenStreamOptions } from './stream/guest-stream-client.js';

export interface CallOptions {
  readonly timeoutMs: number;
  readonly signal?: AbortSignal | undefined;
}

// What the commands need from the node API.
export interface NodeApi {
  pause(vmi: node.VmiRef, options: CallOptions): Promise<node.OperationResponse>;
  unpause(vmi: node.VmiRef, options: CallOptions): Promise<node.OperationResponse>;
  freeze(request: node.FreezeRequest, options: CallOptions): Promise<node.OperationResponse>;
  unfreeze(vmi: node.VmiRef, options: CallOptions): Promise<node.OperationResponse>;
  softReboot(vmi: node.VmiRef, options: CallOptions): Promise<node.OperationResponse>;
  reset(vmi: node.VmiRef, options: CallOptions): Promise<node.OperationResponse>;
  guestOsInfo(vmi: node.VmiRef, options: CallOptions): Promise<cmd.GuestInfo>;
  userList(vmi: node.VmiRef, options: CallOptions): Promise<cmd.GuestUserList>;
  filesystemList(vmi: node.VmiRef, options: CallOptions): Promise<cmd.GuestFilesystemList>;
  list(request: node.ListRequest, options: CallOptions): Promise<node.ListResponse>;
}

/** The calls about one VMI: what the node API and the API server's subresources (subresource-client.ts) both answer. */
export type VmiApi = Omit<NodeApi, 'list'>;

export class NodeApiClient implements NodeApi {
  readonly #client: node.NodeClient;
  readonly #calls: PromiseMethods<typeof node.NodeService>;
  // The socket path or host:port, for messages.
  readonly #target: string;

  constructor(address: string, credentials: grpc.ChannelCredentials, target: string) {
    this.#client = new node.NodeClient(address, credentials);
    this.#calls = promiseClient(node.NodeService, this.#client, { timeoutMs: CALL_DEADLINES.longMs, toError: (err) => this.#toError(err) });
    this.#target = target;
  }

  pause(vmi: node.VmiRef, options: CallOptions): Promise<node.OperationResponse> {
    return this.#calls.pause(vmi, options);
  }

  unpause(vmi: node.VmiRef, options: CallOptions): Promise<node.OperationResponse> {
    return this.#calls.unpause(vmi, options);
  }

  freeze(request: node.FreezeRequest, options: CallOptions): Promise<node.OperationResponse> {
    return this.#calls.freeze(request, options);
  }

  unfreeze(vmi: node.VmiRef, options: CallOptions): Promise<node.OperationResponse> {
    return this.#calls.unfreeze(vmi, options);
  }

  softReboot(vmi: node.VmiRef, options: CallOptions): Promise<node.OperationResponse> {
    return this.#calls.softReboot(vmi, options);
  }

  reset(vmi: node.VmiRef, options: CallOptions): Promise<node.OperationResponse> {
    return this.#calls.reset(vmi, options);
  }

  guestOsInfo(vmi: node.VmiRef, options: CallOptions): Promise<cmd.GuestInfo> {
    return this.#calls.guestOsInfo(vmi, options);
  }

  userList(vmi: node.VmiRef, options: CallOptions): Promise<cmd.GuestUserList> {
    return this.#calls.userList(vmi, options);
  }

  filesystemList(vmi: node.VmiRef, options: CallOptions): Promise<cmd.GuestFilesystemList> {
    return this.#calls.filesystemList(vmi, options);
  }

  list(request: node.ListRequest, options: CallOptions): Promise<node.ListResponse> {
    return this.#calls.list(request, options);
  }

  openStream(kind: GuestStreamKind, options: OpenStreamOptions): GuestStreamClient {
    return openGuestStream(this.#client, kind, options);
  }

  // Idempotent: grpc-js ignores a second close.
  close(): void {
    this.#client.close();
  }

  #toError(err: grpc.ServiceError): Error {
    const name = statusName(err.code);
    const details = err.details === '' ? name : err.details;
    // A status the server sent arrives over a ready channel; UNAVAILABLE or a deadline on a
    // channel that never got ready means we never reached the server at all.
    const connected = this.#client.getChannel().getConnectivityState(false) === grpc.connectivityState.READY;
    if (!connected && name === 'UNAVAILABLE') {
      return new ConnectError('unreachable', this.#target, `cannot reach the node API at ${this.#target}: ${details}`, { cause: err });
    }
    if (!connected && name === 'DEADLINE_EXCEEDED') {
      return new ConnectError('timeout', this.#target, `no connection to the node API at ${this.#target} before the deadline`, { cause: err });
    }
    return new NodeApiError(name, details, { cause: err });
  }
}
