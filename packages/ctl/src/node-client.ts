// The node API as promises. grpc-js knows neither promises nor AbortSignal: every call here
// gets a deadline, an aborted signal becomes call.cancel(), and a failed status becomes a
// typed error in exactly one place (#toError).
import * as grpc from '@grpc/grpc-js';
import type { cmd } from '@podvirt/proto';
import { node } from '@podvirt/proto';
import { ConnectError } from './connect-error.js';
import { NodeApiError, statusName } from './node-api-error.js';

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

type UnaryMethod<Req, Res> = (
  request: Req,
  metadata: grpc.Metadata,
  options: Partial<grpc.CallOptions>,
  callback: (error: grpc.ServiceError | null, response: Res) => void,
) => grpc.ClientUnaryCall;

export class NodeApiClient implements NodeApi {
  readonly #client: node.NodeClient;
  // The socket path or host:port, for messages.
  readonly #target: string;

  constructor(address: string, credentials: grpc.ChannelCredentials, target: string) {
    this.#client = new node.NodeClient(address, credentials);
    this.#target = target;
  }

  pause(vmi: node.VmiRef, options: CallOptions): Promise<node.OperationResponse> {
    return this.#unary(this.#client.pause, vmi, options);
  }

  unpause(vmi: node.VmiRef, options: CallOptions): Promise<node.OperationResponse> {
    return this.#unary(this.#client.unpause, vmi, options);
  }

  freeze(request: node.FreezeRequest, options: CallOptions): Promise<node.OperationResponse> {
    return this.#unary(this.#client.freeze, request, options);
  }

  unfreeze(vmi: node.VmiRef, options: CallOptions): Promise<node.OperationResponse> {
    return this.#unary(this.#client.unfreeze, vmi, options);
  }

  softReboot(vmi: node.VmiRef, options: CallOptions): Promise<node.OperationResponse> {
    return this.#unary(this.#client.softReboot, vmi, options);
  }

  reset(vmi: node.VmiRef, options: CallOptions): Promise<node.OperationResponse> {
    return this.#unary(this.#client.reset, vmi, options);
  }

  guestOsInfo(vmi: node.VmiRef, options: CallOptions): Promise<cmd.GuestInfo> {
    return this.#unary(this.#client.guestOsInfo, vmi, options);
  }

  userList(vmi: node.VmiRef, options: CallOptions): Promise<cmd.GuestUserList> {
    return this.#unary(this.#client.userList, vmi, options);
  }

  filesystemList(vmi: node.VmiRef, options: CallOptions): Promise<cmd.GuestFilesystemList> {
    return this.#unary(this.#client.filesystemList, vmi, options);
  }

  list(request: node.ListRequest, options: CallOptions): Promise<node.ListResponse> {
    return this.#unary(this.#client.list, request, options);
  }

  // Idempotent: grpc-js ignores a second close.
  close(): void {
    this.#client.close();
  }

  #unary<Req, Res>(method: UnaryMethod<Req, Res>, request: Req, { timeoutMs, signal }: CallOptions): Promise<Res> {
    return new Promise<Res>((resolve, reject) => {
      if (signal?.aborted === true) {
        reject(new NodeApiError('CANCELLED', 'cancelled before the call started', { cause: signal.reason }));
        return;
      }
      const onAbort = (): void => call.cancel();
      const call = method.call(this.#client, request, new grpc.Metadata(), { deadline: Date.now() + timeoutMs }, (err, res) => {
        signal?.removeEventListener('abort', onAbort);
        if (err === null) resolve(res);
        else reject(this.#toError(err));
      });
      signal?.addEventListener('abort', onAbort, { once: true });
    });
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
