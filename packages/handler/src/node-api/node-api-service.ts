// NodeOperations as a grpc-js service, through the one unary adapter of @podvirt/proto: each
// method gets an AbortSignal that fires when the client cancels or its deadline passes, and
// every failure leaves through the one status table. `observe` sees each call's method and
// status name (metrics).

import { status } from '@grpc/grpc-js';
import { OP_TRACE_ON, unaryHandler, type node, type OpTrace, type UnaryMethodBody } from '@podvirt/proto';
import type { Logger } from 'pino';
import { GuestStreams } from '../guest-stream/guest-streams.js';
import type { NodeOperations } from './node-operations.js';
import { statusName, toWireStatus } from '../handler-error-status.js';

export type NodeApiObserver = (method: string, code: string) => void;

export function nodeApiService(
  ops: NodeOperations,
  log: Logger,
  observe?: NodeApiObserver,
  streams: GuestStreams = new GuestStreams({ resolver: ops, log, ...(observe === undefined ? {} : { observe }) }),
): node.NodeServer {
  // No bound of the handler's own: the client's deadline cancels the call, and each launcher
  // call inside it has the Cmd contract's bound.
  const unary = <Req, Res>(method: string, run: UnaryMethodBody<Req, Res>) => unaryHandler(method, run, {
    toStatus: toWireStatus,
    onSettled: ({ code, err }) => {
      observe?.(method, statusName(code));
      if (err === undefined) return;
      if (code === status.INTERNAL) log.warn({ err, method }, 'node API call failed');
      else log.debug({ err, method }, 'node API call refused');
    },
    // Only with PODVIRT_TRACE_OPS=1 (the stage benchmark): each step of the answer's path.
    ...(OP_TRACE_ON ? { onTrace: (call: string, trace: OpTrace) => log.info({ call, steps: trace.steps }, 'call traced') } : {}),
  });
  return {
    pause: unary('Pause', (req: node.VmiRef, { signal, trace }) => ops.pause(req, signal, trace)),
    unpause: unary('Unpause', (req: node.VmiRef, { signal, trace }) => ops.unpause(req, signal, trace)),
    freeze: unary('Freeze', (req: node.FreezeRequest, { signal }) => ops.freeze(req, signal)),
    unfreeze: unary('Unfreeze', (req: node.VmiRef, { signal }) => ops.unfreeze(req, signal)),
    softReboot: unary('SoftReboot', (req: node.VmiRef, { signal }) => ops.softReboot(req, signal)),
    reset: unary('Reset', (req: node.VmiRef, { signal }) => ops.reset(req, signal)),
    guestOsInfo: unary('GuestOsInfo', (req: node.VmiRef, { signal }) => ops.guestOsInfo(req, signal)),
    userList: unary('UserList', (req: node.VmiRef, { signal }) => ops.userList(req, signal)),
    filesystemList: unary('FilesystemList', (req: node.VmiRef, { signal }) => ops.filesystemList(req, signal)),
    list: unary('List', (req: node.ListRequest) => ops.list(req)),
    console: streams.handler('console'),
    vnc: streams.handler('vnc'),
  };
}
