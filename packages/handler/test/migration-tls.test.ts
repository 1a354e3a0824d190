// The migration certificates are checked when loaded: missing files, a key that is not the
// certificate's, a certificate from another CA, a "CA" that is not one, and an expired
// certificate are each refused naming the file, with the code callers match on.
import assert from 'node:assert/strict';
import { copyFile, mkdtemp, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { makeMigrationCertificates } from '@podvirt/test-support';
import { isHandlerError } from '../src/handler-error.js';
import { loadMigrationTls, loadMigrationTlsIfPresent } from '../src/migration-proxy/migration-tls.js';

async function certs(t: TestContext): Promise<{ a: string; b: string; foreign: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'pvh-migtls-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const ours = await makeMigrationCertificates(join(dir, 'ours'), ['a', 'b']);
  const theirs = await makeMigrationCertificates(join(dir, 'theirs'), ['a'], { caName: 'someone else' });
  return { a: ours.get('a') ?? '', b: ours.get('b') ?? '', foreign: theirs.get('a') ?? '' };
}

const refused = (file: string, why: RegExp) => (err: unknown): boolean => {
  assert.ok(isHandlerError(err, 'HANDLER_ERR_MIGRATION_TLS'), String(err));
  assert.ok(err.message.includes(file), err.message);
  assert.match(err.message, why);
  return true;
};

test('a matching set loads', async (t) => {
  const { a } = await certs(t);
  const tls = await loadMigrationTls(a);
  assert.match(tls.cert.toString(), /BEGIN CERTIFICATE/);
  assert.match(tls.key.toString(), /PRIVATE KEY/);
});

test('a missing directory or file is refused naming the file', async (t) => {
  const { a } = await certs(t);
  await assert.rejects(loadMigrationTls(join(a, 'nope')), refused(join(a, 'nope', 'ca.crt'), /cannot read/));
  await unlink(join(a, 'tls.key'));
  await assert.rejects(loadMigrationTls(a), refused('tls.key', /ENOENT/));
});

test('a key that is not the certificate\'s is refused', async (t) => {
  const { a, b } = await certs(t);
  await copyFile(join(b, 'tls.key'), join(a, 'tls.key'));
  await assert.rejects(loadMigrationTls(a), refused('tls.key', /not the one of tls\.crt/));
});

test('a certificate from another CA is refused', async (t) => {
  const { a, foreign } = await certs(t);
  await copyFile(join(foreign, 'tls.crt'), join(a, 'tls.crt'));
  await copyFile(join(foreign, 'tls.key'), join(a, 'tls.key'));
  await assert.rejects(loadMigrationTls(a), refused('tls.crt', /not signed by ca\.crt/));
});

test('a ca.crt that is no CA, garbage, and an expired certificate are refused', async (t) => {
  const { a, b } = await certs(t);
  await copyFile(join(b, 'tls.crt'), join(a, 'ca.crt'));
  await assert.rejects(loadMigrationTls(a), refused('ca.crt', /not a CA certificate/));
  await writeFile(join(a, 'ca.crt'), 'not a certificate\n');
  await assert.rejects(loadMigrationTls(a), refused('ca.crt', /not a PEM certificate/));
  await assert.rejects(loadMigrationTls(b, new Date(Date.now() + 400 * 24 * 3600_000)), refused('ca.crt', /valid from .* to/));
});

test('no certificate files at all is "not set up"; one of them missing is a broken set', async (t) => {
  const { a } = await certs(t);
  assert.equal(await loadMigrationTlsIfPresent(join(a, 'no-such-dir')), undefined);
  assert.ok(await loadMigrationTlsIfPresent(a));
  await unlink(join(a, 'ca.crt'));
  await assert.rejects(loadMigrationTlsIfPresent(a), refused('ca.crt', /cannot read/));
});
