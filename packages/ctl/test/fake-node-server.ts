// A fake podvirt-handler node API: a real grpc-js server on a unix socket in a temp dir,
// serving a small in-memory set of VMIs with the status codes node.proto documents.
// The VMI named "hang" never answers, so that tests can exercise deadlines and SIGINT.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { cmd, node, shutdownGrpcServer } from '@podvirt/proto';

export interface FakeVmi {
  summary: node.VmiSummary;
  guest: cmd.GuestInfo | undefined;
}

export interface FakeNodeServer {
  readonly dir: string;
  readonly socket: string;
  // The TCP port of the extra listener asked for with `tcp`, else 0.
  readonly port: number;
  readonly vmis: Map<string, FakeVmi>;
  // Every request received, in order, as [method, request].
  readonly calls: [string, unknown][];
  // Calls the client cancelled (SIGINT) or gave up on (deadline).
  readonly cancelled: string[];
  close(): Promise<void>;
}

const GUEST = cmd.GuestInfo.fromPartial({
  guestAgentVersion: '8.1.3',
  hostname: 'db-0',
  timezone: 'UTC, 0',
  os: { name: 'Debian GNU/Linux', prettyName: 'Debian GNU/Linux 12 (bookworm)', id: 'debian', versionId: '12',
    kernelRelease: '6.1.0-26-cloud-amd64', machine: 'x86_64' },
  supportedCommands: [{ name: 'guest-ping', enabled: true }, { name: 'guest-exec', enabled: false }],
  users: [{ userName: 'root', domain: '', loginTime: 1_700_000_000.25 }],
  filesystems: [
    { diskName: 'vda1', mountPoint: '/', fileSystemType: 'ext4', usedBytes: 1_073_741_824, totalBytes: 4_294_967_296, disks: ['vda'] },
  ],
  fsFreezeStatus: '',
});

function vmi(namespace: string, name: string, nodeName: string, guest: cmd.GuestInfo | undefined): [string, FakeVmi] {
  const summary = node.VmiSummary.fromPartial({
    namespace, name, uid: `uid-${name}`, phase: 'Running', nodeName, domainState: 'Running', domainReason: 'Booted',
    agentConnected: guest !== undefined,
  });
  return [`${namespace}/${name}`, { summary, guest }];
}

// `tcp` adds a listener on 127.0.0.1 (a free port) with those credentials, for the TLS port.
export async function startFakeNodeServer(tcp?: grpc.ServerCredentials): Promise<FakeNodeServer> {
  const dir = await mkdtemp(join(tmpdir(), 'podvirtctl-'));
  const socket = join(dir, 'node.sock');
  const vmis = new Map([
    vmi('default', 'testvmi', 'node-a', undefined),
    vmi('prod', 'db', 'node-a', GUEST),
    vmi('other', 'elsewhere', 'node-b', undefined),
    vmi('default', 'hang', 'node-a', undefined),
  ]);
  const calls: [string, unknown][] = [];
  const cancelled: string[] = [];
  const server = new grpc.Server();
  server.addService(node.NodeService, nodeImpl(vmis, calls, cancelled));
  let port = 0;
  try {
    await bind(server, `unix:${socket}`, grpc.ServerCredentials.createInsecure());
    if (tcp !== undefined) port = await bind(server, '127.0.0.1:0', tcp);
  } catch (err) {
    await shutdownGrpcServer(server, 0);
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    dir, socket, port, vmis, calls, cancelled,
    async close() {
      // A "hang" call still open would hold a graceful shutdown: it is cut after the bound.
      await shutdownGrpcServer(server, 500);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

function bind(server: grpc.Server, address: string, credentials: grpc.ServerCredentials): Promise<number> {
  return new Promise<number>((resolve, reject) =>
    server.bindAsync(address, credentials, (err, port) => (err ? reject(err) : resolve(port))),
  );
}

type Lookup = (ref: node.VmiRef | undefined) => FakeVmi | grpc.StatusObject;

function nodeImpl(vmis: Map<string, FakeVmi>, calls: [string, unknown][], cancelled: string[]): node.NodeServer {
  const lookup: Lookup = (ref) => {
    const found = vmis.get(`${ref?.namespace}/${ref?.name}`);
    if (found === undefined) return status(grpc.status.NOT_FOUND, `VMI ${ref?.namespace}/${ref?.name} not found on this node`);
    if (found.summary.nodeName !== 'node-a') {
      return status(grpc.status.FAILED_PRECONDITION, `VMI ${ref?.namespace}/${ref?.name} runs on node ${found.summary.nodeName}, not on node-a`);
    }
    return found;
  };
  // Runs `act` on the VMI the request names, or answers with the lookup's status.
  const unary = <Req, Res>(method: string, ref: (req: Req) => node.VmiRef | undefined, act: (vmi: FakeVmi, req: Req) => Res | grpc.StatusObject) =>
    (call: grpc.ServerUnaryCall<Req, Res>, callback: grpc.sendUnaryData<Res>): void => {
      calls.push([method, call.request]);
      const target = ref(call.request);
      if (target?.name === 'hang') {
        call.on('cancelled', () => cancelled.push(method));
        return;
      }
      const found = lookup(target);
      const result = 'summary' in found ? act(found, call.request) : found;
      if (isStatus(result)) callback(result);
      else callback(null, result);
    };
  const operation = (method: string, change: (vmi: FakeVmi) => grpc.StatusObject | undefined) =>
    unary<node.VmiRef, node.OperationResponse>(method, (req) => req, (found) => change(found) ?? { uid: found.summary.uid });
  const withGuest = <Res>(method: string, pick: (guest: cmd.GuestInfo) => Res) =>
    unary<node.VmiRef, Res>(method, (req) => req, (found) =>
      found.guest === undefined
        ? status(grpc.status.FAILED_PRECONDITION, `VMI ${found.summary.namespace}/${found.summary.name} has no guest agent connected`)
        : pick(found.guest),
    );
  // A guest that echoes what it is sent, upper-cased; input "poweroff" ends the stream (the VM stopped).
  const echoStream = (method: string) => (call: grpc.ServerDuplexStream<node.StreamInput, node.StreamOutput>): void => {
    call.once('data', (first: node.StreamInput) => {
      const ref = first.input?.$case === 'open' ? first.input.value.vmi : undefined;
      calls.push([method, ref]);
      if (ref?.name === 'hang') {
        call.on('cancelled', () => cancelled.push(method));
        return;
      }
      const found = lookup(ref);
      if (!('summary' in found)) {
        call.emit('error', found);
        return;
      }
      call.write({ output: { $case: 'attached', value: { uid: found.summary.uid } } });
      call.on('data', (msg: node.StreamInput) => {
        if (msg.input?.$case !== 'data') return;
        call.write({ output: { $case: 'data', value: Buffer.from(msg.input.value.toString('latin1').toUpperCase(), 'latin1') } });
        if (msg.input.value.toString().includes('poweroff')) call.end();
      });
      call.on('end', () => call.end());
    });
  };
  return {
    pause: operation('pause', (found) => {
      if (found.summary.paused) return status(grpc.status.FAILED_PRECONDITION, `VMI ${found.summary.name} is already paused`);
      found.summary.paused = true;
      return undefined;
    }),
    unpause: operation('unpause', (found) => {
      found.summary.paused = false;
      return undefined;
    }),
    unfreeze: operation('unfreeze', () => undefined),
    softReboot: operation('softReboot', () => undefined),
    reset: operation('reset', () => undefined),
    freeze: unary<node.FreezeRequest, node.OperationResponse>('freeze', (req) => req.vmi, (found) => ({ uid: found.summary.uid })),
    guestOsInfo: withGuest('guestOsInfo', (guest) => guest),
    userList: withGuest('userList', (guest) => cmd.GuestUserList.fromPartial({ users: guest.users })),
    filesystemList: withGuest('filesystemList', (guest) => cmd.GuestFilesystemList.fromPartial({ filesystems: guest.filesystems })),
    console: echoStream('console'),
    vnc: echoStream('vnc'),
    list: (call, callback) => {
      calls.push(['list', call.request]);
      const all = [...vmis.values()].map((entry) => entry.summary);
      callback(null, { vmis: all.filter((s) => call.request.namespace === '' || s.namespace === call.request.namespace) });
    },
  };
}

function status(code: grpc.status, details: string): grpc.StatusObject {
  return { code, details, metadata: new grpc.Metadata() };
}

function isStatus(value: unknown): value is grpc.StatusObject {
  return typeof value === 'object' && value !== null && 'code' in value && 'details' in value && 'metadata' in value;
}
