// The one promise client: typed methods from the service definition, a deadline on every call,
// AbortSignal → call.cancel(), failures through the caller's toError, every call observed.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { cmd, promiseClient, shutdownGrpcServer } from '../src/index.js';

class WrappedError extends Error {
  constructor(readonly method: string, readonly grpcCode: grpc.status) {
    super(`${method}: ${grpc.status[grpcCode]}`);
  }
}

function unimplemented(_call: unknown, callback: grpc.sendUnaryData<never>): void {
  callback({ code: grpc.status.UNIMPLEMENTED, details: 'not in this test' });
}

/** A Cmd server whose Ping never answers until released; Info answers at once. */
async function server(t: TestContext): Promise<{ client: cmd.CmdClient; pings: () => number }> {
  const dir = await mkdtemp(join(tmpdir(), 'podvirt-proto-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const held: grpc.sendUnaryData<cmd.Empty>[] = [];
  const srv = new grpc.Server();
  const impl: cmd.CmdServer = {
    info: (_call, callback) => callback(null, cmd.InfoResponse.fromPartial({ supportedVersions: [1], negotiatedVersion: 1 })),
    ping: (_call, callback) => held.push(callback),
    watchDomain: (call) => call.end(),
    sync: unimplemented, pause: unimplemented, unpause: unimplemented, freeze: unimplemented, unfreeze: unimplemented,
    softReboot: unimplemented, reset: unimplemented, shutdown: unimplemented, kill: unimplemented,
    delete: unimplemented, getDomain: unimplemented, getDomainStats: unimplemented,
    getGuestInfo: unimplemented, getUsers: unimplemented, getFilesystems: unimplemented, guestPing: unimplemented,
    prepareMigrationTarget: unimplemented, migrate: unimplemented, cancelMigration: unimplemented,
  };
  srv.addService(cmd.CmdService, impl);
  await new Promise<void>((resolve, reject) =>
    srv.bindAsync(`unix:${join(dir, 's')}`, grpc.ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve())),
  );
  t.after(() => {
    for (const cb of held) cb(null, {});
    return shutdownGrpcServer(srv, 1_000);
  });
  const client = new cmd.CmdClient(`unix:${join(dir, 's')}`, grpc.credentials.createInsecure());
  t.after(() => client.close());
  return { client, pings: () => held.length };
}

test('typed calls with a default deadline, a per-call one, cancellation and one error mapping', async (t) => {
  const { client, pings } = await server(t);
  const observed: string[] = [];
  const calls = promiseClient(cmd.CmdService, client, {
    timeoutMs: 5_000,
    toError: (err, method) => new WrappedError(method, err.code),
    observe: (method, code) => observed.push(`${method} ${code}`),
  });
  assert.equal((await calls.info({ clientVersions: [1] })).negotiatedVersion, 1);

  await assert.rejects(calls.ping({}, { timeoutMs: 50 }), (e: unknown) => e instanceof WrappedError && e.method === 'Ping' && e.grpcCode === grpc.status.DEADLINE_EXCEEDED);

  const ac = new AbortController();
  const pending = calls.ping({}, { signal: ac.signal });
  // The call is on the server before it is cancelled.
  while (pings() < 2) await new Promise((r) => setImmediate(r));
  ac.abort();
  await assert.rejects(pending, (e: unknown) => e instanceof WrappedError && e.grpcCode === grpc.status.CANCELLED);

  await assert.rejects(calls.ping({}, { signal: AbortSignal.abort() }), (e: unknown) => e instanceof WrappedError && e.grpcCode === grpc.status.CANCELLED);
  assert.equal(pings(), 2, 'an aborted signal never reaches the server');
  assert.deepEqual(observed, ['Info OK', 'Ping DEADLINE_EXCEEDED', 'Ping CANCELLED']);
});

test('without toError a failure is the ServiceError itself; streaming methods are not wrapped', async (t) => {
  const { client } = await server(t);
  const calls = promiseClient(cmd.CmdService, client, { timeoutMs: 5_000 });
  await assert.rejects(calls.sync({ vmiJson: Buffer.from('{}') }), (e: grpc.ServiceError) => e.code === grpc.status.UNIMPLEMENTED);
  assert.equal('watchDomain' in calls, false);
});
