// The node API's TLS port with real TLS clients: a certificate from the client CA is not
// enough. The caller needs the clientAuth extended key usage and an allowed identity (subject
// CN or subjectAltName); the server's own certificate, a client certificate for someone else,
// one without clientAuth, one from a foreign CA and none at all are all refused, and the unix
// socket is unaffected. Renewed files are taken while the port serves, without a restart.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import * as grpc from '@grpc/grpc-js';
import { node } from '@podvirt/proto';
import { eventually } from '@podvirt/test-support';
import { nodeApiHarness, nodeCalls } from './node-api-harness.js';

const run = promisify(execFile);
const ALLOWED = ['CN=podvirtctl', 'URI:spiffe://podvirt.test/ops'];

test('TLS port: only certificates with clientAuth and an allowed identity get through', async (t) => {
  const h = await nodeApiHarness(t, { phase: 'Running' }, { certFile: 'server.crt', keyFile: 'server.key', clientCaFile: 'ca.crt', allowedClients: ALLOWED }, makePki);
  assert.ok(h.server.tlsPort > 0);
  const pem = (name: string): Promise<Buffer> => readFile(join(h.dir, name));
  const list = async (name?: string): Promise<node.ListResponse> => {
    const creds = grpc.credentials.createSsl(await pem('ca.crt'), name === undefined ? null : await pem(`${name}.key`), name === undefined ? null : await pem(`${name}.crt`));
    const client = new node.NodeClient(`localhost:${h.server.tlsPort}`, creds);
    t.after(() => client.close());
    return nodeCalls(client).list({ namespace: '' });
  };
  const denied = (details: RegExp) => (err: grpc.ServiceError): boolean => {
    assert.equal(grpc.status[err.code], 'PERMISSION_DENIED', err.details);
    assert.match(err.details, details);
    return true;
  };
  assert.deepEqual((await list('client')).vmis.map((v) => v.name), ['vm1']);
  assert.deepEqual((await list('spiffe')).vmis.map((v) => v.name), ['vm1'], 'allowed by a URI subjectAltName');
  // OpenSSL's purpose check already fails the handshake for a serverAuth-only certificate.
  await assert.rejects(list('server'), (err: grpc.ServiceError) => err.code === grpc.status.UNAVAILABLE);
  await assert.rejects(list('dual'), denied(/\(CN=server, DNS:localhost\) is not among the node API's allowed clients/));
  await assert.rejects(list('intruder'), denied(/CN=intruder.*not among/));
  await assert.rejects(list('no-eku'), denied(/lacks the clientAuth/));
  await assert.rejects(list(), (err: grpc.ServiceError) => err.code === grpc.status.UNAVAILABLE);
  await assert.rejects(list('foreign'), (err: grpc.ServiceError) => err.code === grpc.status.UNAVAILABLE);
  assert.deepEqual((await h.node.list({ namespace: '' })).vmis.map((v) => v.name), ['vm1'], 'the unix socket needs no certificate');
  assert.equal(h.launcher.calls.filter((c) => c === 'Pause').length, 0);
});

test('TLS port: a renewed CA and certificate written over the files are taken without a restart', async (t) => {
  const h = await nodeApiHarness(t, { phase: 'Running' }, { certFile: 'server.crt', keyFile: 'server.key', clientCaFile: 'ca.crt', allowedClients: ALLOWED, reloadMs: 50 }, makePki);
  const next = join(h.dir, 'next');
  await mkdir(next);
  await makePki(next);
  const list = async (dir: string, name: string): Promise<node.ListResponse> => {
    const pem = (file: string): Promise<Buffer> => readFile(join(dir, file));
    const client = new node.NodeClient(`localhost:${h.server.tlsPort}`, grpc.credentials.createSsl(await pem('ca.crt'), await pem(`${name}.key`), await pem(`${name}.crt`)));
    t.after(() => client.close());
    return nodeCalls(client).list({ namespace: '' });
  };
  assert.deepEqual((await list(h.dir, 'client')).vmis.map((v) => v.name), ['vm1']);
  await assert.rejects(list(next, 'client'), (err: grpc.ServiceError) => err.code === grpc.status.UNAVAILABLE, 'the next CA is not trusted yet');
  // As the kubelet updates a Secret volume: every file of the set replaced.
  for (const file of ['ca.crt', 'server.crt', 'server.key']) await copyFile(join(next, file), join(h.dir, file));
  await eventually(() => list(next, 'client').then((r) => r.vmis.length === 1, () => false), { what: 'a client of the renewed CA admitted', deadlineMs: 10_000 });
  await assert.rejects(list(h.dir, 'client'), (err: grpc.ServiceError) => err.code === grpc.status.UNAVAILABLE, 'the previous CA is no longer trusted');
  assert.equal(h.server.tlsPort > 0, true);
});

// A CA and the certificates above, made with the commands the handler README documents.
async function makePki(dir: string): Promise<void> {
  const ssl = (...args: string[]) => run('openssl', args, { cwd: dir });
  const ecKey = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  await ssl('req', '-x509', ...ecKey, '-keyout', 'ca.key', '-out', 'ca.crt', '-subj', '/CN=podvirt test CA', '-days', '1');
  await ssl('req', '-x509', ...ecKey, '-keyout', 'foreign-ca.key', '-out', 'foreign-ca.crt', '-subj', '/CN=foreign CA', '-days', '1');
  const certs: [string, string, string, string][] = [
    ['server', 'ca', '/CN=server', 'subjectAltName=DNS:localhost\nextendedKeyUsage=serverAuth\n'],
    ['dual', 'ca', '/CN=server', 'subjectAltName=DNS:localhost\nextendedKeyUsage=serverAuth,clientAuth\n'],
    ['client', 'ca', '/CN=podvirtctl', 'extendedKeyUsage=clientAuth\n'],
    ['spiffe', 'ca', '/CN=ops-robot', 'subjectAltName=URI:spiffe://podvirt.test/ops\nextendedKeyUsage=clientAuth\n'],
    ['intruder', 'ca', '/CN=intruder', 'extendedKeyUsage=clientAuth\n'],
    ['no-eku', 'ca', '/CN=podvirtctl', 'basicConstraints=CA:FALSE\n'],
    ['foreign', 'foreign-ca', '/CN=podvirtctl', 'extendedKeyUsage=clientAuth\n'],
  ];
  for (const [name, ca, subject, ext] of certs) {
    await writeFile(join(dir, `${name}.ext`), ext);
    await ssl('req', ...ecKey, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', subject);
    await ssl('x509', '-req', '-in', `${name}.csr`, '-CA', `${ca}.crt`, '-CAkey', `${ca}.key`, '-CAcreateserial', '-out', `${name}.crt`, '-days', '1', '-extfile', `${name}.ext`);
  }
}
