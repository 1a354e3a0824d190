// The testbed API server refuses what kube-apiserver refuses, with the same status and
// message shapes (Status kind, reason Invalid, details.causes with field paths; 413 for bodies
// and objects too large), and real kubectl reports them as it does against a cluster: label
// keys and values, annotation size, name rules per kind, generated names within limits, the
// nesting depth of a body (400, as kube-apiserver's decoder, at a lower limit), and
// an unknown kind ("no matches for kind", which needs /openapi/v2).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { http, kubectl, podManifest, startTestApiServer, type TestApiServer } from './testbed-helpers.js';

describe('testbed API server validation', () => {
  let tb: TestApiServer;
  let base: string;
  before(async () => {
    tb = await startTestApiServer();
    base = tb.server.url;
  });
  after(() => tb.close());
  const run = (args: string[], input?: string) => kubectl(tb.kubeconfigPath, args, input);
  const create = (body: unknown) => http(base, 'POST', '/api/v1/namespaces/default/pods', body);
  const causes = (body: Record<string, unknown>) => ((body['details'] as { causes?: { field?: string; reason?: string; message?: string }[] } | undefined)?.causes ?? []);

  test('kubectl apply of an unknown kind fails as against a cluster, not on the OpenAPI download', async () => {
    const out = await run(['apply', '-f', '-'], 'apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n');
    assert.equal(out.code, 1);
    assert.match(out.stderr, /^error: resource mapping not found for name: "w" namespace: "" from "STDIN": no matches for kind "Widget" in version "example.com\/v1"\nensure CRDs are installed first/);
    const v2 = await fetch(`${base}/openapi/v2`, { headers: { Accept: 'application/json' } });
    assert.equal(((await v2.json()) as { swagger?: string }).swagger, '2.0');
  });

  test('label keys and values: syntax, 63 characters, a DNS-subdomain prefix of at most 253', async () => {
    const labels = { 'bad key!': 'x', k: 'v'.repeat(64), 'UPPER.example/x': 'z', [`${'p'.repeat(254)}/n`]: 'z', [`n/${'q'.repeat(64)}`]: 'z', 'a/b/c': 'z', ok: '-bad' };
    const res = await create(podManifest('labelled', { metadata: { name: 'labelled', labels } }));
    assert.equal(res.status, 422);
    assert.equal(res.body['kind'], 'Status');
    assert.equal(res.body['reason'], 'Invalid');
    const got = causes(res.body);
    assert.ok(got.every((c) => c.field === 'metadata.labels' && c.reason === 'FieldValueInvalid'), JSON.stringify(got));
    const messages = got.map((c) => c.message ?? '');
    for (const fragment of [
      'Invalid value: "bad key!": name part must consist of alphanumeric characters',
      `Invalid value: "${'v'.repeat(64)}": must be no more than 63 characters`,
      'Invalid value: "UPPER.example/x": prefix part a lowercase RFC 1123 subdomain',
      'prefix part must be no more than 253 characters',
      'name part must be no more than 63 characters',
      'Invalid value: "a/b/c": a qualified name must consist of',
      'Invalid value: "-bad": a valid label must be an empty string or consist of',
    ]) assert.ok(messages.some((m) => m.includes(fragment)), `${fragment} in\n${messages.join('\n')}`);
    assert.match(String(res.body['message']), /^Pod "labelled" is invalid: \[metadata\.labels: Invalid value: /);
    const ok = await create(podManifest('fine-labels', { metadata: { name: 'fine-labels', labels: { 'kubevirt.io/created-by': 'abc', 'x.y_z': '', a: 'B.c-d_e' } } }));
    assert.equal(ok.status, 201, JSON.stringify(ok.body));
  });

  test('annotations: at most 256 KiB in total; kubectl shows the API server\'s message', async () => {
    const big = { a: 'x'.repeat(200 * 1024), b: 'y'.repeat(60 * 1024) };
    const res = await create(podManifest('annotated', { metadata: { name: 'annotated', annotations: big } }));
    assert.equal(res.status, 422);
    assert.deepEqual(causes(res.body), [{ reason: 'FieldValueTooLong', message: 'Too long: may not be more than 262144 bytes', field: 'metadata.annotations' }]);
    const fits = await create(podManifest('annotated', { metadata: { name: 'annotated', annotations: { a: 'x'.repeat(200 * 1024) } } }));
    assert.equal(fits.status, 201);
    const out = await run(['apply', '-f', '-'], `apiVersion: v1\nkind: Pod\nmetadata:\n  name: kubectl-annotated\n  annotations:\n    a: "${'x'.repeat(270_000)}"\nspec:\n  containers:\n  - name: c\n    image: x\n`);
    assert.equal(out.code, 1);
    assert.equal(out.stderr.trim(), 'The Pod "kubectl-annotated" is invalid: metadata.annotations: Too long: may not be more than 262144 bytes');
  });

  test('too large: a body over 3 MiB and an object over 1.5 MiB are 413 RequestEntityTooLarge', async () => {
    const huge = await create(podManifest('huge', { metadata: { name: 'huge' }, spec: { containers: [{ name: 'c', image: 'x', args: ['z'.repeat(3 * 1024 * 1024)] }] } }));
    assert.equal(huge.status, 413);
    assert.equal(huge.body['reason'], 'RequestEntityTooLarge');
    assert.equal(huge.body['message'], 'Request entity too large: limit is 3145728');
    const big = await create(podManifest('big', { metadata: { name: 'big' }, spec: { containers: [{ name: 'c', image: 'x', args: ['z'.repeat(2 * 1024 * 1024)] }] } }));
    assert.equal(big.status, 413);
    assert.equal(big.body['kind'], 'Status');
    assert.match(String(big.body['message']), /^Request entity too large: the object is \d+ bytes, the limit is 1572864$/);
    assert.equal((await http(base, 'GET', '/api/v1/namespaces/default/pods/big')).status, 404);
  });

  test('nesting depth: a 3,000- or 9,000-deep object is 400 BadRequest naming the depth (JSON and YAML), never a 500; 510 levels are stored and read back', async () => {
    const vmis = '/apis/kubevirt.io/v1/namespaces/default/virtualmachineinstances';
    const nested = (depth: number): string => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
    const vmi = (name: string, depth: number): string => `{"apiVersion":"kubevirt.io/v1","kind":"VirtualMachineInstance","metadata":{"name":"${name}"},"spec":{"domain":{"devices":{}},"x":${nested(depth)}}}`;
    for (const depth of [3_000, 9_000]) {
      for (const [contentType, body] of [['application/json', vmi(`deep-${depth}`, depth)], ['application/yaml', vmi(`deep-yaml-${depth}`, depth)]] as const) {
        const res = await http(base, 'POST', vmis, body, contentType);
        assert.equal(res.status, 400, `${depth} ${contentType}: ${JSON.stringify(res.body).slice(0, 300)}`);
        assert.equal(res.body['reason'], 'BadRequest');
        const where = contentType === 'application/json' ? / at spec\.x\.a\.a\.a\.a…/ : / \(the YAML nests deeper than this server reads\)/;
        assert.match(String(res.body['message']), /^the request body could not be decoded: exceeded max depth of 512/);
        assert.match(String(res.body['message']), where);
      }
      const patch = await http(base, 'PATCH', `${vmis}/none`, `{"spec":{"x":${nested(depth)}}}`, 'application/merge-patch+json');
      assert.equal(patch.status, 400, 'a patch body is decoded the same way');
    }
    // Within the limit, every path that copies or walks the object copes with it.
    const ok = await http(base, 'POST', vmis, vmi('deep-510', 510));
    assert.equal(ok.status, 201, JSON.stringify(ok.body).slice(0, 300));
    const merged = await http(base, 'PATCH', `${vmis}/deep-510`, `{"spec":{"x":${nested(510).replace('1', '2')}}}`, 'application/merge-patch+json');
    assert.equal(merged.status, 200);
    const got = await http(base, 'GET', `${vmis}/deep-510`);
    assert.equal(got.status, 200);
    assert.ok(JSON.stringify(got.body).includes(`${'{"a":'.repeat(10)}`));
    // The server's Table for kubectl get (printer columns evaluated on the deep object).
    const kubectlGet = await run(['get', 'vmi', 'deep-510']);
    assert.equal(kubectlGet.code, 0, kubectlGet.stderr);
    assert.match(kubectlGet.stdout, /^deep-510 /m);
  });

  test('a pod\'s QoS class counts its init containers; a quantity that does not parse is 400 BadRequest, never a 500', async () => {
    const guaranteed = { requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: '100m', memory: '64Mi' } };
    const spec = (sidecarRequests: Record<string, string>) => ({
      initContainers: [{ name: 'sidecar', image: 'busybox', restartPolicy: 'Always', resources: { requests: sidecarRequests, limits: { cpu: '15m', memory: '60M' } } }],
      containers: [{ name: 'main', image: 'busybox', resources: guaranteed }],
    });
    const even = await create(podManifest('qos-even', { spec: spec({ cpu: '15m', memory: '60M' }) }));
    assert.equal(even.status, 201, JSON.stringify(even.body));
    assert.equal((even.body['status'] as { qosClass?: string }).qosClass, 'Guaranteed');
    const uneven = await create(podManifest('qos-uneven', { spec: spec({ cpu: '5m', memory: '35M' }) }));
    assert.equal(uneven.status, 201, JSON.stringify(uneven.body));
    assert.equal((uneven.body['status'] as { qosClass?: string }).qosClass, 'Burstable');
    const bad = await create(podManifest('qos-bad', { spec: { containers: [{ name: 'main', image: 'busybox', resources: { limits: { cpu: 'lots' } } }] } }));
    assert.equal(bad.status, 400, JSON.stringify(bad.body));
    assert.equal(bad.body['reason'], 'BadRequest');
    assert.match(String(bad.body['message']), /^Pod in version "v1" cannot be handled as a Pod: invalid quantity "lots"/);
    // A spec of the wrong shape reaches validation, which names it, instead of failing the QoS class.
    const shapeless = await create(podManifest('qos-shapeless', { spec: { containers: { name: 'main' } } }));
    assert.equal(shapeless.status, 422, JSON.stringify(shapeless.body));
  });

  test('names per kind: a namespace is a DNS label, a pod a DNS subdomain; generated names stay within limits', async () => {
    const ns = await http(base, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'a.b' } });
    assert.equal(ns.status, 422);
    assert.match(causes(ns.body)[0]?.message ?? '', /a lowercase RFC 1123 label must consist of/);
    assert.equal((await create(podManifest('a.b'))).status, 201);
    const long = await create(podManifest('x'.repeat(254)));
    assert.equal(long.status, 422);
    assert.equal(causes(long.body)[0]?.message, `Invalid value: "${'x'.repeat(254)}": must be no more than 253 characters`);
    for (const name of ['.', '..', 'Upper', 'a_b']) assert.equal((await create(podManifest(name))).status, 422, name);
    // As kube-apiserver: a generateName is checked as a name prefix (it was accepted here and refused there).
    const tooLong = `virt-launcher-${'v'.repeat(253)}-`;
    const refused = await create({ ...podManifest(''), metadata: { generateName: tooLong } });
    assert.equal(refused.status, 422);
    assert.deepEqual(causes(refused.body)[0], { reason: 'FieldValueInvalid', message: `Invalid value: "${tooLong}": must be no more than 253 characters`, field: 'metadata.generateName' });
    const generated = await create({ ...podManifest(''), metadata: { generateName: `virt-launcher-${'v'.repeat(230)}-` } });
    assert.equal(generated.status, 201, JSON.stringify(generated.body));
    const name = String((generated.body['metadata'] as Record<string, unknown>)['name']);
    assert.equal(name.length, 63);
    assert.ok(name.startsWith('virt-launcher-vvv'));
  });
});
