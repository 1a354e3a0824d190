import assert from 'node:assert/strict';
import { request } from 'node:https';
import type { TLSSocket } from 'node:tls';
import { after, before, describe, test } from 'node:test';
import { pino } from 'pino';
import { handleAdmission, isAdmissionPath } from '../src/admission/admission-handler.js';
import { ApiMetrics } from '../src/metrics/api-metrics.js';
import { SecureServer } from '../src/server/secure-server.js';
import { MAX_BODY_BYTES } from '../src/server/read-json-body.js';
import { issueServingCert, makeCa, type PemPair } from '../src/tls/certificate-authority.js';

interface Reply { status: number; body: string; peerSerial: string }

describe('the webhooks over HTTPS', () => {
  let ca: PemPair;
  let server: SecureServer;
  const metrics = new ApiMetrics();

  before(async () => {
    const now = new Date();
    ca = await makeCa('test CA', now, 48 * 3_600_000);
    server = await SecureServer.listen({
      host: '127.0.0.1', port: 0, serving: await issueServingCert(ca, ['127.0.0.1'], now, 3_600_000),
      handler: async (req, res) => {
        const path = new URL(req.url ?? '/', 'https://x').pathname;
        if (isAdmissionPath(path)) return handleAdmission(path, req, res, { log: pino({ level: 'silent' }), metrics });
        res.writeHead(404);
        res.end();
      },
    });
  });
  after(() => server.close());

  function post(path: string, body: string | undefined, contentType = 'application/json', length?: number): Promise<Reply> {
    return new Promise((resolve, reject) => {
      const headers = { 'content-type': contentType, ...(length === undefined ? {} : { 'content-length': String(length) }) };
      const req = request({ host: '127.0.0.1', port: server.port, path, method: 'POST', ca: ca.cert, agent: false, headers }, (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text, peerSerial: (res.socket as TLSSocket).getPeerCertificate().serialNumber }));
      });
      req.on('error', reject);
      // Without a body: only the headers, announcing `length` bytes that never come.
      if (body === undefined) req.flushHeaders();
      else req.end(body);
    });
  }

  const vmiReview = (bus: string) => JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: 'abc', operation: 'CREATE',
      kind: { group: 'kubevirt.io', version: 'v1', kind: 'VirtualMachineInstance' },
      resource: { group: 'kubevirt.io', version: 'v1', resource: 'virtualmachineinstances' },
      object: {
        apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', metadata: { name: 'vm1', namespace: 'default' },
        spec: { domain: { resources: { requests: { memory: '128Mi' } }, devices: { disks: [{ name: 'd', disk: { bus } }] } }, volumes: [{ name: 'd', containerDisk: { image: 'i' } }] },
      },
    },
  });

  test('a review is answered with its uid: refused naming the field, or mutated with a base64 JSON patch; counted', async () => {
    const refused = await post('/virtualmachineinstances-validate', vmiReview('floppy'));
    assert.equal(refused.status, 200);
    const r = JSON.parse(refused.body) as { apiVersion: string; response: { uid: string; allowed: boolean; status: { code: number; message: string } } };
    assert.equal(r.apiVersion, 'admission.k8s.io/v1');
    assert.deepEqual([r.response.uid, r.response.allowed, r.response.status.code], ['abc', false, 422]);
    assert.match(r.response.status.message, /spec\.domain\.devices\.disks\[0\]\.disk\.bus/);
    const mutated = JSON.parse((await post('/virtualmachineinstances-mutate', vmiReview('virtio'))).body) as { response: { allowed: boolean; patchType: string; patch: string } };
    assert.equal(mutated.response.patchType, 'JSONPatch');
    const patch = JSON.parse(Buffer.from(mutated.response.patch, 'base64').toString()) as Array<{ path: string; value: { domain: { machine: { type: string } } } }>;
    assert.equal(patch[0]?.value.domain.machine.type, 'q35');
    const text = await metrics.registry.getSingleMetricAsString('podvirt_api_admission_requests_total');
    assert.match(text, /webhook="virtualmachineinstances-validate",allowed="false"} 1/);
    assert.match(text, /webhook="virtualmachineinstances-mutate",allowed="true"} 1/);
  });

  test('bad bodies: not JSON 400 naming the body, not a review 400 naming the field, wrong type 415, announced too large 413 before it is read', async () => {
    const notJson = await post('/virtualmachineinstances-validate', '{');
    assert.equal(notJson.status, 400);
    assert.match(notJson.body, /^body: not valid JSON/);
    const noUid = await post('/virtualmachineinstances-validate', JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { operation: 'CREATE' } }));
    assert.equal(noUid.status, 400);
    assert.match(noUid.body, /^request\.uid: required/);
    assert.equal((await post('/virtualmachineinstances-validate', '{}', 'text/plain')).status, 415);
    assert.equal((await post('/virtualmachineinstances-validate', undefined, 'application/json', MAX_BODY_BYTES + 1)).status, 413);
    assert.equal((await post('/nowhere', '{}')).status, 404);
  });

  test('a renewed certificate is served to new connections', async () => {
    const before = (await post('/nowhere', '{}')).peerSerial;
    server.setCertificate(await issueServingCert(ca, ['127.0.0.1'], new Date(), 3_600_000));
    const afterRenewal = (await post('/nowhere', '{}')).peerSerial;
    assert.notEqual(afterRenewal, before);
  });
});
