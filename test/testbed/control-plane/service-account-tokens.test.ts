import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { setImmediate as turn } from 'node:timers/promises';
import { pino } from 'pino';
import { REFRESH_AT, RETRY_MS, ServiceAccountTokens, TOKEN_TTL_SECONDS, type TokenRequestApi } from './service-account-tokens.js';

const LIFETIME_MS = TOKEN_TTL_SECONDS * 1000;

/** A TokenRequest API that hands out `token-1`, `token-2` … valid for their lifetime from the (mocked) clock; `failNext` refuses one call. */
function fakeApi(): { api: TokenRequestApi; bodies: unknown[]; failNext: () => void } {
  const bodies: unknown[] = [];
  let fail = false;
  const api = {
    readNode: () => Promise.resolve({ metadata: { name: 'node-a', uid: 'uid-a' } }),
    createNamespacedServiceAccountToken: (req: { body: unknown }) => {
      if (fail) {
        fail = false;
        return Promise.reject(new Error('apiserver away'));
      }
      bodies.push(req.body);
      return Promise.resolve({ status: { token: `token-${bodies.length}`, expirationTimestamp: new Date(Date.now() + LIFETIME_MS) } });
    },
  } as unknown as TokenRequestApi;
  return { api, bodies, failNext: () => (fail = true) };
}

/** Lets the refresh that a tick started (API call, write, rename: real I/O) finish and schedule the next; bounded. */
async function settle(done: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 2000; i++) {
    if (await done()) return drain();
    await turn();
  }
  assert.fail('the refresh did not finish');
}

/** A few turns of the event loop: enough for a refresh the tick started to have called the API. */
async function drain(): Promise<void> {
  for (let i = 0; i < 20; i++) await turn();
}

test('a token is rewritten at 80 % of its lifetime, retried 5 s after a failure, and no timer is left after close', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 1_000_000 });
  const dir = await mkdtemp(join(tmpdir(), 'sa-tokens-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'handler.token');
  const { api, bodies, failNext } = fakeApi();
  const tokens = new ServiceAccountTokens(api, pino({ level: 'silent' }));
  const content = (): Promise<string> => readFile(file, 'utf8');

  await tokens.keep({ namespace: 'podvirt', serviceAccount: 'podvirt-handler', boundNode: 'node-a', file });
  assert.equal(await content(), 'token-1');
  assert.deepEqual(bodies[0], {
    spec: { audiences: [], expirationSeconds: TOKEN_TTL_SECONDS, boundObjectRef: { apiVersion: 'v1', kind: 'Node', name: 'node-a', uid: 'uid-a' } },
  });

  const refreshAfter = LIFETIME_MS * REFRESH_AT;
  t.mock.timers.tick(refreshAfter - 1);
  await drain();
  assert.equal(bodies.length, 1, 'not before 80 % of the lifetime');
  t.mock.timers.tick(1);
  await settle(async () => (await content()) === 'token-2');
  assert.equal(bodies.length, 2);

  // The next refresh is due 80 % into the new token's lifetime; it fails once and is retried RETRY_MS later.
  failNext();
  t.mock.timers.tick(refreshAfter);
  await drain();
  assert.equal(bodies.length, 2, 'the failed call wrote nothing');
  assert.equal(await content(), 'token-2', 'the old token stays until a new one comes');
  t.mock.timers.tick(RETRY_MS - 1);
  await drain();
  assert.equal(bodies.length, 2, 'no retry before RETRY_MS');
  t.mock.timers.tick(1);
  await settle(async () => (await content()) === 'token-3');

  tokens.close();
  t.mock.timers.tick(10 * LIFETIME_MS);
  await drain();
  assert.equal(bodies.length, 3, 'no refresh after close');
});

test('an unbound token (the controller\'s) names no object', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'sa-tokens-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const { api, bodies } = fakeApi();
  const tokens = new ServiceAccountTokens(api, pino({ level: 'silent' }));
  t.after(() => tokens.close());
  await tokens.keep({ namespace: 'podvirt', serviceAccount: 'podvirt-controller', file: join(dir, 'controller.token') });
  assert.deepEqual(bodies, [{ spec: { audiences: [], expirationSeconds: TOKEN_TTL_SECONDS } }]);
});
