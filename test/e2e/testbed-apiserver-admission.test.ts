// Admission webhooks in the testbed API server, against what kube-apiserver does: who is called,
// in which order, with which AdmissionReview, and what the client is told.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, beforeEach, describe, test } from 'node:test';
import type { JsonObject } from '../testbed/apiserver/index.js';
import { ROOT } from './ship-manifests-helpers.js';
import { http, kubectl, podManifest, startTestApiServer, type KubectlResult, type TestApiServer } from './testbed-helpers.js';

type Answer = (request: JsonObject) => JsonObject | Promise<JsonObject>;

/** An HTTPS webhook on 127.0.0.1 whose answer per path a test sets; it records every review. */
class FakeWebhook {
  readonly reviews: Array<{ path: string; request: JsonObject }> = [];
  readonly answers = new Map<string, Answer>();
  readonly #server: Server;

  private constructor(cert: string, key: string) {
    this.#server = createServer({ cert, key }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        void (async () => {
          const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { request: JsonObject };
          const path = new URL(req.url ?? '/', 'https://x').pathname;
          this.reviews.push({ path, request: review.request });
          const answer = this.answers.get(path) ?? (() => ({}));
          const response = { uid: review.request['uid'], allowed: true, ...(await answer(review.request)) };
          res.writeHead(200, { 'Content-Type': 'application/json' });
          res.end(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response }));
        })();
      });
    });
  }

  static async start(cert: string, key: string): Promise<FakeWebhook> {
    const hook = new FakeWebhook(cert, key);
    await new Promise<void>((resolve) => hook.#server.listen(0, '127.0.0.1', resolve));
    return hook;
  }

  url(path: string): string {
    return `https://127.0.0.1:${(this.#server.address() as AddressInfo).port}${path}`;
  }

  close(): Promise<void> {
    this.#server.closeAllConnections();
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }
}

const jsonPatch = (ops: unknown[]): JsonObject => ({ patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(ops)).toString('base64') });

describe('testbed API server: admission webhooks', () => {
  let tb: TestApiServer;
  let hook: FakeWebhook;
  let caBundle: string;
  let wrongCa: string;
  const base = (): string => tb.server.url;

  before(async () => {
    tb = await startTestApiServer();
    const run = promisify(execFile);
    const cert = join(tb.dir, 'hook.crt');
    const key = join(tb.dir, 'hook.key');
    await run('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1', '-subj', '/CN=fake-webhook', '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', key, '-out', cert]);
    await run('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1', '-subj', '/CN=other', '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', join(tb.dir, 'other.key'), '-out', join(tb.dir, 'other.crt')]);
    const pem = await readFile(cert, 'utf8');
    caBundle = Buffer.from(pem).toString('base64');
    wrongCa = Buffer.from(await readFile(join(tb.dir, 'other.crt'), 'utf8')).toString('base64');
    hook = await FakeWebhook.start(pem, await readFile(key, 'utf8'));
  });
  after(async () => {
    await hook.close();
    await tb.close();
  });
  beforeEach(async () => {
    hook.reviews.length = 0;
    hook.answers.clear();
    for (const kind of ['validatingwebhookconfigurations', 'mutatingwebhookconfigurations']) {
      await http(base(), 'DELETE', `/apis/admissionregistration.k8s.io/v1/${kind}`);
    }
    await http(base(), 'DELETE', '/api/v1/namespaces/default/pods?gracePeriodSeconds=0');
  });

  const webhook = (name: string, path: string, extra: JsonObject = {}): JsonObject => ({
    name,
    clientConfig: { url: hook.url(path), caBundle },
    rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['pods'], scope: 'Namespaced' }],
    sideEffects: 'None',
    admissionReviewVersions: ['v1'],
    ...extra,
  });
  const configure = async (kind: 'Validating' | 'Mutating', name: string, webhooks: JsonObject[]): Promise<void> => {
    const res = await http(base(), 'POST', `/apis/admissionregistration.k8s.io/v1/${kind.toLowerCase()}webhookconfigurations`, {
      apiVersion: 'admissionregistration.k8s.io/v1', kind: `${kind}WebhookConfiguration`, metadata: { name }, webhooks,
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
  };
  const pods = '/api/v1/namespaces/default/pods';

  test('mutating webhooks run in configuration-name order, each sees the last patch, then the validating ones see the result', async () => {
    await configure('Mutating', 'b-second', [webhook('second.podvirt.io', '/second')]);
    await configure('Mutating', 'a-first', [webhook('first.podvirt.io', '/first')]);
    await configure('Validating', 'check', [webhook('check.podvirt.io', '/check')]);
    hook.answers.set('/first', () => jsonPatch([{ op: 'add', path: '/metadata/labels/first', value: 'yes' }]));
    hook.answers.set('/second', (r) => {
      const labels = ((r['object'] as JsonObject)['metadata'] as JsonObject)['labels'] as JsonObject;
      return jsonPatch([{ op: 'add', path: '/metadata/labels/second', value: `saw-first-${String(labels['first'])}` }]);
    });
    const created = await http(base(), 'POST', pods, podManifest('mutated'));
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.deepEqual(hook.reviews.map((r) => r.path), ['/first', '/second', '/check']);
    const labels = (created.body['metadata'] as JsonObject)['labels'] as JsonObject;
    assert.deepEqual(labels, { app: 'demo', first: 'yes', second: 'saw-first-yes' });
    const seen = hook.reviews[2]?.request as JsonObject;
    assert.equal(((seen['object'] as JsonObject)['metadata'] as JsonObject)['labels'] !== undefined, true);
    assert.deepEqual(seen['kind'], { group: '', version: 'v1', kind: 'Pod' });
    assert.deepEqual(seen['resource'], { group: '', version: 'v1', resource: 'pods' });
    assert.equal(seen['operation'], 'CREATE');
    assert.equal(seen['namespace'], 'default');
    assert.equal(seen['name'], 'mutated');
    assert.equal(seen['dryRun'], false);
    assert.deepEqual(seen['userInfo'], { username: 'system:anonymous', groups: ['system:unauthenticated'] });
    // The first mutating webhook saw the object before its uid was set, as in kube-apiserver.
    assert.equal(((hook.reviews[0]?.request['object'] as JsonObject)['metadata'] as JsonObject)['uid'], undefined);
  });

  test("a refusal reaches the client as the webhook's Status, its message after the webhook's name; nothing is stored", async () => {
    await configure('Validating', 'check', [webhook('check.podvirt.io', '/check')]);
    hook.answers.set('/check', () => ({
      allowed: false,
      status: { code: 422, reason: 'Invalid', message: 'Pod "refused" is invalid: spec.containers[0].image: Forbidden: not from here', details: { name: 'refused', kind: 'Pod', causes: [{ reason: 'FieldValueForbidden', field: 'spec.containers[0].image', message: 'Forbidden: not from here' }] } },
    }));
    const res = await http(base(), 'POST', pods, podManifest('refused'));
    assert.equal(res.status, 422);
    assert.equal(res.body['reason'], 'Invalid');
    assert.equal(res.body['message'], 'admission webhook "check.podvirt.io" denied the request: Pod "refused" is invalid: spec.containers[0].image: Forbidden: not from here');
    assert.equal((await http(base(), 'GET', `${pods}/refused`)).status, 404);
    // kubectl prints it as it does kube-apiserver's (the details' causes, by field).
    const out = await kubectl(tb.kubeconfigPath, ['apply', '-f', '-'], JSON.stringify(podManifest('refused')));
    assert.notEqual(out.code, 0);
    assert.match(out.stderr, /The Pod "refused" is invalid: spec\.containers\[0\]\.image: Forbidden: not from here/);
    // Without status, a code under 400 or a message: 400 and "without explanation".
    hook.answers.set('/check', () => ({ allowed: false, status: { code: 200 } }));
    const bare = await http(base(), 'POST', pods, podManifest('refused'));
    assert.equal(bare.status, 400);
    assert.equal(bare.body['message'], 'admission webhook "check.podvirt.io" denied the request without explanation');
  });

  test('status writes reach only webhooks whose rules name */status; DELETE gets the old object', async () => {
    await configure('Validating', 'main', [webhook('main.podvirt.io', '/main', { rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['*'], resources: ['pods'] }] })]);
    await configure('Validating', 'status', [webhook('status.podvirt.io', '/status', { rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['UPDATE'], resources: ['*/status'] }] })]);
    assert.equal((await http(base(), 'POST', pods, podManifest('st'))).status, 201);
    const patched = await http(base(), 'PATCH', `${pods}/st/status`, { status: { phase: 'Running' } }, 'application/merge-patch+json');
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    assert.deepEqual(hook.reviews.map((r) => r.path), ['/main', '/status']);
    assert.equal(hook.reviews[1]?.request['subResource'], 'status');
    assert.equal(((hook.reviews[1]?.request['oldObject'] as JsonObject)['status'] as JsonObject)['phase'], 'Pending');
    assert.equal((await http(base(), 'DELETE', `${pods}/st?gracePeriodSeconds=0`)).status, 200);
    const del = hook.reviews[2]?.request as JsonObject;
    assert.equal(del['operation'], 'DELETE');
    assert.equal(del['object'], null);
    assert.equal((((del['oldObject'] as JsonObject)['metadata']) as JsonObject)['name'], 'st');
    assert.equal((del['options'] as JsonObject)['kind'], 'DeleteOptions');
  });

  test('failurePolicy: Fail refuses with "failed calling webhook" when the webhook cannot be called; Ignore lets the object in', async () => {
    await configure('Mutating', 'down', [webhook('down.podvirt.io', '/x', { clientConfig: { url: 'https://127.0.0.1:1/x', caBundle }, timeoutSeconds: 2 })]);
    const refused = await http(base(), 'POST', pods, podManifest('while-down'));
    assert.equal(refused.status, 500);
    assert.equal(refused.body['reason'], 'InternalError');
    assert.equal(refused.body['message'], 'Internal error occurred: failed calling webhook "down.podvirt.io": failed to call webhook: Post "https://127.0.0.1:1/x?timeout=2s": dial tcp 127.0.0.1:1: connect: connection refused');
    const out = await kubectl(tb.kubeconfigPath, ['apply', '-f', '-'], JSON.stringify(podManifest('while-down')));
    assert.match(out.stderr, /failed calling webhook "down\.podvirt\.io".*connection refused/);
    // A CA that did not sign the webhook's certificate is a failed call too.
    await http(base(), 'DELETE', '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/down');
    await configure('Mutating', 'untrusted', [webhook('untrusted.podvirt.io', '/x', { clientConfig: { url: hook.url('/x'), caBundle: wrongCa } })]);
    const untrusted = await http(base(), 'POST', pods, podManifest('while-down'));
    assert.equal(untrusted.status, 500);
    assert.match(String(untrusted.body['message']), /failed calling webhook "untrusted\.podvirt\.io": .*x509: certificate signed by unknown authority/);
    await http(base(), 'DELETE', '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/untrusted');
    await configure('Mutating', 'ignored', [webhook('ignored.podvirt.io', '/x', { clientConfig: { url: 'https://127.0.0.1:1/x', caBundle }, failurePolicy: 'Ignore' })]);
    assert.equal((await http(base(), 'POST', pods, podManifest('while-down'))).status, 201);
  });

  test('a webhook slower than its timeoutSeconds fails the call: context deadline exceeded', async () => {
    await configure('Validating', 'slow', [webhook('slow.podvirt.io', '/slow', { timeoutSeconds: 1 })]);
    hook.answers.set('/slow', () => new Promise((resolve) => setTimeout(() => resolve({}), 3000)));
    const res = await http(base(), 'POST', pods, podManifest('slow'));
    assert.equal(res.status, 500);
    assert.match(String(res.body['message']), /failed calling webhook "slow\.podvirt\.io": failed to call webhook: Post "https:\/\/127\.0\.0\.1:\d+\/slow\?timeout=1s": context deadline exceeded$/);
  });

  test('namespaceSelector, objectSelector and matchConditions decide who is called', async () => {
    await configure('Validating', 'selectors', [
      webhook('labelled-ns.podvirt.io', '/ns', { namespaceSelector: { matchLabels: { admission: 'on' } } }),
      webhook('labelled-object.podvirt.io', '/obj', { objectSelector: { matchExpressions: [{ key: 'checked', operator: 'Exists' }] } }),
      webhook('not-the-controller.podvirt.io', '/cel', {
        matchConditions: [{ name: 'not-controller', expression: "request.operation == 'CREATE' || !(request.userInfo.username in ['system:serviceaccount:podvirt:podvirt-controller'])" }],
      }),
    ]);
    assert.equal((await http(base(), 'POST', pods, podManifest('plain'))).status, 201);
    assert.deepEqual(hook.reviews.map((r) => r.path), ['/cel']);
    hook.reviews.length = 0;
    await http(base(), 'PATCH', '/api/v1/namespaces/default', { metadata: { labels: { admission: 'on' } } }, 'application/merge-patch+json');
    assert.equal((await http(base(), 'POST', pods, podManifest('checked', { metadata: { name: 'checked', labels: { checked: 'yes' } } }))).status, 201);
    assert.deepEqual(hook.reviews.map((r) => r.path).sort(), ['/cel', '/ns', '/obj']);
    hook.reviews.length = 0;
    // An UPDATE by the controller's service account skips the webhook with the condition.
    const asController = await fetch(`${base()}${pods}/plain`, {
      method: 'PATCH',
      headers: { 'Content-Type': 'application/merge-patch+json', Authorization: 'Bearer system:serviceaccount:podvirt:podvirt-controller' },
      body: JSON.stringify({ metadata: { annotations: { touched: 'yes' } } }),
    });
    assert.equal(asController.status, 200);
    assert.deepEqual(hook.reviews.map((r) => r.path), ['/ns']);
    await http(base(), 'PATCH', '/api/v1/namespaces/default', { metadata: { labels: { admission: null } } }, 'application/merge-patch+json');
  });

  test('a webhook on pods/eviction sees the Eviction and its refusal (429 with its message) reaches the client', async () => {
    await configure('Validating', 'evictions', [webhook('evictions.podvirt.io', '/evict', { rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['pods/eviction'] }] })]);
    const pod = podManifest('held');
    (pod['spec'] as JsonObject)['nodeName'] = 'node-1';
    assert.equal((await http(base(), 'POST', pods, pod)).status, 201);
    await http(base(), 'PATCH', `${pods}/held/status`, { status: { phase: 'Running' } }, 'application/merge-patch+json');
    hook.answers.set('/evict', () => ({ allowed: false, status: { code: 429, reason: 'TooManyRequests', message: 'Eviction triggered evacuation of VMI "default/vm"' } }));
    const res = await http(base(), 'POST', `${pods}/held/eviction`, { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'held', namespace: 'default' } });
    assert.equal(res.status, 429);
    assert.equal(res.body['message'], 'admission webhook "evictions.podvirt.io" denied the request: Eviction triggered evacuation of VMI "default/vm"');
    const seen = hook.reviews.find((r) => r.path === '/evict')?.request as JsonObject;
    assert.deepEqual({ kind: seen['kind'], resource: seen['resource'], subResource: seen['subResource'], name: seen['name'], operation: seen['operation'] },
      { kind: { group: 'policy', version: 'v1', kind: 'Eviction' }, resource: { group: '', version: 'v1', resource: 'pods' }, subResource: 'eviction', name: 'held', operation: 'CREATE' });
    assert.equal((await http(base(), 'GET', `${pods}/held`)).status, 200, 'not deleted');
    hook.answers.delete('/evict');
    assert.equal((await http(base(), 'POST', `${pods}/held/eviction`, { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'held' } })).status, 201);
  });

  test('dry-run: the webhook is told, nothing is stored', async () => {
    await configure('Mutating', 'dry', [webhook('dry.podvirt.io', '/dry', { sideEffects: 'NoneOnDryRun' })]);
    const res = await http(base(), 'POST', `${pods}?dryRun=All`, podManifest('dry'));
    assert.equal(res.status, 201);
    assert.equal(hook.reviews[0]?.request['dryRun'], true);
    assert.equal((await http(base(), 'GET', `${pods}/dry`)).status, 404);
  });

  test('a configuration kube-apiserver would refuse is refused, naming the field; defaults are filled in', async () => {
    const bad = await http(base(), 'POST', '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations', {
      apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name: 'bad' },
      webhooks: [{ ...webhook('bad.podvirt.io', '/bad'), sideEffects: undefined, matchConditions: [{ name: 'x', expression: 'object.metadata.name.matches("a")' }] }],
    });
    assert.equal(bad.status, 422);
    assert.match(String(bad.body['message']), /webhooks\[0\]\.sideEffects: Required value/);
    assert.match(String(bad.body['message']), /webhooks\[0\]\.matchConditions\[0\]\.expression: Invalid value/);
    await configure('Mutating', 'defaults', [webhook('defaults.podvirt.io', '/d')]);
    const got = await http(base(), 'GET', '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/defaults');
    const w = (got.body['webhooks'] as JsonObject[])[0] as JsonObject;
    assert.deepEqual(
      { failurePolicy: w['failurePolicy'], matchPolicy: w['matchPolicy'], timeoutSeconds: w['timeoutSeconds'], reinvocationPolicy: w['reinvocationPolicy'], namespaceSelector: w['namespaceSelector'] },
      { failurePolicy: 'Fail', matchPolicy: 'Equivalent', timeoutSeconds: 10, reinvocationPolicy: 'Never', namespaceSelector: {} },
    );
  });
  // ValidatingAdmissionPolicies, run as kube-apiserver runs them; real-control-plane-policies
  // checks the same manifests, the same requests and the same words on the real lane.
  describe('ValidatingAdmissionPolicy', () => {
    const admin = (args: string[], input?: string): Promise<KubectlResult> => kubectl(tb.kubeconfigPath, args, input);
    // kubectl sends no token over plain HTTP: the user is impersonated, as the real lane's test does.
    const as = (user: string, args: string[], input?: string): Promise<KubectlResult> => admin(['--as', user, ...args], input);
    const ok = async (p: Promise<KubectlResult>): Promise<string> => {
      const r = await p;
      assert.equal(r.code, 0, r.stderr);
      return r.stdout;
    };
    // kubectl create rolebinding sends protobuf, which this server does not read: the same object as JSON.
    const bind = (name: string, namespace: string, subject: { kind: 'User' | 'Group'; name: string }): Promise<string> => ok(admin(['create', '-f', '-'], JSON.stringify({
      apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name, namespace },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'podvirt-host-disk' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', ...subject }],
    })));
    const vmi = (name: string, hostDisk: boolean): string => JSON.stringify({
      apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', metadata: { name, namespace: 'default' },
      spec: hostDisk
        ? { domain: { devices: { disks: [{ name: 'host', disk: { bus: 'virtio' } }] } }, volumes: [{ name: 'host', hostDisk: { path: '/var/data/disk.img', type: 'DiskOrCreate', capacity: '1Gi' } }] }
        : { domain: { devices: {} } },
    });

    test('podvirt-host-disk: refused to a user without the grant, with kube-apiserver\'s words; a RoleBinding to podvirt-host-disk admits; a label write is left alone', async () => {
      await ok(admin(['apply', '-f', join(ROOT, 'manifests/20-host-disk.yaml')]));
      try {
        const refused = await as('alice', ['create', '-f', '-'], vmi('hd-refused', true));
        assert.notEqual(refused.code, 0);
        assert.equal(refused.stderr.trim(), 'Error from server (Forbidden): error when creating "STDIN": virtualmachineinstances.kubevirt.io "hd-refused" is forbidden: '
          + "ValidatingAdmissionPolicy 'podvirt-host-disk' with binding 'podvirt-host-disk' denied request: user alice may not use hostDisk volumes in namespace default: "
          + 'it needs the verb use on virtualmachineinstances/hostdisk (kubevirt.io), which the ClusterRole podvirt-host-disk grants');
        assert.equal((await admin(['get', 'vmi', 'hd-refused'])).code, 1, 'the refused VMI was not stored');
        await ok(as('alice', ['create', '-f', '-'], vmi('plain', false)));
        // A grant in another namespace is not one here; bound here (as a group member), admitted.
        await bind('elsewhere', 'kube-system', { kind: 'User', name: 'alice' });
        assert.notEqual((await as('alice', ['create', '-f', '-'], vmi('hd-refused', true))).code, 0);
        await bind('authenticated-host-disk', 'default', { kind: 'Group', name: 'system:authenticated' });
        await ok(as('alice', ['create', '-f', '-'], vmi('hd-granted', true)));
        await ok(admin(['delete', 'rolebinding', 'authenticated-host-disk', '-n', 'default']));
        await ok(as('alice', ['label', 'vmi', 'hd-granted', 'team=a']));
        // The volumes changed without the grant: refused again.
        const patched = await as('alice', ['patch', 'vmi', 'hd-granted', '--type=json', '-p', '[{"op":"replace","path":"/spec/volumes/0/hostDisk/path","value":"/var/data/other.img"}]']);
        assert.match(patched.stderr, /ValidatingAdmissionPolicy 'podvirt-host-disk' with binding 'podvirt-host-disk' denied request: user alice may not use hostDisk volumes/);
      } finally {
        await admin(['delete', '-f', join(ROOT, 'manifests/20-host-disk.yaml'), '--ignore-not-found']);
        await admin(['delete', 'rolebinding', '-n', 'kube-system', 'elsewhere', '--ignore-not-found']);
        await admin(['delete', 'vmi', '--all', '-n', 'default', '--wait=false']);
      }
    });

    test('podvirt-handler-node-restriction: variables, ternaries and all() as written; a denial naming no reason is 422', async () => {
      await ok(admin(['apply', '-f', join(ROOT, 'manifests/20-node-restriction.yaml')]));
      try {
        await ok(admin(['create', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-p' } })));
        const handler = 'system:serviceaccount:podvirt:podvirt-handler';
        const res = await fetch(`${base()}/api/v1/nodes/node-p`, {
          method: 'PATCH',
          headers: { 'Content-Type': 'application/merge-patch+json', Authorization: `Bearer ${handler}` },
          body: JSON.stringify({ metadata: { annotations: { 'kubevirt.io/heartbeat': '2026-01-01T00:00:00Z' } } }),
        });
        const status = await res.json() as JsonObject;
        assert.equal(res.status, 422);
        assert.equal(status['reason'], 'Invalid');
        assert.equal(status['message'], 'nodes "node-p" is forbidden: ValidatingAdmissionPolicy \'podvirt-handler-node-restriction\' with binding \'podvirt-handler-node-restriction\' denied request: '
          + 'the request carries no authentication.kubernetes.io/node-name claim (needs a service-account token bound to a Pod or a Node, Kubernetes >= 1.30)');
        // Anyone else is not matched by its condition.
        await ok(admin(['annotate', 'node', 'node-p', 'kubevirt.io/heartbeat=x']));
      } finally {
        await admin(['delete', '-f', join(ROOT, 'manifests/20-node-restriction.yaml'), '--ignore-not-found']);
        await admin(['delete', 'node', 'node-p', '--ignore-not-found']);
      }
    });

    test('a policy or binding this server would not evaluate as written is refused at write, naming the field', async () => {
      const policy = (spec: JsonObject): string => JSON.stringify({ apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingAdmissionPolicy', metadata: { name: 'p' }, spec });
      const rules = { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['pods'] }] };
      const bad = await admin(['create', '-f', '-'], policy({
        paramKind: { apiVersion: 'v1', kind: 'ConfigMap' }, matchConstraints: rules,
        variables: [{ name: 'n', expression: 'object.metadata.name' }],
        validations: [{ expression: "object.metadata.name.matches('^a')" }, { expression: 'variables.m == 1' }],
      }));
      assert.notEqual(bad.code, 0);
      assert.match(bad.stderr, /spec\.paramKind: Forbidden: params are not evaluated by the testbed's API server/);
      assert.match(bad.stderr, /spec\.validations\[0\]\.expression: Invalid value: "object\.metadata\.name\.matches\('\^a'\)": compilation failed: undeclared reference to 'matches'/);
      assert.match(bad.stderr, /spec\.validations\[1\]\.expression: Invalid value: "variables\.m == 1": compilation failed/);
      const warn = await admin(['create', '-f', '-'], JSON.stringify({ apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingAdmissionPolicyBinding', metadata: { name: 'b' }, spec: { policyName: 'p', validationActions: ['Warn'] } }));
      assert.match(warn.stderr, /spec\.validationActions\[0\]: Forbidden: the testbed's API server acts on Deny only/);
      // One it runs: the default message, its reason's code, failurePolicy defaulted.
      await ok(admin(['create', '-f', '-'], policy({ matchConstraints: rules, validations: [{ expression: "!object.metadata.name.startsWith('no-')", reason: 'Forbidden' }] })));
      await ok(admin(['create', '-f', '-'], JSON.stringify({ apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingAdmissionPolicyBinding', metadata: { name: 'b' }, spec: { policyName: 'p', validationActions: ['Deny'] } })));
      try {
        assert.equal(JSON.parse(await ok(admin(['get', 'validatingadmissionpolicy', 'p', '-o', 'json']))).spec.failurePolicy, 'Fail');
        const res = await http(base(), 'POST', pods, podManifest('no-pod'));
        assert.equal(res.status, 403);
        assert.equal(res.body['message'], 'pods "no-pod" is forbidden: ValidatingAdmissionPolicy \'p\' with binding \'b\' denied request: failed expression: !object.metadata.name.startsWith(\'no-\')');
        assert.equal((await http(base(), 'POST', pods, podManifest('yes-pod'))).status, 201);
      } finally {
        await admin(['delete', 'validatingadmissionpolicybinding', 'b']);
        await admin(['delete', 'validatingadmissionpolicy', 'p']);
      }
    });
  });
});
