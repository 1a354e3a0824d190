// The node API's certificates podvirt-api makes: the CA Secret, the Secret the handlers mount
// (no CA key in it), podvirt-api's client certificate; their renewal; and a real mutual-TLS call
// with them, the handler's name checked against the CA rather than the address dialled.
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { describe, test } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { node, shutdownGrpcServer } from '@podvirt/proto';
import { pino } from 'pino';
import { KubeHandlerNodes } from '../src/subresources/handler-nodes.js';
import { issueServingCert, splitPemBundle } from '../src/tls/certificate-authority.js';
import { NODE_API_CA_PROPAGATION_MS, NODE_API_CLIENT_NAME, NODE_API_SERVER_NAME, NodeApiCertificates, type NodeApiClientTls } from '../src/tls/node-api-certificates.js';
import { DEFAULT_ROTATION } from '../src/tls/rotation-plan.js';
import { FakeApi } from './fake-kube-api.js';

const HOUR = 3_600_000;
const CA_SECRET = '/api/v1/namespaces/podvirt/secrets/podvirt-node-api-ca';
const HANDLER_SECRET = '/api/v1/namespaces/podvirt/secrets/podvirt-handler-certs';

function keeper(api: FakeApi, clock: { now: Date }, seen: NodeApiClientTls[]): NodeApiCertificates {
  return new NodeApiCertificates({
    client: api.client(), namespace: 'podvirt', caSecretName: 'podvirt-node-api-ca', handlerSecretName: 'podvirt-handler-certs',
    policy: DEFAULT_ROTATION, log: pino({ level: 'silent' }), now: () => clock.now, onClientTls: (tls) => seen.push(tls),
  });
}

function handlerSecret(api: FakeApi): Record<string, string> {
  const data = (api.objects.get(HANDLER_SECRET)?.['data'] ?? {}) as Record<string, string>;
  return Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()]));
}

const issuedBy = (cert: string, ca: string): boolean => new X509Certificate(cert).checkIssued(new X509Certificate(ca));

describe('NodeApiCertificates', () => {
  test('the first round makes the CA, the handlers\' Secret without the CA key, and the client certificate; the next changes nothing', async () => {
    const api = new FakeApi();
    const clock = { now: new Date('2026-01-01T00:00:00Z') };
    const seen: NodeApiClientTls[] = [];
    const k = keeper(api, clock, seen);
    await k.ensure();
    assert.deepEqual(api.writes, [`POST ${CA_SECRET}`, `POST ${HANDLER_SECRET}`]);
    const h = handlerSecret(api);
    assert.deepEqual(Object.keys(h).sort(), ['ca.crt', 'tls.crt', 'tls.key']);
    assert.equal(api.objects.get(HANDLER_SECRET)?.['type'], 'kubernetes.io/tls');
    const serving = new X509Certificate(h['tls.crt'] ?? '');
    assert.equal(serving.subjectAltName, `DNS:${NODE_API_SERVER_NAME}`);
    assert.ok(issuedBy(h['tls.crt'] ?? '', h['ca.crt'] ?? ''));
    assert.equal(seen.length, 1);
    const client = new X509Certificate(seen[0]?.cert ?? '');
    assert.equal(client.subject, `CN=${NODE_API_CLIENT_NAME}`);
    assert.ok(issuedBy(seen[0]?.cert ?? '', h['ca.crt'] ?? ''));
    assert.equal(seen[0]?.ca, h['ca.crt']);
    clock.now = new Date(clock.now.getTime() + HOUR);
    await k.ensure();
    assert.equal(api.writes.length, 2);
    assert.equal(seen.length, 1);
  });

  test('a handlers\' Secret changed or removed by someone else is written again at the next round', async () => {
    const api = new FakeApi();
    const clock = { now: new Date('2026-01-01T00:00:00Z') };
    const k = keeper(api, clock, []);
    await k.ensure();
    const before = handlerSecret(api);
    api.objects.delete(HANDLER_SECRET);
    await k.ensure();
    assert.deepEqual(handlerSecret(api), before);
    const stored = api.objects.get(HANDLER_SECRET);
    assert.ok(stored !== undefined);
    api.put(HANDLER_SECRET, { ...stored, data: { 'tls.crt': 'eA==' } });
    await k.ensure();
    assert.deepEqual(handlerSecret(api), before);
  });

  test('renewal: the handlers\' certificate and the client certificate after 12 h; a new CA after 5 days, the client kept on the old one until the handlers have the new bundle', async () => {
    const api = new FakeApi();
    const t0 = new Date('2026-01-01T00:00:00Z');
    const clock = { now: t0 };
    const seen: NodeApiClientTls[] = [];
    const k = keeper(api, clock, seen);
    await k.ensure();
    const first = handlerSecret(api);
    assert.equal(k.recheckAt.getTime(), t0.getTime() + 12 * HOUR);

    clock.now = new Date(t0.getTime() + 12 * HOUR);
    await k.ensure();
    const second = handlerSecret(api);
    assert.notEqual(second['tls.crt'], first['tls.crt']);
    assert.equal(second['ca.crt'], first['ca.crt']);
    assert.equal(seen.length, 2, 'the client certificate, due too, renewed');
    assert.notEqual(seen[1]?.cert, seen[0]?.cert);

    // Rounds every 12 h, as the keeper wakes: at 120 h the CA is renewed (2 days before its end)
    // and the client certificate is due in the same round. The handlers' leaf comes from the new
    // CA at once and the bundle holds both; the client keeps the certificate of the old CA (which
    // the handlers trust) for NODE_API_CA_PROPAGATION_MS, the time the kubelet takes to give the
    // handlers the new bundle, and the keeper looks again within 10 s.
    for (let h = 24; h <= 108; h += 12) {
      clock.now = new Date(t0.getTime() + h * HOUR);
      await k.ensure();
    }
    const oldClient = seen.at(-1);
    clock.now = new Date(t0.getTime() + 120 * HOUR);
    await k.ensure();
    const third = handlerSecret(api);
    const bundle = splitPemBundle(third['ca.crt'] ?? '');
    assert.equal(bundle.length, 2);
    assert.equal(bundle[1], first['ca.crt']);
    assert.ok(issuedBy(third['tls.crt'] ?? '', bundle[0] ?? ''));
    const latest = seen.at(-1);
    assert.equal(latest?.ca, third['ca.crt'], 'the client trusts the new bundle');
    assert.equal(latest?.cert, oldClient?.cert, 'the client certificate is still the old CA\'s');
    assert.equal(k.recheckAt.getTime(), clock.now.getTime() + 10_000);

    clock.now = new Date(t0.getTime() + 120 * HOUR + NODE_API_CA_PROPAGATION_MS - 10_000);
    await k.ensure();
    assert.equal(seen.at(-1)?.cert, oldClient?.cert);
    clock.now = new Date(t0.getTime() + 120 * HOUR + NODE_API_CA_PROPAGATION_MS);
    await k.ensure();
    assert.ok(issuedBy(seen.at(-1)?.cert ?? '', bundle[0] ?? ''), 'then one of the new CA');
    assert.equal(k.recheckAt.getTime(), t0.getTime() + 132 * HOUR);
  });

  test('a mutual-TLS call with them: the handler is checked by name against the CA; a certificate not naming it is refused', async (t) => {
    const api = new FakeApi();
    const clock = { now: new Date() };
    const seen: NodeApiClientTls[] = [];
    await keeper(api, clock, seen).ensure();
    const h = handlerSecret(api);
    const caSet = { cert: splitPemBundle(h['ca.crt'] ?? '')[0] ?? '', key: '' };
    const serve = async (cert: string, key: string): Promise<number> => {
      const server = new grpc.Server();
      server.addService(node.NodeService, {
        list: (call: grpc.ServerUnaryCall<unknown, unknown>, cb: grpc.sendUnaryData<node.ListResponse>) => {
          // What the handler's allow-list reads: the client's CN and clientAuth.
          const peer = call.getAuthContext().sslPeerCertificate;
          cb(null, node.ListResponse.fromPartial({ vmis: [{ namespace: 'ns', name: String(peer?.subject?.CN), phase: (peer?.ext_key_usage ?? []).join(',') }] }));
        },
      } as unknown as grpc.UntypedServiceImplementation);
      t.after(() => shutdownGrpcServer(server, 1_000));
      return new Promise<number>((resolve, reject) => server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createSsl(Buffer.from(h['ca.crt'] ?? ''), [{ cert_chain: Buffer.from(cert), private_key: Buffer.from(key) }], true), (err, p) => (err ? reject(err) : resolve(p))));
    };
    const good = await serve(h['tls.crt'] ?? '', h['tls.key'] ?? '');
    const nodes = new KubeHandlerNodes({ client: api.client(), serverName: NODE_API_SERVER_NAME, namespace: 'podvirt', port: 8186, addresses: new Map([['n1', `127.0.0.1:${good}`]]) });
    t.after(() => nodes.close());
    await assert.rejects(nodes.connect('n1'), (err: { status?: number; message: string }) => err.status === grpc.status.UNAVAILABLE && /no node API client certificate yet/.test(err.message));
    const client = seen[0];
    assert.ok(client !== undefined);
    nodes.setTls(client);
    const rows = await (await nodes.connect('n1')).calls.list({ namespace: '' });
    assert.equal(rows.vmis[0]?.name, NODE_API_CLIENT_NAME);
    assert.equal(rows.vmis[0]?.phase, '1.3.6.1.5.5.7.3.2', 'clientAuth only');

    // Signed by the CA, but for another name: the key of the CA is in the Secret podvirt-api keeps.
    const caKey = Buffer.from(((api.objects.get(CA_SECRET)?.['data'] ?? {}) as Record<string, string>)['ca.key'] ?? '', 'base64').toString();
    const other = await issueServingCert({ ...caSet, key: caKey }, ['127.0.0.1', 'somebody-else'], new Date(), HOUR);
    const wrong = await serve(other.cert, other.key);
    const wrongNodes = new KubeHandlerNodes({ client: api.client(), tls: client, serverName: NODE_API_SERVER_NAME, namespace: 'podvirt', port: 8186, addresses: new Map([['n2', `127.0.0.1:${wrong}`]]) });
    t.after(() => wrongNodes.close());
    await assert.rejects((await wrongNodes.connect('n2')).calls.list({ namespace: '' }), (err: { status?: number }) => err.status === grpc.status.UNAVAILABLE);
  });
});
