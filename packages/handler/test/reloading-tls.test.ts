// The node API's TLS files re-read: a changed, usable set reaches the listeners; an unchanged one
// does not; a broken one (the key not the certificate's, a file missing) is kept out and said once.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { ReloadingTlsFiles } from '../src/node-api/reloading-tls.js';

const run = promisify(execFile);

async function selfSigned(dir: string, name: string): Promise<void> {
  await run('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.crt`, '-subj', `/CN=${name}`, '-days', '1'], { cwd: dir });
}

test('ReloadingTlsFiles: a usable change is handed over, no change is not, a broken one is kept out and told once', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'pvh-tls-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  await Promise.all(['a', 'b'].map((n) => selfSigned(dir, n)));
  const use = async (name: string): Promise<void> => {
    await copyFile(join(dir, `${name}.crt`), join(dir, 'tls.crt'));
    await copyFile(join(dir, `${name}.key`), join(dir, 'tls.key'));
    await copyFile(join(dir, `${name}.crt`), join(dir, 'ca.crt'));
  };
  await use('a');
  const events: Array<{ reloaded: boolean; reason?: string }> = [];
  // A long interval: the test drives reload() itself.
  const files = new ReloadingTlsFiles({ certFile: join(dir, 'tls.crt'), keyFile: join(dir, 'tls.key'), clientCaFile: join(dir, 'ca.crt') }, 3_600_000, (e) => events.push(e));
  await files.load();
  const certs: string[] = [];
  const cas: string[] = [];
  const onIdentity = (u: { certificate: Buffer } | null): void => void certs.push(u?.certificate.toString() ?? 'null');
  const onCa = (u: { caCertificate: Buffer } | null): void => void cas.push(u?.caCertificate.toString() ?? 'null');
  files.addIdentityCertificateListener(onIdentity);
  files.addCaCertificateListener(onCa);
  t.after(() => {
    files.removeIdentityCertificateListener(onIdentity);
    files.removeCaCertificateListener(onCa);
  });
  await new Promise((resolve) => process.nextTick(resolve));
  assert.equal(certs.length, 1, 'the set loaded at start, given on subscription');
  await files.reload();
  assert.equal(certs.length, 1, 'unchanged files hand nothing over');
  assert.equal(events.length, 0);

  // The key of another certificate: no TLS context can be made of it.
  await copyFile(join(dir, 'b.key'), join(dir, 'tls.key'));
  await files.reload();
  await files.reload();
  assert.equal(certs.length, 1, 'a broken set is kept out');
  assert.equal(events.length, 1, 'and said once');
  assert.equal(events[0]?.reloaded, false);
  assert.match(events[0]?.reason ?? '', /--tls-cert .*tls\.crt, --tls-key .*tls\.key/);

  await use('b');
  await files.reload();
  assert.equal(certs.length, 2);
  assert.equal(cas.length, 2);
  assert.match(certs[1] ?? '', /BEGIN CERTIFICATE/);
  assert.notEqual(certs[1], certs[0]);
  assert.deepEqual(events.at(-1), { reloaded: true });

  await rm(join(dir, 'ca.crt'));
  await files.reload();
  assert.equal(certs.length, 2, 'a missing file is kept out');
  assert.match(events.at(-1)?.reason ?? '', /cannot read --tls-client-ca/);
});

test('ReloadingTlsFiles: load() names the flag of a file it cannot use', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'pvh-tls-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const files = new ReloadingTlsFiles({ certFile: join(dir, 'tls.crt'), keyFile: join(dir, 'tls.key'), clientCaFile: join(dir, 'ca.crt') }, 1_000, () => undefined);
  await assert.rejects(files.load(), (err: Error & { code?: string }) => err.code === 'HANDLER_ERR_LISTEN' && /cannot read --tls-client-ca/.test(err.message));
});
