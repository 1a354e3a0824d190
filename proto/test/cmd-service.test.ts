// The generated code against a real grpc-js server on a unix socket: unary calls, the
// WatchDomain server stream and status codes crossing the wire.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { CMD_VERSIONS, cmd, highestCommonVersion, promiseClient, shutdownGrpcServer } from '../src/index.js';

function unimplemented(_call: unknown, callback: grpc.sendUnaryData<never>): void {
  callback({ code: grpc.status.UNIMPLEMENTED, details: 'not in this test' });
}

test('Info negotiates, WatchDomain streams, errors keep their status code', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'podvirt-proto-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const socket = join(dir, 'launcher-sock');

  const domain = cmd.Domain.fromPartial({ name: 'default_vm', state: 'Running', reason: 'Booted' });
  const server = new grpc.Server();
  const impl: cmd.CmdServer = {
    info: (call, callback) => {
      const negotiated = highestCommonVersion(CMD_VERSIONS, call.request.clientVersions) ?? 0;
      callback(null, cmd.InfoResponse.fromPartial({ supportedVersions: [...CMD_VERSIONS], negotiatedVersion: negotiated }));
    },
    pause: (call, callback) => {
      const vmi = JSON.parse(call.request.vmiJson.toString()) as { metadata?: { name?: string } };
      callback({ code: grpc.status.FAILED_PRECONDITION, details: `VMI ${vmi.metadata?.name} is not running` });
    },
    watchDomain: (call) => {
      call.write({ event: { $case: 'noDomain', value: {} } });
      call.write({ event: { $case: 'domain', value: domain } });
      call.write({ event: { $case: 'notice', value: { type: 'Warning', reason: 'GuestPanicked', message: 'panic' } } });
      call.end();
    },
    sync: unimplemented, unpause: unimplemented, freeze: unimplemented, unfreeze: unimplemented,
    softReboot: unimplemented, reset: unimplemented, shutdown: unimplemented, kill: unimplemented,
    delete: unimplemented, getDomain: unimplemented, getDomainStats: unimplemented,
    getGuestInfo: unimplemented, getUsers: unimplemented, getFilesystems: unimplemented,
    guestPing: unimplemented, ping: unimplemented,
    prepareMigrationTarget: unimplemented, migrate: unimplemented, cancelMigration: unimplemented,
  };
  server.addService(cmd.CmdService, impl);
  await new Promise<void>((resolve, reject) =>
    server.bindAsync(`unix:${socket}`, grpc.ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve())),
  );
  t.after(() => shutdownGrpcServer(server, 1_000));

  const client = new cmd.CmdClient(`unix:${socket}`, grpc.credentials.createInsecure());
  t.after(() => client.close());

  const calls = promiseClient(cmd.CmdService, client, { timeoutMs: 5_000 });
  const info = await calls.info({ clientVersions: [1, 7] });
  assert.deepEqual(info.supportedVersions, [1]);
  assert.equal(info.negotiatedVersion, 1);

  const err = await calls.pause({ vmiJson: Buffer.from(JSON.stringify({ metadata: { name: 'vm' } })) }).then(
    () => assert.fail('pause unexpectedly succeeded'),
    (e: grpc.ServiceError) => e,
  );
  assert.equal(err.code, grpc.status.FAILED_PRECONDITION);
  assert.equal(err.details, 'VMI vm is not running');

  const events: string[] = [];
  for await (const ev of client.watchDomain({}) as AsyncIterable<cmd.WatchDomainEvent>) {
    if (ev.event?.$case === 'domain') events.push(`domain ${ev.event.value.state}/${ev.event.value.reason}`);
    else if (ev.event?.$case === 'notice') events.push(`notice ${ev.event.value.reason}`);
    else if (ev.event?.$case === 'noDomain') events.push('no domain');
  }
  assert.deepEqual(events, ['no domain', 'domain Running/Booted', 'notice GuestPanicked']);
});
