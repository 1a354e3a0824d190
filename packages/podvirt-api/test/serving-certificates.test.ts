import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { describe, test } from 'node:test';
import { pino } from 'pino';
import { splitPemBundle } from '../src/tls/certificate-authority.js';
import { FakeApi, type Obj } from './fake-kube-api.js';
import { DEFAULT_ROTATION, type CertificateSet } from '../src/tls/rotation-plan.js';
import { ServingCertificates } from '../src/tls/serving-certificates.js';

const HOUR = 3_600_000;
const SECRET = '/api/v1/namespaces/podvirt/secrets/podvirt-api-certs';
const VALIDATING = '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/podvirt-api-validator';
const MUTATING = '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/podvirt-api-mutator';
const API_SERVICE = '/apis/apiregistration.k8s.io/v1/apiservices/v1.subresources.kubevirt.io';

function webhookConfig(name: string): Obj {
  return { metadata: { name }, webhooks: [{ name: 'a.podvirt.io', clientConfig: { url: 'https://127.0.0.1:1/a' } }, { name: 'b.podvirt.io', clientConfig: { url: 'https://127.0.0.1:1/b' } }] };
}

function keeper(api: FakeApi, clock: { now: Date }, seen: CertificateSet[], validating = ['podvirt-api-validator']): ServingCertificates {
  return new ServingCertificates({
    client: api.client(), namespace: 'podvirt', secretName: 'podvirt-api-certs', names: ['podvirt-api.podvirt.svc'], policy: DEFAULT_ROTATION,
    validatingWebhooks: validating, mutatingWebhooks: ['podvirt-api-mutator'], log: pino({ level: 'silent' }), now: () => clock.now,
    onCertificates: (set) => seen.push(set),
  });
}

function bundles(api: FakeApi): string[] {
  return [VALIDATING, MUTATING].flatMap((p) => ((api.objects.get(p)?.['webhooks'] ?? []) as Array<{ clientConfig: { caBundle?: string } }>).map((w) => Buffer.from(w.clientConfig.caBundle ?? '', 'base64').toString()));
}

describe('ServingCertificates', () => {
  test('the first round makes the Secret and writes the CA into every webhook; the next one changes nothing', async () => {
    const api = new FakeApi();
    api.put(VALIDATING, webhookConfig('podvirt-api-validator'));
    api.put(MUTATING, webhookConfig('podvirt-api-mutator'));
    const clock = { now: new Date('2026-01-01T00:00:00Z') };
    const seen: CertificateSet[] = [];
    const k = keeper(api, clock, seen);
    const set = await k.ensure();
    assert.deepEqual(api.writes, [`POST ${SECRET}`, `PUT ${VALIDATING}`, `PUT ${MUTATING}`]);
    assert.equal(seen.length, 1);
    assert.deepEqual(bundles(api), [set.caBundle, set.caBundle, set.caBundle, set.caBundle]);
    assert.ok(new X509Certificate(set.serving.cert).checkIssued(new X509Certificate(set.caBundle)));
    clock.now = new Date(clock.now.getTime() + HOUR);
    await k.ensure();
    assert.equal(api.writes.length, 3);
    assert.equal(seen.length, 1);
  });

  test('the APIService of the subresource API gets the bundle too, keeping its spec; missing, it is looked for again', async () => {
    const api = new FakeApi();
    const clock = { now: new Date('2026-01-01T00:00:00Z') };
    const k = new ServingCertificates({
      client: api.client(), namespace: 'podvirt', secretName: 'podvirt-api-certs', names: ['podvirt-api.podvirt.svc'], policy: DEFAULT_ROTATION,
      validatingWebhooks: [], mutatingWebhooks: [], apiServices: ['v1.subresources.kubevirt.io'], log: pino({ level: 'silent' }), now: () => clock.now,
      onCertificates: () => undefined,
    });
    await k.ensure();
    assert.equal(k.recheckAt.getTime(), clock.now.getTime() + 10_000);
    api.put(API_SERVICE, { metadata: { name: 'v1.subresources.kubevirt.io' }, spec: { group: 'subresources.kubevirt.io', version: 'v1', service: { name: 'podvirt-api', namespace: 'podvirt' } } });
    clock.now = new Date(clock.now.getTime() + 10_000);
    const set = await k.ensure();
    const spec = api.objects.get(API_SERVICE)?.['spec'] as { caBundle: string; group: string };
    assert.equal(Buffer.from(spec.caBundle, 'base64').toString(), set.caBundle);
    assert.equal(spec.group, 'subresources.kubevirt.io');
    const writes = api.writes.length;
    await k.ensure();
    assert.equal(api.writes.length, writes);
  });

  test('a replica that loses the race to create the Secret serves the winner\'s certificate', async () => {
    const api = new FakeApi();
    const clock = { now: new Date('2026-01-01T00:00:00Z') };
    const a: CertificateSet[] = [];
    const b: CertificateSet[] = [];
    const first = await keeper(api, clock, a, []).ensure();
    api.staleOnce.add(SECRET);
    const second = await keeper(api, clock, b, []).ensure();
    assert.equal(second.serving.cert, first.serving.cert);
    assert.equal(b.length, 1);
  });

  test('a webhook configuration not there yet is looked for again within 10 s, and gets the bundle then', async () => {
    const api = new FakeApi();
    api.put(VALIDATING, webhookConfig('podvirt-api-validator'));
    const clock = { now: new Date('2026-01-01T00:00:00Z') };
    const k = keeper(api, clock, []);
    const set = await k.ensure();
    assert.equal(k.recheckAt.getTime(), clock.now.getTime() + 10_000);
    api.put(MUTATING, webhookConfig('podvirt-api-mutator'));
    clock.now = new Date(clock.now.getTime() + 10_000);
    await k.ensure();
    assert.deepEqual(bundles(api), [set.caBundle, set.caBundle, set.caBundle, set.caBundle]);
    assert.equal(k.recheckAt.getTime(), new Date('2026-01-01T12:00:00Z').getTime());
  });

  test('renewal: a new certificate from the same CA after 12 h; a new CA after 5 days, the old one still trusted beside it', async () => {
    const api = new FakeApi();
    api.put(VALIDATING, webhookConfig('podvirt-api-validator'));
    const t0 = new Date('2026-01-01T00:00:00Z');
    const clock = { now: t0 };
    const seen: CertificateSet[] = [];
    const k = keeper(api, clock, seen);
    const first = await k.ensure();
    clock.now = new Date(t0.getTime() + 12 * HOUR);
    const renewed = await k.ensure();
    assert.notEqual(renewed.serving.cert, first.serving.cert);
    assert.equal(renewed.caBundle, first.caBundle);
    clock.now = new Date(t0.getTime() + 121 * HOUR);
    const newCa = await k.ensure();
    const certs = splitPemBundle(newCa.caBundle);
    assert.equal(certs.length, 2);
    assert.equal(certs[1], first.caBundle);
    assert.ok(new X509Certificate(newCa.serving.cert).checkIssued(new X509Certificate(certs[0] ?? '')));
    assert.deepEqual(bundles(api), [newCa.caBundle, newCa.caBundle]);
    assert.equal(seen.length, 3);
  });
});
