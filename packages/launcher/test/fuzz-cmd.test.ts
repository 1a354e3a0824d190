// Generated Cmd requests over real gRPC on a unix socket, against the real cmd server and
// domain manager over the leak-checking fake libvirt: whatever the bytes, every answer is OK or
// a status naming the problem — never INTERNAL or UNKNOWN, which would mean a crash inside.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { cmd } from '@podvirt/proto';
import fc from 'fast-check';
import { corpus, fuzzParameters } from './fuzz/fuzz-settings.js';
import { vmiArbitrary, vmiJsonArbitrary } from './fuzz/vmi-arbitrary.js';
import { harness, type Harness } from './harness.js';

const METHODS = ['sync', 'pause', 'unpause', 'freeze', 'unfreeze', 'softReboot', 'reset', 'shutdown', 'kill', 'delete', 'guestPing'] as const;
type Method = (typeof METHODS)[number];
const CRASHES = new Set([grpc.status.INTERNAL, grpc.status.UNKNOWN]);

/** The status code of one call (OK = 0) with its details. */
async function send(h: Harness, method: Method, vmiJson: Buffer, seconds: number): Promise<{ code: number; details: string }> {
  const c = h.cmd;
  const request: cmd.VmiRequest = { vmiJson };
  try {
    if (method === 'freeze') await c.freeze({ vmiJson, unfreezeTimeoutSeconds: seconds });
    else if (method === 'guestPing') await c.guestPing({ timeoutSeconds: seconds });
    else await c[method](request);
    return { code: grpc.status.OK, details: '' };
  } catch (err) {
    const e = err as grpc.ServiceError;
    return { code: e.code, details: e.details };
  }
}

function assertNoCrash(result: { code: number; details: string }, method: string, vmiJson: Buffer): void {
  assert.ok(!CRASHES.has(result.code), `${method} answered ${grpc.status[result.code]} "${result.details}" for ${vmiJson.toString('utf8').slice(0, 400)}`);
  if (result.code !== grpc.status.OK) assert.ok(result.details.length > 0, `${method}: a refusal says why`);
}

/** A generated VMI made this launcher's own, so that calls get past the identity check. */
const ownVmiJson = vmiArbitrary.map((vmi) => Buffer.from(JSON.stringify(vmi)));

describe('fuzz: Cmd service', () => {
  test('generated requests', async (t) => {
    const h = await harness(t);
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...METHODS),
        fc.oneof(ownVmiJson, vmiJsonArbitrary),
        fc.oneof(fc.integer({ min: 0, max: 600 }), fc.constantFrom(-1, 2_147_484, 2_147_483_647)),
        async (method, vmiJson, seconds) => assertNoCrash(await send(h, method, vmiJson, seconds), method, vmiJson),
      ),
      fuzzParameters(150),
    );
  });

  test('request bodies that are not protobuf, as a client in another language may send', async (t) => {
    const h = await harness(t);
    const raw = new grpc.Client(`unix:${h.server.socketPath}`, grpc.credentials.createInsecure());
    t.after(() => raw.close());
    const unaryPaths = Object.values(cmd.CmdService).filter((m) => !m.responseStream).map((m) => m.path);
    const send = (path: string, body: Buffer): Promise<{ code: number; details: string }> =>
      new Promise((resolve) => {
        raw.makeUnaryRequest(path, (b: Buffer) => b, (b: Buffer) => b, body, new grpc.Metadata(), { deadline: Date.now() + 5_000 }, (err) =>
          resolve(err ? { code: err.code, details: err.details } : { code: grpc.status.OK, details: '' }));
      });
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...unaryPaths), fc.uint8Array({ maxLength: 48 }), async (path, bytes) => {
        assertNoCrash(await send(path, Buffer.from(bytes)), path, Buffer.from(bytes));
      }),
      fuzzParameters(150),
    );
    // A wire-type error in the first field: what grpc-js itself answered INTERNAL for.
    const result = await send('/podvirt.cmd.v1.Cmd/Sync', Buffer.from([0x0a, 0xff]));
    assert.equal(result.code, grpc.status.INVALID_ARGUMENT, result.details);
    assert.match(result.details, /Sync: the request is not a valid protobuf message/);
    const watched = await new Promise<grpc.ServiceError>((resolve) => {
      const stream = raw.makeServerStreamRequest(cmd.CmdService.watchDomain.path, (b: Buffer) => b, (b: Buffer) => b, Buffer.from([0x0a, 0xff]));
      stream.on('data', () => undefined);
      stream.on('error', resolve);
    });
    assert.equal(watched.code, grpc.status.INVALID_ARGUMENT, watched.details);
  });

  for (const entry of corpus('cmd')) {
    test(`corpus: ${entry.file} (${entry.note})`, async (t) => {
      const h = await harness(t);
      const vmiJson = Buffer.from(entry.vmiJson ?? '');
      const method = (entry.method ?? 'sync') as Method;
      assertNoCrash(await send(h, method, vmiJson, 30), method, vmiJson);
    });
  }
});
