// NodeOperations as a grpc-js service: each unary handler gets an AbortSignal that fires when
// the client cancels or its deadline passes, and every failure leaves through the one status
// table. `observe` sees each call's method and status name (metrics).

import { status, type sendUnaryData, type ServerUnaryCall } from '@grpc/grpc-js';
import type { node } from '@podvirt/proto';
import type { Logger } from 'pino';
import { GuestStreams } from '../guest-stream/guest-streams.js';
import type { NodeOperations } from './node-operations.js';
import { statusName, toStatusObject } from './node-api-status.js';

export type NodeApiObserver = (method: string, code: string) => void;

export function nodeApiService(
  ops: NodeOperations,
  log: Logger,
  observe?: NodeApiObserver,
  streams: GuestStreams = new GuestStreams({ resolver: ops, log, ...(observe === undefined ? {} : { observe }) }),
): node.NodeServer {
  const unary = <Req, Res>(method: string, run: (req: Req, signal: AbortSignal) => Promise<Res> | Res) =>
    (call: ServerUnaryCall<Req, Res>, callback: sendUnaryData<Res>): void => {
      const abort = new AbortController();
      const onCancel = (): void => abort.abort(new Error('the client cancelled the call'));
      call.once('cancelled', onCancel);
      void (async () => {
        try {
          const res = await run(call.request, abort.signal);
          observe?.(method, 'OK');
          callback(null, res);
        } catch (err) {
          const st = toStatusObject(err);
          observe?.(method, statusName(st.code));
          if (st.code === status.INTERNAL) log.warn({ err, method }, 'node API call failed');
          else log.debug({ err, method }, 'node API call refused');
          callback(st);
        } finally {
          call.removeListener('cancelled', onCancel);
        }
      })();
    };
  return {
    pause: unary('Pause', (req: node.VmiRef, signal) => ops.pause(req, signal)),
    unpause: unary('Unpause', (req: node.VmiRef, signal) => ops.unpause(req, signal)),
    freeze: unary('Freeze', (req: node.FreezeRequest, signal) => ops.freeze(req, signal)),
    unfreeze: unary('Unfreeze', (req: node.VmiRef, signal) => ops.unfreeze(req, signal)),
    softReboot: unary('SoftReboot', (req: node.VmiRef, signal) => ops.softReboot(req, signal)),
    reset: unary('Reset', (req: node.VmiRef, signal) => ops.reset(req, signal)),
    guestOsInfo: unary('GuestOsInfo', (req: node.VmiRef, signal) => ops.guestOsInfo(req, signal)),
    userList: unary('UserList', (req: node.VmiRef, signal) => ops.userList(req, signal)),
    filesystemList: unary('FilesystemList', (req: node.VmiRef, signal) => ops.filesystemList(req, signal)),
    list: unary('List', (req: node.ListRequest) => ops.list(req)),
    console: streams.handler('console'),
    vnc: streams.handler('vnc'),
  };
}
