import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { describe, test } from 'node:test';
import { issueServingCert, makeCa, namesOf, validityOf } from '../src/tls/certificate-authority.js';
import { checkPolicy, DEFAULT_ROTATION, planRotation, type CertificateSet } from '../src/tls/rotation-plan.js';

const HOUR = 3_600_000;
const NAMES = ['podvirt-api.podvirt.svc', '127.0.0.1'];

async function freshSet(now: Date): Promise<CertificateSet> {
  const ca = await makeCa('podvirt-api CA', now, DEFAULT_ROTATION.caDurationMs);
  return { ca, caBundle: ca.cert, serving: await issueServingCert(ca, NAMES, now, DEFAULT_ROTATION.certDurationMs) };
}

describe('serving certificates', () => {
  test('the CA signs a serving certificate for the Service name and the IP, for serverAuth only', async () => {
    const now = new Date('2026-01-01T00:00:00Z');
    const set = await freshSet(now);
    const ca = new X509Certificate(set.ca.cert);
    const cert = new X509Certificate(set.serving.cert);
    assert.ok(ca.ca);
    assert.ok(!cert.ca);
    assert.ok(cert.checkIssued(ca) && cert.verify(ca.publicKey));
    assert.ok(cert.checkHost('podvirt-api.podvirt.svc'));
    assert.equal(cert.checkIP('127.0.0.1'), '127.0.0.1');
    assert.deepEqual(cert.keyUsage, ['1.3.6.1.5.5.7.3.1']);
    assert.deepEqual(namesOf(set.serving.cert), NAMES);
    assert.equal(validityOf(set.serving.cert)?.notAfter.getTime(), now.getTime() + 24 * HOUR);
  });

  test('rotation: nothing → new CA; kept until the renewal windows; a new name → new certificate; the old CA stays trusted', async () => {
    const t0 = new Date('2026-01-01T00:00:00Z');
    assert.equal(planRotation(undefined, NAMES, t0, DEFAULT_ROTATION).kind, 'new-ca');
    const set = await freshSet(t0);
    const keep = planRotation(set, NAMES, t0, DEFAULT_ROTATION);
    assert.deepEqual(keep, { kind: 'keep', recheckAt: new Date(t0.getTime() + 12 * HOUR) });
    assert.equal(planRotation(set, NAMES, new Date(t0.getTime() + 12 * HOUR - 1), DEFAULT_ROTATION).kind, 'keep');
    assert.equal(planRotation(set, NAMES, new Date(t0.getTime() + 12 * HOUR), DEFAULT_ROTATION).kind, 'new-cert');
    assert.equal(planRotation(set, [...NAMES, 'extra.example'], t0, DEFAULT_ROTATION).kind, 'new-cert');
    const late = planRotation(set, NAMES, new Date(t0.getTime() + 120 * HOUR), DEFAULT_ROTATION);
    assert.equal(late.kind, 'new-ca');
    assert.ok(late.kind === 'new-ca');
    assert.deepEqual(late.keepInBundle, [set.ca.cert]);
    assert.equal(planRotation({ ...set, serving: { cert: 'garbage', key: '' } }, NAMES, t0, DEFAULT_ROTATION).kind, 'new-cert');
  });

  test('a policy without a renewal window inside each lifetime is refused', () => {
    assert.equal(checkPolicy(DEFAULT_ROTATION), undefined);
    assert.match(checkPolicy({ ...DEFAULT_ROTATION, certRenewBeforeMs: 24 * HOUR }) ?? '', /certificate renewal window/);
    assert.match(checkPolicy({ ...DEFAULT_ROTATION, caRenewBeforeMs: 200 * HOUR }) ?? '', /CA renewal window/);
    assert.match(checkPolicy({ ...DEFAULT_ROTATION, certDurationMs: 150 * HOUR, certRenewBeforeMs: HOUR }) ?? '', /fit in the CA lifetime/);
  });
});
