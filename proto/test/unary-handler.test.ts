// The one server side of a unary call (unaryHandler), the Cmd contract's deadlines on both
// ends (cmdDeadlineMs, promiseClient's per-method deadline) and the one server shutdown.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import {
  CALL_DEADLINES, CallEndedError, cmd, cmdDeadlineMs, ERROR_CODE_TRAILER, lenientService, promiseClient, shutdownGrpcServer, unaryHandler,
  type OpTrace, type SettledCall, type UnaryHandlerOptions, type UnaryMethodBody,
} from '../src/index.js';

class CodedError extends Error {
  constructor(readonly code: string, message: string) {
    super(message);
  }
}

function unimplemented(_call: unknown, callback: grpc.sendUnaryData<never>): void {
  callback({ code: grpc.status.UNIMPLEMENTED, details: 'not in this test' });
}

const toStatus: UnaryHandlerOptions['toStatus'] = (err) =>
  err instanceof CodedError
    ? { code: err.code === 'TIMEOUT' ? grpc.status.DEADLINE_EXCEEDED : grpc.status.FAILED_PRECONDITION, details: err.message, errorCode: err.code }
    : { code: grpc.status.INTERNAL, details: String(err) };

interface Served {
  readonly client: cmd.CmdClient;
  readonly settled: SettledCall[];
  readonly server: grpc.Server;
}

/** A Cmd server whose Ping and Kill run `ping` and `kill` through unaryHandler with `options`. */
async function serve(t: TestContext, options: Partial<UnaryHandlerOptions>, ping: UnaryMethodBody<cmd.Empty, cmd.Empty>, kill?: UnaryMethodBody<cmd.VmiRequest, cmd.Empty>): Promise<Served> {
  const dir = await mkdtemp(join(tmpdir(), 'podvirt-proto-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const settled: SettledCall[] = [];
  const all: UnaryHandlerOptions = { toStatus, onSettled: (call) => settled.push(call), ...options };
  const server = new grpc.Server();
  const impl: cmd.CmdServer = {
    ping: unaryHandler('ping', ping, all),
    kill: kill === undefined ? unimplemented : unaryHandler('kill', kill, all),
    watchDomain: (call) => call.end(),
    info: unimplemented, sync: unimplemented, pause: unimplemented, unpause: unimplemented, freeze: unimplemented, unfreeze: unimplemented,
    softReboot: unimplemented, reset: unimplemented, shutdown: unimplemented, delete: unimplemented, getDomain: unimplemented,
    getDomainStats: unimplemented, getGuestInfo: unimplemented, getUsers: unimplemented, getFilesystems: unimplemented,
    guestPing: unimplemented, prepareMigrationTarget: unimplemented, migrate: unimplemented, cancelMigration: unimplemented,
  };
  server.addService(lenientService(cmd.CmdService), impl);
  const path = join(dir, 's');
  await new Promise<void>((resolve, reject) =>
    server.bindAsync(`unix:${path}`, grpc.ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve())),
  );
  t.after(() => shutdownGrpcServer(server, 1_000));
  const client = new cmd.CmdClient(`unix:${path}`, grpc.credentials.createInsecure());
  t.after(() => client.close());
  return { client, settled, server };
}

function call(client: grpc.Client, path: string, body: Buffer, deadlineMs = 5_000): Promise<{ err: grpc.ServiceError | null }> {
  return new Promise((resolve) => {
    client.makeUnaryRequest(path, (b: Buffer) => b, (b: Buffer) => b, body, new grpc.Metadata(), { deadline: Date.now() + deadlineMs }, (err) => resolve({ err }));
  });
}

test('an answer and a failure: the failure leaves through toStatus, its own code in the trailer; each call is told to onSettled', async (t) => {
  let fail = false;
  const { client, settled } = await serve(t, {}, () => {
    if (fail) throw new CodedError('NO_AGENT', 'no guest agent');
    return {};
  });
  const calls = promiseClient(cmd.CmdService, client, { timeoutMs: 5_000 });
  assert.deepEqual(await calls.ping({}), {});
  fail = true;
  await assert.rejects(calls.ping({}), (err: grpc.ServiceError) =>
    err.code === grpc.status.FAILED_PRECONDITION && err.details === 'no guest agent' && err.metadata.get(ERROR_CODE_TRAILER)[0] === 'NO_AGENT');
  assert.deepEqual(settled.map((s) => [s.method, s.path, grpc.status[s.code], s.err instanceof CodedError]), [
    ['ping', '/podvirt.cmd.v1.Cmd/Ping', 'OK', false],
    ['ping', '/podvirt.cmd.v1.Cmd/Ping', 'FAILED_PRECONDITION', true],
  ]);
});

test('a server given onTrace hands each call a trace: the method marks its steps, onTrace gets them once answered; without it no trace is made', async (t) => {
  const seen: { method: string; steps: OpTrace['steps'] }[] = [];
  const traces: (OpTrace | undefined)[] = [];
  const ping: UnaryMethodBody<cmd.Empty, cmd.Empty> = async (_req, { trace }) => {
    traces.push(trace);
    trace?.mark('first');
    await new Promise((r) => setImmediate(r));
    trace?.mark('second');
    return {};
  };
  const traced = await serve(t, { onTrace: (method, trace) => seen.push({ method, steps: trace.steps }) }, ping);
  await promiseClient(cmd.CmdService, traced.client, { timeoutMs: 5_000 }).ping({});
  assert.deepEqual(seen.map((s) => [s.method, s.steps.map((x) => x.step)]), [['ping', ['first', 'second', 'answered']]]);
  const ms = seen[0]?.steps.map((x) => x.ms) ?? [];
  assert.ok(ms.every((v, i) => v >= 0 && (i === 0 || v >= (ms[i - 1] ?? 0))), `steps in order: ${ms.join(' ')}`);
  const plain = await serve(t, {}, ping);
  await promiseClient(cmd.CmdService, plain.client, { timeoutMs: 5_000 }).ping({});
  assert.equal(traces.length, 2);
  assert.equal(traces[1], undefined);
});

test('the server\'s own bound cuts a call that does not answer: the signal aborts with expired(ms), the client gets its status', async (t) => {
  let reason: unknown;
  const { client, settled } = await serve(t, { maxMs: 50, expired: (ms) => new CodedError('TIMEOUT', `deadline of ${ms} ms exceeded`) }, (_req, { signal }) =>
    new Promise<never>(() => signal.addEventListener('abort', () => (reason = signal.reason), { once: true })));
  const calls = promiseClient(cmd.CmdService, client, { timeoutMs: 60_000 });
  await assert.rejects(calls.ping({}), (err: grpc.ServiceError) =>
    err.code === grpc.status.DEADLINE_EXCEEDED && err.details === 'deadline of 50 ms exceeded' && err.metadata.get(ERROR_CODE_TRAILER)[0] === 'TIMEOUT');
  assert.ok(reason instanceof CodedError && reason.code === 'TIMEOUT', String(reason));
  assert.equal(settled[0]?.code, grpc.status.DEADLINE_EXCEEDED);
});

/** The reason a served call's signal aborts with when its client cancels, under `options`. */
async function reasonOfCancel(t: TestContext, options: Partial<UnaryHandlerOptions>): Promise<unknown> {
  let started!: () => void;
  const running = new Promise<void>((r) => (started = r));
  let aborted!: (reason: unknown) => void;
  const reason = new Promise<unknown>((r) => (aborted = r));
  const { client } = await serve(t, options, (_req, { signal }) => {
    started();
    return new Promise<cmd.Empty>((resolve) => signal.addEventListener('abort', () => {
      aborted(signal.reason);
      resolve({});
    }, { once: true }));
  });
  const ac = new AbortController();
  const pending = promiseClient(cmd.CmdService, client, { timeoutMs: 60_000 }).ping({}, { signal: ac.signal });
  await running;
  ac.abort();
  await assert.rejects(pending, (err: grpc.ServiceError) => err.code === grpc.status.CANCELLED);
  return reason;
}

test('a client that cancels aborts the signal with cancelled(), else with a coded CallEndedError', async (t) => {
  const own = await reasonOfCancel(t, { cancelled: () => new CodedError('CANCELLED', 'cancelled by the client') });
  assert.ok(own instanceof CodedError && own.code === 'CANCELLED', String(own));
  const fallback = await reasonOfCancel(t, {});
  assert.ok(fallback instanceof CallEndedError && fallback.code === 'PROTO_ERR_CALL_CANCELLED', String(fallback));
});

test('a body that does not decode is INVALID_ARGUMENT naming the method, before the method runs', async (t) => {
  let ran = 0;
  const { client, settled } = await serve(t, {}, () => ({}), () => {
    ran++;
    return {};
  });
  // Field 1 (vmi_json, length-delimited) claiming 10 bytes where there are none.
  const { err } = await call(client, '/podvirt.cmd.v1.Cmd/Kill', Buffer.from([0x0a, 0x0a]));
  assert.equal(err?.code, grpc.status.INVALID_ARGUMENT);
  assert.match(err.details, /^\/podvirt\.cmd\.v1\.Cmd\/Kill: the request is not a valid protobuf message/);
  assert.equal(ran, 0);
  assert.deepEqual(settled, []);
});

test('one deadline table for both ends: 5 s to read, 20 s to change, a minute to freeze; a test may shorten a class', () => {
  assert.deepEqual(CALL_DEADLINES, { shortMs: 5_000, longMs: 20_000, freezeMs: 60_000 });
  assert.deepEqual(['info', 'ping', 'getDomain', 'getGuestInfo'].map((m) => cmdDeadlineMs(m as 'info')), [5_000, 5_000, 5_000, 5_000]);
  assert.deepEqual(['sync', 'shutdown', 'migrate', 'unfreeze'].map((m) => cmdDeadlineMs(m as 'sync')), [20_000, 20_000, 20_000, 20_000]);
  assert.equal(cmdDeadlineMs('freeze'), 60_000);
  assert.equal(cmdDeadlineMs('sync', { ...CALL_DEADLINES, longMs: 700 }), 700);
});

test('the client takes each method\'s deadline from a function of its key', async (t) => {
  const { client } = await serve(t, {}, () => new Promise<never>(() => undefined));
  const asked: string[] = [];
  const calls = promiseClient(cmd.CmdService, client, {
    timeoutMs: (method) => {
      asked.push(method);
      return method === 'ping' ? 50 : 60_000;
    },
  });
  assert.ok(asked.includes('ping') && asked.includes('sync') && !asked.includes('watchDomain'), asked.join(','));
  await assert.rejects(calls.ping({}), (err: grpc.ServiceError) => err.code === grpc.status.DEADLINE_EXCEEDED);
});

test('shutdown lets a running call finish within the bound, and cuts it at the bound', async (t) => {
  let release!: () => void;
  let started!: () => void;
  const running = new Promise<void>((r) => (started = r));
  const { client, server } = await serve(t, {}, () => {
    started();
    return new Promise<cmd.Empty>((resolve) => (release = () => resolve({})));
  });
  const calls = promiseClient(cmd.CmdService, client, { timeoutMs: 60_000 });
  const finished = calls.ping({});
  await running;
  const closed = shutdownGrpcServer(server, 60_000);
  release();
  assert.deepEqual(await finished, {}, 'the running call finished');
  await closed;

  let reached!: () => void;
  const onServer = new Promise<void>((r) => (reached = r));
  const cut = await serve(t, {}, () => {
    reached();
    return new Promise<never>(() => undefined);
  });
  const stuck = promiseClient(cmd.CmdService, cut.client, { timeoutMs: 60_000 }).ping({});
  await onServer;
  await shutdownGrpcServer(cut.server, 50);
  await assert.rejects(stuck, (err: grpc.ServiceError) => err.code !== grpc.status.OK);
});
