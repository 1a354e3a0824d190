import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseApiFlags, servingNames } from '../src/api-flags.js';

const HOUR = 3_600_000;

describe('parseApiFlags', () => {
  test('defaults: KubeVirt\'s port and certificate lifetimes', () => {
    const f = parseApiFlags([]);
    assert.equal(f.securePort, 8443);
    assert.equal(f.metricsPort, 8080);
    assert.equal(f.namespace, 'podvirt');
    assert.equal(f.evictionStrategy, 'None');
    assert.equal(parseApiFlags(['--eviction-strategy=LiveMigrateIfPossible']).evictionStrategy, 'LiveMigrateIfPossible');
    assert.deepEqual(f.rotation, { caDurationMs: 168 * HOUR, caRenewBeforeMs: 48 * HOUR, certDurationMs: 24 * HOUR, certRenewBeforeMs: 12 * HOUR });
    assert.deepEqual(servingNames(f), ['podvirt-api.podvirt.svc', 'podvirt-api.podvirt.svc.cluster.local', 'podvirt-api.podvirt']);
  });

  test('--tls-san repeats or takes a list; a name that is neither DNS nor IP is refused naming the flag', () => {
    const f = parseApiFlags(['--tls-san=127.0.0.1,api.example', '--tls-san', 'fd00::1', '--namespace=kv']);
    assert.deepEqual(servingNames(f).slice(3), ['127.0.0.1', 'api.example', 'fd00::1']);
    assert.throws(() => parseApiFlags(['--tls-san=Bad_Name']), { code: 'PODVIRT_API_ERR_BAD_FLAG', message: /^--tls-san: "Bad_Name"/ });
  });

  test('bad ports, durations, windows and unknown flags are refused with the flag named', () => {
    assert.throws(() => parseApiFlags(['--secure-port=70000']), { code: 'PODVIRT_API_ERR_BAD_FLAG', message: /--secure-port/ });
    assert.throws(() => parseApiFlags(['--cert-duration=1d']), { code: 'PODVIRT_API_ERR_BAD_FLAG', message: /--cert-duration/ });
    assert.throws(() => parseApiFlags(['--cert-renew-before=30h']), { code: 'PODVIRT_API_ERR_BAD_FLAG', message: /renewal window/ });
    assert.throws(() => parseApiFlags(['--nope']), { code: 'PODVIRT_API_ERR_BAD_FLAG', message: /nope/ });
    assert.throws(() => parseApiFlags(['--eviction-strategy=none']), { code: 'PODVIRT_API_ERR_BAD_FLAG', message: /^--eviction-strategy: "none" is not one of/ });
  });

  test('the node API: Secrets podvirt-api makes, or files, not both; each set whole', () => {
    assert.equal(parseApiFlags([]).handlerApi, undefined);
    const made = parseApiFlags(['--node-api-ca-secret=podvirt-node-api-ca', '--handler-tls-secret=podvirt-handler-certs']).handlerApi;
    assert.deepEqual(made?.secrets, { caSecret: 'podvirt-node-api-ca', handlerSecret: 'podvirt-handler-certs' });
    assert.equal(made?.files, undefined);
    assert.equal(made?.port, 8186);
    const files = parseApiFlags(['--handler-ca=ca', '--handler-client-cert=c', '--handler-client-key=k', '--handler-address=n1=127.0.0.1:9']).handlerApi;
    assert.deepEqual(files?.files, { caFile: 'ca', certFile: 'c', keyFile: 'k' });
    assert.equal(files?.addresses.get('n1'), '127.0.0.1:9');
    assert.throws(() => parseApiFlags(['--node-api-ca-secret=a']), { code: 'PODVIRT_API_ERR_BAD_FLAG', message: /^--handler-tls-secret: needed with --node-api-ca-secret/ });
    assert.throws(() => parseApiFlags(['--node-api-ca-secret=a', '--handler-tls-secret=a']), { code: 'PODVIRT_API_ERR_BAD_FLAG', message: /must differ .*CA key/ });
    assert.throws(() => parseApiFlags(['--node-api-ca-secret=a', '--handler-tls-secret=B_']), { code: 'PODVIRT_API_ERR_BAD_FLAG', message: /^--handler-tls-secret: "B_" is not a Secret name/ });
    assert.throws(() => parseApiFlags(['--node-api-ca-secret=a', '--handler-tls-secret=b', '--handler-ca=ca', '--handler-client-cert=c', '--handler-client-key=k']), { code: 'PODVIRT_API_ERR_BAD_FLAG', message: /not with --node-api-ca-secret/ });
    assert.throws(() => parseApiFlags(['--handler-address=n1=127.0.0.1:9']), { code: 'PODVIRT_API_ERR_BAD_FLAG', message: /^--handler-address: needs/ });
  });
});
