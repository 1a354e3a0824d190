// A handler's node API for podvirt-api's tests: a real gRPC server on 127.0.0.1 that records the
// calls it gets, answers the VMIs it knows, and echoes a console's input upper-cased. Stopped
// through shutdownGrpcServer, which the test registers.

import * as grpc from '@grpc/grpc-js';
import { node, shutdownGrpcServer } from '@podvirt/proto';
import { handlerConnection, HandlerCallError, type HandlerConnection, type HandlerNodes } from '../src/subresources/handler-nodes.js';

export interface FakeNodeApi {
  readonly calls: string[];
  /** Streams open now (a cancelled one is removed). */
  readonly openStreams: Set<string>;
  /** How each stream ended: `ended` (the client half-closed) or `cancelled`. */
  readonly streamEnds: string[];
  readonly nodes: HandlerNodes;
  close(): Promise<void>;
}

type Ref = { namespace: string; name: string } | undefined;

export async function startFakeNodeApi(refuse: ReadonlyMap<string, { code: grpc.status; details: string }> = new Map()): Promise<FakeNodeApi> {
  const calls: string[] = [];
  const openStreams = new Set<string>();
  const streamEnds: string[] = [];
  const server = new grpc.Server();
  const op = (method: string, ref: (req: unknown) => Ref) => (call: grpc.ServerUnaryCall<unknown, unknown>, cb: grpc.sendUnaryData<unknown>): void => {
    const r = ref(call.request);
    const key = `${r?.namespace ?? ''}/${r?.name ?? ''}`;
    calls.push(`${method} ${key}`);
    const refusal = refuse.get(key);
    if (refusal !== undefined) return cb({ code: refusal.code, details: refusal.details });
    if (method === 'guestOsInfo') return cb(null, { guestAgentVersion: '9.1', supportedCommands: [], hostname: 'guest1', os: { name: 'Alpine', kernelRelease: '6.6', version: '3.20', prettyName: 'Alpine 3.20', versionId: '3.20', kernelVersion: '#1', machine: 'x86_64', id: 'alpine' }, timezone: 'UTC,0', users: [], filesystems: [], fsFreezeStatus: '' });
    if (method === 'userList') return cb(null, { users: [{ userName: 'root', domain: '', loginTime: 1700000000.5 }] });
    if (method === 'filesystemList') return cb(null, { filesystems: [{ diskName: 'vda1', mountPoint: '/', fileSystemType: 'ext4', usedBytes: 10, totalBytes: 100, disks: [] }] });
    cb(null, { uid: 'uid-1' });
  };
  const stream = (kind: string) => (call: grpc.ServerDuplexStream<node.StreamInput, node.StreamOutput>): void => {
    let key = '';
    call.on('data', (msg: node.StreamInput): void => {
      const input = msg.input;
      if (input?.$case === 'open') {
        key = `${kind} ${input.value.vmi?.namespace ?? ''}/${input.value.vmi?.name ?? ''}`;
        calls.push(key);
        const refusal = refuse.get(`${input.value.vmi?.namespace ?? ''}/${input.value.vmi?.name ?? ''}`);
        if (refusal !== undefined) {
          call.emit('error', { code: refusal.code, details: refusal.details, metadata: new grpc.Metadata() });
          return;
        }
        openStreams.add(key);
        call.write({ output: { $case: 'attached', value: { uid: 'uid-1' } } });
      } else if (input?.$case === 'data') {
        call.write({ output: { $case: 'data', value: Buffer.from(input.value.toString().toUpperCase()) } });
      }
    });
    call.on('end', () => {
      openStreams.delete(key);
      streamEnds.push(`ended ${key}`);
      call.end();
    });
    call.on('cancelled', () => {
      openStreams.delete(key);
      streamEnds.push(`cancelled ${key}`);
    });
    call.on('error', () => undefined);
  };
  const vmiOf = (req: unknown): Ref => req as Ref;
  server.addService(node.NodeService, {
    pause: op('pause', vmiOf), unpause: op('unpause', vmiOf), unfreeze: op('unfreeze', vmiOf), softReboot: op('softReboot', vmiOf), reset: op('reset', vmiOf),
    freeze: op('freeze', (r: unknown) => { const req = r as node.FreezeRequest; return { namespace: req.vmi?.namespace ?? '', name: `${req.vmi?.name ?? ''} timeout=${req.unfreezeTimeoutSeconds}` }; }),
    guestOsInfo: op('guestOsInfo', vmiOf), userList: op('userList', vmiOf), filesystemList: op('filesystemList', vmiOf),
    list: (_call: unknown, cb: grpc.sendUnaryData<node.ListResponse>) => cb(null, { vmis: [] }),
    console: stream('console'), vnc: stream('vnc'),
  } satisfies grpc.UntypedServiceImplementation);
  const port = await new Promise<number>((resolve, reject) => server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))));
  const clients: node.NodeClient[] = [];
  const nodes: HandlerNodes = {
    async connect(nodeName: string): Promise<HandlerConnection> {
      if (nodeName === 'node-unknown') throw new HandlerCallError(grpc.status.UNAVAILABLE, nodeName, `no running podvirt-handler pod on node ${nodeName}`);
      // node-down: an address where nothing listens (this server's port once it is closed is not
      // safe to reuse; port 1 on loopback refuses).
      const client = new node.NodeClient(nodeName === 'node-down' ? '127.0.0.1:1' : `127.0.0.1:${port}`, grpc.credentials.createInsecure());
      clients.push(client);
      return handlerConnection(client, nodeName);
    },
    close(): void {
      for (const c of clients) c.close();
    },
  };
  return {
    calls, openStreams, streamEnds, nodes,
    async close() {
      nodes.close();
      await shutdownGrpcServer(server, 2_000);
    },
  };
}
