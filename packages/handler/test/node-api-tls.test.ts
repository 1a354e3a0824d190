// The node API's TLS port demands a client certificate signed by --tls-client-ca: with one the
// call goes through, without one (or from another CA) the handshake fails.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import * as grpc from '@grpc/grpc-js';
import { node } from '@podvirt/proto';
import { nodeApiHarness, unary } from './node-api-harness.js';

const run = promisify(execFile);

test('TLS port: a client certificate from the CA gets through; none, or a foreign one, does not', async (t) => {
  const h = await nodeApiHarness(t, { phase: 'Running' }, { certFile: 'server.crt', keyFile: 'server.key', clientCaFile: 'ca.crt' }, makePki);
  assert.ok(h.server.tlsPort > 0);
  const pem = (name: string): Promise<Buffer> => readFile(join(h.dir, name));
  const connect = async (key?: string, cert?: string): Promise<node.NodeClient> => {
    const creds = grpc.credentials.createSsl(await pem('ca.crt'), key === undefined ? null : await pem(key), cert === undefined ? null : await pem(cert));
    const client = new node.NodeClient(`localhost:${h.server.tlsPort}`, creds);
    t.after(() => client.close());
    return client;
  };
  const list = await unary<node.ListResponse>(await connect('client.key', 'client.crt'), 'list', { namespace: '' });
  assert.deepEqual(list.vmis.map((v) => v.name), ['vm1']);
  await assert.rejects(unary(await connect(), 'list', { namespace: '' }), (err: grpc.ServiceError) => err.code === grpc.status.UNAVAILABLE);
  await assert.rejects(unary(await connect('foreign.key', 'foreign.crt'), 'list', { namespace: '' }), (err: grpc.ServiceError) => err.code === grpc.status.UNAVAILABLE);
});

// A CA, a server certificate for localhost and a client certificate signed by it, and a client
// certificate from a foreign CA; paths relative to `dir`.
async function makePki(dir: string): Promise<void> {
  const ssl = (...args: string[]) => run('openssl', args, { cwd: dir });
  const ecKey = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  await ssl('req', '-x509', ...ecKey, '-keyout', 'ca.key', '-out', 'ca.crt', '-subj', '/CN=podvirt test CA', '-days', '1');
  await ssl('req', '-x509', ...ecKey, '-keyout', 'foreign-ca.key', '-out', 'foreign-ca.crt', '-subj', '/CN=foreign CA', '-days', '1');
  const certs = [['server', 'ca', ['-addext', 'subjectAltName=DNS:localhost']], ['client', 'ca', []], ['foreign', 'foreign-ca', []]] as const;
  for (const [name, ca, extra] of certs) {
    await ssl('req', ...ecKey, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${name}`, ...extra);
    await ssl('x509', '-req', '-in', `${name}.csr`, '-CA', `${ca}.crt`, '-CAkey', `${ca}.key`, '-CAcreateserial', '-out', `${name}.crt`, '-days', '1', '-copy_extensions', 'copy');
  }
}
