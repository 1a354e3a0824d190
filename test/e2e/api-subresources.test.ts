// KubeVirt's subresource API through the API server's aggregation layer, on the lane
// PODVIRT_TESTBED_CONTROL_PLANE names (the in-repo API server by default, kube-apiserver with
// `real`): a user with a Role granting virtualmachineinstances/pause, /unpause and /console in one
// namespace pauses, unpauses and opens the console of a VMI there (a websocket through the API
// server, podvirt-api and the node's handler), and is refused elsewhere and for verbs the Role
// does not grant, with a 403 naming the user and the verb; and starts a VirtualMachine through
// virtualmachines/start (202, the VM's runStrategy written; a second start 409, podvirtctl's too);
// VNC through it (the RFB banner). Fault:
// podvirt-api restarted mid-console closes the websocket with 1001 and leaves the guest as it was.
// The user is alice: a client certificate (CN=alice, O=tenants) on kube-apiserver, the bearer
// token `alice` on the in-repo API server (which takes a token as the user's name).
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import { eventually, openTestWebSocket, type WsConnectOptions } from '@podvirt/test-support';
import { writeKubeconfig, writeTlsKubeconfig } from '../testbed/apiserver/kubeconfig.js';
import { issueCertificate } from '../testbed/control-plane/cluster-pki.js';
import { controlPlaneFromEnv, guestVmi, NS, VmiSuite } from './vmi-stack.js';

const VM = 'tenant-vm';
const OTHER_NS = 'tenant-b';
const BASE = '/apis/subresources.kubevirt.io/v1/namespaces';

const lane = controlPlaneFromEnv().controlPlane === 'real' ? 'kube-apiserver' : 'the in-repo API server';

describe(`the subresource API as a tenant, through ${lane}`, () => {
  const suite = VmiSuite.setUp();
  /** How alice reaches the API server: TLS with her certificate, or plain HTTP with her token. */
  let as: { tls: { ca: string; cert: string; key: string } } | { headers: Record<string, string> };
  let url: URL;
  /** podvirtctl's way in as alice. */
  let aliceKubeconfig: string;

  before(async () => {
    const cp = suite.stack.testbed.controlPlane;
    url = new URL(suite.stack.testbed.apiUrl);
    aliceKubeconfig = join(suite.stack.stateDir, 'alice.kubeconfig');
    if (cp === undefined) {
      as = { headers: { authorization: 'Bearer alice' } };
      await writeKubeconfig(aliceKubeconfig, suite.stack.testbed.apiUrl, 'alice');
    } else {
      const alice = await issueCertificate(cp.pki, 'tenant-alice', '/CN=alice/O=tenants', 'clientAuth');
      const [ca, cert, key] = await Promise.all([cp.pki.caCert, alice.cert, alice.key].map((f) => readFile(f, 'utf8')));
      as = { tls: { ca: ca ?? '', cert: cert ?? '', key: key ?? '' } };
      await writeTlsKubeconfig(aliceKubeconfig, cp.url, cp.pki.caCert, alice);
    }
    await suite.apply(
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: OTHER_NS } },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'vm-operator', namespace: NS },
        rules: [
          { apiGroups: ['subresources.kubevirt.io'], resources: ['virtualmachineinstances/pause', 'virtualmachineinstances/unpause'], verbs: ['update'] },
          { apiGroups: ['subresources.kubevirt.io'], resources: ['virtualmachineinstances/console', 'virtualmachineinstances/vnc'], verbs: ['get'] },
          { apiGroups: ['subresources.kubevirt.io'], resources: ['virtualmachines/start'], verbs: ['update'] },
        ],
      },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'alice-vm-operator', namespace: NS },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'vm-operator' },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'alice' }],
      },
      // A graphics device for the vnc test.
      guestVmi(suite.guest, VM, { devices: { autoattachGraphicsDevice: true } }),
    );
    const running = await suite.waitForPhase(VM, 'Running');
    await suite.waitForGuestReady(running);
  });

  function put(path: string, body?: string): Promise<{ status: number; body: string }> {
    return new Promise((resolve, reject) => {
      const headers = { ...('headers' in as ? as.headers : {}), ...(body === undefined ? {} : { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) }) };
      const options = { host: url.hostname, port: url.port, path, method: 'PUT', headers, agent: false };
      const onResponse = (res: IncomingMessage): void => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      };
      const req = 'tls' in as ? httpsRequest({ ...options, ...as.tls }, onResponse) : httpRequest(options, onResponse);
      req.on('error', reject);
      req.end(body);
    });
  }

  const consoleAt = (namespace: string, stream: 'console' | 'vnc' = 'console'): WsConnectOptions => ({
    host: url.hostname, port: Number(url.port), path: `${BASE}/${namespace}/virtualmachineinstances/${VM}/${stream}`, protocol: 'plain.kubevirt.io',
    ...('tls' in as ? as.tls : { headers: as.headers }),
  });

  const paused = async (): Promise<boolean> => (await suite.vmi(VM))?.status?.conditions?.some((c) => c.type === 'Paused' && c.status === 'True') === true;

  test('pause and unpause in the namespace the Role grants', async () => {
    // The APIService turns Available once podvirt-api has written its caBundle.
    const first = await eventually(async () => {
      const r = await put(`${BASE}/${NS}/virtualmachineinstances/${VM}/pause`);
      return r.status === 503 ? undefined : r;
    }, { deadlineMs: 60_000, stepMs: 1_000, what: 'the aggregated API available' });
    assert.equal(first.status, 200, first.body);
    await eventually(paused, { deadlineMs: 30_000, what: 'Paused condition' });
    const resumed = await put(`${BASE}/${NS}/virtualmachineinstances/${VM}/unpause`);
    assert.equal(resumed.status, 200, resumed.body);
    await eventually(async () => !(await paused()), { deadlineMs: 30_000, what: 'Paused condition gone' });
    assert.ok(suite.stack.api?.lines.some((l) => l.msg === 'subresource served' && l['user'] === 'alice' && l['subresource'] === 'pause'));
  });

  test('podvirtctl with alice\'s kubeconfig: pause and unpause through the API server, refused in another namespace', async () => {
    const pause = await suite.podvirtctlAs(aliceKubeconfig, 'pause', `${NS}/${VM}`);
    assert.equal(pause.code, 0, pause.stderr);
    assert.equal(pause.stdout, `VMI ${NS}/${VM} was paused\n`);
    await eventually(paused, { deadlineMs: 30_000, what: 'Paused condition' });
    const unpause = await suite.podvirtctlAs(aliceKubeconfig, 'unpause', `${NS}/${VM}`);
    assert.equal(unpause.code, 0, unpause.stderr);
    await eventually(async () => !(await paused()), { deadlineMs: 30_000, what: 'Paused condition gone' });
    const elsewhere = await suite.podvirtctlAs(aliceKubeconfig, 'pause', `${OTHER_NS}/${VM}`);
    assert.equal(elsewhere.code, 1);
    assert.match(elsewhere.stderr, /User "alice" cannot update resource "virtualmachineinstances\/pause"/);
  });

  test('403 naming the user and the verb in another namespace and for a verb not granted', async () => {
    const elsewhere = await put(`${BASE}/${OTHER_NS}/virtualmachineinstances/${VM}/pause`);
    assert.equal(elsewhere.status, 403);
    assert.match(elsewhere.body, /User \\?"alice\\?" cannot update resource \\?"virtualmachineinstances\/pause\\?" in API group \\?"subresources.kubevirt.io\\?" in the namespace \\?"tenant-b\\?"/);
    const reset = await put(`${BASE}/${NS}/virtualmachineinstances/${VM}/reset`);
    assert.equal(reset.status, 403);
    assert.match(reset.body, /User \\?"alice\\?" cannot update resource \\?"virtualmachineinstances\/reset\\?"/);
  });

  test('the console: a websocket through the API server, a command typed and its answer read', async () => {
    const ws = await openTestWebSocket(consoleAt(NS));
    // A failed step leaves no socket open.
    try {
      assert.equal(ws.status, 101, ws.body);
      ws.send('\r');
      ws.send('cat /proc/sys/kernel/random/boot_id\r');
      const text = (): string => Buffer.concat(ws.frames.filter((f) => f.opcode === 0x2 || f.opcode === 0x1).map((f) => f.payload)).toString();
      await eventually(() => /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/.test(text()), { deadlineMs: 30_000, what: 'boot_id on the console', detail: text });
      ws.send(Buffer.from([0x03, 0xe8]), 0x8);
      await ws.closed;
    } finally {
      ws.destroy();
    }
    const elsewhere = await openTestWebSocket(consoleAt(OTHER_NS));
    elsewhere.destroy();
    assert.equal(elsewhere.status, 403);
    assert.match(elsewhere.body, /cannot get resource \\?"virtualmachineinstances\/console\\?"/);
  });

  test('vnc: a websocket through the API server, the guest\'s RFB banner arrives', async () => {
    const ws = await openTestWebSocket(consoleAt(NS, 'vnc'));
    try {
      assert.equal(ws.status, 101, ws.body);
      const bytes = (): string => Buffer.concat(ws.frames.filter((f) => f.opcode === 0x2).map((f) => f.payload)).toString('latin1');
      await eventually(() => /^RFB \d{3}\.\d{3}\n/.test(bytes()), { deadlineMs: 30_000, what: 'the RFB banner', detail: bytes });
      ws.send(Buffer.from([0x03, 0xe8]), 0x8);
      await ws.closed;
    } finally {
      ws.destroy();
    }
  });

  test('a VM started through virtualmachines/start: 202 and runStrategy Always; a second start 409; restart not granted 403', async () => {
    const name = 'tenant-halted';
    // Its VMI would wait for a node no one has: nothing boots for this test.
    const template = { spec: { ...(guestVmi(suite.guest, name)['spec'] as Record<string, unknown>), nodeSelector: { 'podvirt.io/e2e-nowhere': 'true' } } };
    await suite.apply({ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', metadata: { name, namespace: NS }, spec: { runStrategy: 'Halted', template } });
    try {
      const dry = await put(`${BASE}/${NS}/virtualmachines/${name}/start`, '{"dryRun":["All"]}');
      assert.equal(dry.status, 202, dry.body);
      const started = await put(`${BASE}/${NS}/virtualmachines/${name}/start`);
      assert.equal(started.status, 202, started.body);
      const strategy = await suite.kubectl(['get', 'virtualmachine', name, '-n', NS, '-o', 'jsonpath={.spec.runStrategy}']);
      assert.equal(strategy.stdout, 'Always', strategy.stderr);
      const again = await put(`${BASE}/${NS}/virtualmachines/${name}/start`);
      assert.equal(again.status, 409, again.body);
      assert.match(again.body, /already running|runStrategy Always: it starts by itself/);
      // podvirtctl takes the same subresource with alice's kubeconfig, and prints the refusal.
      const ctl = await suite.podvirtctlAs(aliceKubeconfig, 'start', 'vm', `${NS}/${name}`);
      assert.equal(ctl.code, 1, ctl.stdout);
      assert.match(ctl.stderr, /^error: .*(already running|runStrategy Always: it starts by itself)/);
      const restart = await put(`${BASE}/${NS}/virtualmachines/${name}/restart`);
      assert.equal(restart.status, 403);
      assert.match(restart.body, /cannot update resource \\?"virtualmachines\/restart\\?"/);
      assert.ok(suite.stack.api?.lines.some((l) => l.msg === 'subresource served' && l['user'] === 'alice' && l['subresource'] === 'start'));
    } finally {
      await suite.kubectl(['delete', 'virtualmachine', name, '-n', NS, '--wait=false']);
    }
  });

  test('podvirt-api restarted mid-console: the client gets close code 1001, the guest is untouched, a new console works', async () => {
    const open = () => openTestWebSocket(consoleAt(NS));
    const uuid = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/;
    const bootId = async (ws: Awaited<ReturnType<typeof open>>): Promise<string> => {
      const text = (): string => Buffer.concat(ws.frames.filter((f) => f.opcode === 0x2 || f.opcode === 0x1).map((f) => f.payload)).toString();
      ws.send('\r');
      ws.send('cat /proc/sys/kernel/random/boot_id\r');
      return eventually(() => uuid.exec(text())?.[0], { deadlineMs: 30_000, what: 'boot_id on the console', detail: text });
    };
    const before = await open();
    let first: string;
    try {
      assert.equal(before.status, 101, before.body);
      first = await bootId(before);
      await suite.stack.api.stop();
      await before.closed;
      const close = before.frames.find((f) => f.opcode === 0x8);
      assert.ok(close !== undefined, 'a close frame before the socket ends');
      assert.equal(close.payload.readUInt16BE(0), 1001);
      assert.match(close.payload.subarray(2).toString(), /podvirt-api is stopping; reconnect/);
    } finally {
      before.destroy();
    }
    await suite.stack.restartApi();
    const after = await eventually(async () => {
      const ws = await open();
      if (ws.status === 101) return ws;
      ws.destroy();
      return undefined;
    }, { deadlineMs: 60_000, stepMs: 500, what: 'a console through the restarted podvirt-api' });
    try {
      assert.equal(await bootId(after), first, 'the same boot: the guest was not restarted');
      after.send(Buffer.from([0x03, 0xe8]), 0x8);
      await after.closed;
    } finally {
      after.destroy();
    }
    assert.equal((await suite.vmi(VM))?.status?.phase, 'Running');
  });
});
