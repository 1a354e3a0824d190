// The promise wrapper and openNodeClient against the fake node API: typed errors for status
// codes, deadlines, AbortSignal → cancel on the wire, and the mutual-TLS port.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { test } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { eventually } from '@podvirt/test-support';
import { ConnectError } from '../src/connect-error.js';
import { NodeApiError } from '../src/node-api-error.js';
import { openNodeClient } from '../src/open-node-client.js';
import { startFakeNodeServer } from './fake-node-server.js';

const run = promisify(execFile);

test('status codes become NodeApiError with the status name; answers arrive decoded', async (t) => {
  const fake = await startFakeNodeServer();
  t.after(() => fake.close());
  const client = await openNodeClient({ kind: 'unix', path: fake.socket }, 5000);
  t.after(() => client.close());

  assert.deepEqual(await client.reset({ namespace: 'prod', name: 'db' }, { timeoutMs: 5000 }), { uid: 'uid-db' });
  await assert.rejects(client.pause({ namespace: 'prod', name: 'nope' }, { timeoutMs: 5000 }), (err: unknown) => {
    assert.ok(err instanceof NodeApiError);
    assert.deepEqual([err.code, err.status, err.message], ['CTL_ERR_NODE_API', 'NOT_FOUND', 'VMI prod/nope not found on this node']);
    return true;
  });
  await assert.rejects(client.guestOsInfo({ namespace: 'default', name: 'hang' }, { timeoutMs: 200 }), { status: 'DEADLINE_EXCEEDED' });
});

test('an aborted signal cancels the call on the server', async (t) => {
  const fake = await startFakeNodeServer();
  t.after(() => fake.close());
  const client = await openNodeClient({ kind: 'unix', path: fake.socket }, 5000);
  t.after(() => client.close());

  const controller = new AbortController();
  const pending = client.unpause({ namespace: 'default', name: 'hang' }, { timeoutMs: 10_000, signal: controller.signal });
  await eventually(() => fake.calls.length > 0, { what: 'the call at the server' });
  controller.abort();
  await assert.rejects(pending, { code: 'CTL_ERR_NODE_API', status: 'CANCELLED' });
  await eventually(() => fake.cancelled.length > 0, { what: 'the cancel at the server' });
  assert.deepEqual(fake.cancelled, ['unpause']);
  await assert.rejects(client.list({ namespace: '' }, { timeoutMs: 1000, signal: controller.signal }), { status: 'CANCELLED' });
});

test('the TLS port: a client certificate from the cluster CA gets through, a wrong CA cannot connect', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'podvirtctl-tls-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  await makePki(dir);
  const pem = (name: string): Promise<Buffer> => readFile(join(dir, name));
  const fake = await startFakeNodeServer(
    grpc.ServerCredentials.createSsl(await pem('ca.crt'), [{ cert_chain: await pem('server.crt'), private_key: await pem('server.key') }], true),
  );
  t.after(() => fake.close());

  const tls = { kind: 'tls', address: `localhost:${fake.port}`, cert: join(dir, 'client.crt'), key: join(dir, 'client.key') } as const;
  const good = await openNodeClient({ ...tls, ca: join(dir, 'ca.crt') }, 5000);
  t.after(() => good.close());
  const list = await good.list({ namespace: 'prod' }, { timeoutMs: 5000 });
  assert.deepEqual(list.vmis.map((vmi) => vmi.name), ['db']);

  const wrong = await openNodeClient({ ...tls, ca: join(dir, 'other-ca.crt') }, 5000);
  t.after(() => wrong.close());
  await assert.rejects(wrong.list({ namespace: '' }, { timeoutMs: 5000 }), (err: unknown) => {
    assert.ok(err instanceof ConnectError);
    assert.deepEqual([err.failure, err.target], ['unreachable', `localhost:${fake.port}`]);
    return true;
  });
});

// A cluster CA, a server certificate for localhost and a client certificate signed by it, plus
// an unrelated CA.
async function makePki(dir: string): Promise<void> {
  const ssl = (...args: string[]) => run('openssl', args, { cwd: dir });
  const ecKey = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  await ssl('req', '-x509', ...ecKey, '-keyout', 'ca.key', '-out', 'ca.crt', '-subj', '/CN=podvirt test CA', '-days', '1');
  await ssl('req', '-x509', ...ecKey, '-keyout', 'other-ca.key', '-out', 'other-ca.crt', '-subj', '/CN=other CA', '-days', '1');
  for (const [name, extra] of [['server', ['-addext', 'subjectAltName=DNS:localhost']], ['client', []]] as const) {
    await ssl('req', ...ecKey, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${name}`, ...extra);
    await ssl('x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', `${name}.crt`,
      '-days', '1', '-copy_extensions', 'copy');
  }
}
