// Faults of the real control plane under a running podvirt (etcd, kube-apiserver,
// kube-controller-manager and kube-scheduler built by tools/build-binaries): kube-apiserver killed
// with SIGKILL while a VM runs and while a VMI starts, then started again; etcd restarted; a watch
// whose resource version the restarted API server no longer holds (etcd compacted behind it) gets
// 410 and relists. No VM is lost (same qemu, VMI Running), no VMI is stuck (the one starting
// reaches Running), and the writes of each podvirt ServiceAccount during a fault stay small: they
// are counted per user from kube-apiserver's audit log (apiserver_request_total has no user).
// Then the audit log of the whole run answers for RBAC: no call of the controller or the handler
// was refused, and every permission their ClusterRoles grant was used or has its reason below.
//
// PODVIRT_SKIP_REAL_CONTROL_PLANE=1 skips it, as real-control-plane.test.ts.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { createServer as createHttpsServer, request as httpsRequest, type Server as HttpsServer } from 'node:https';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, test } from 'node:test';
import { VMI_RESOURCE, type VirtualMachineInstance } from '@podvirt/api';
import { Informer, KubeClient, ResourceClient } from '@podvirt/kube-runtime';
import { eventually } from '@podvirt/test-support';
import { callOf, countBy, readAuditLog, requestsOf, serviceAccountUser, writesOf, type AuditEvent } from '../testbed/control-plane/audit-log.js';
import { etcdCompact, etcdPut, etcdRevision } from '../testbed/control-plane/etcd-gateway.js';
import type { RealControlPlane } from '../testbed/control-plane/real-control-plane.js';
import { StackProcess, type LogLine } from '../testbed/index.js';
import { allManifests } from './ship-manifests-helpers.js';
import { rbacUse, showRequest } from './rbac-audit.js';
import { permission } from './ship-rbac-rules.js';
import { guestVmi, NS, VmiSuite } from './vmi-stack.js';

const skip = process.env['PODVIRT_SKIP_REAL_CONTROL_PLANE'] === '1' ? 'PODVIRT_SKIP_REAL_CONTROL_PLANE=1' : false;

const CONTROLLER = serviceAccountUser('podvirt', 'podvirt-controller');
const HANDLER = serviceAccountUser('podvirt', 'podvirt-handler');
// How long the API server stays down: past a heartbeat and several informer retries, but within
// the controller's lease renew deadline (10 s): a longer outage makes the controller lose its
// lease and exit 1 ("leadership ended", end lost), for its Deployment to restart it, which the
// testbed does not do for a controller run from the source tree.
const DOWN_MS = 6_000;
// etcd stopped: its stop, this pause and the API server's reconnection stay within that deadline too.
const ETCD_DOWN_MS = 3_000;
// The handler beats every 2–4.4 s (its interval plus up to 1.2 × of jitter), so at least one beat
// falls in DOWN_MS and fails, which its log must say; a 4 s interval could span the outage.
const HEARTBEAT = '2s';
// Writes per ServiceAccount in one fault window (down time + recovery, ~30-60 s). A healthy run
// writes a heartbeat every 3.2 s on average and a few status updates; a retry loop without backoff writes
// hundreds in that time.
const MAX_WRITES_PER_FAULT = 40;
const FINAL_PHASE_BOUND_MS = 120_000;
const KEEP = 'vm-keep';
const STARTING = 'vm-starting';

/**
 * Permissions of the controller's and the handler's ClusterRoles that this run may not reach,
 * and why. Every other granted permission must show in the audit log.
 */
const NOT_EXERCISED: Record<string, string> = {
  [permission('kubevirt.io', 'virtualmachineinstances', 'get')]: 'a re-read after a conflicting write only (both components)',
  [permission('', 'events', 'patch')]: 'a repeated Event only (both components fold repeats into a count)',
  [permission('kubevirt.io', 'virtualmachineinstancemigrations', 'get')]: 'a re-read after a conflicting write of a migration only',
  [permission('kubevirt.io', 'virtualmachineinstancemigrations', 'patch')]: 'a migration\'s finalizer, while a migration runs (vmi-migration e2e, from its own audit log on the real lane)',
  [permission('kubevirt.io', 'virtualmachineinstancemigrations/status', 'update')]: 'a migration\'s status, while a migration runs (vmi-migration e2e, from its own audit log on the real lane)',
  [permission('kubevirt.io', 'virtualmachineinstances', 'create')]: 'a VirtualMachine\'s VMI (vm-lifecycle e2e)',
  [permission('kubevirt.io', 'virtualmachineinstances', 'delete')]: 'a VirtualMachine stopped or restarted (vm-lifecycle e2e)',
  [permission('kubevirt.io', 'virtualmachines', 'patch')]: 'a Halted VirtualMachine asked to start (vm-lifecycle e2e)',
  [permission('kubevirt.io', 'virtualmachines/status', 'update')]: 'a VirtualMachine\'s status (vm-lifecycle e2e)',
  [permission('kubevirt.io', 'virtualmachineinstancemigrations', 'create')]: 'an evacuated VMI\'s migration, in a node drain (vmi-drain e2e)',
  [permission('kubevirt.io', 'virtualmachineinstances/status', 'patch')]: 'clearing status.evacuationNodeName once an evacuated VMI left its node (vmi-drain e2e)',
  [permission('', 'nodes', 'patch')]: 'the controller labels a Node whose handler went silent (vmi-node-gone e2e); the handler\'s own heartbeat patch shows here',
  [permission('kubevirt.io', 'virtualmachines', 'get')]: 'a fresh read of a VirtualMachine before it adopts an ownerless VMI of its name (controller-vm e2e)',
  // Never a request of their own: kube-apiserver's OwnerReferencesPermissionEnforcement asks the
  // authorizer for it when a launcher pod (owner: the VMI) or a VM's VMI carries
  // blockOwnerDeletion; the pod create in the log succeeding is the proof for the VMI's.
  [permission('kubevirt.io', 'virtualmachineinstances/finalizers', 'update')]: 'asked by admission for a launcher pod\'s blockOwnerDeletion, not a request',
  [permission('kubevirt.io', 'virtualmachines/finalizers', 'update')]: 'asked by admission for a VM\'s VMI\'s blockOwnerDeletion, not a request',
  [permission('coordination.k8s.io', 'leases', 'create')]: 'the first leader election of a namespace only; a restarted control plane keeps the Lease',
};

/**
 * An HTTPS proxy in front of kube-apiserver (with the server's own certificate, forwarding as
 * admin) that can hold its clients' requests while the server behind it restarts, as a load
 * balancer in front of several API servers does. On release it ends each held watch cleanly, as a
 * watch timeout does, so the client resumes from its old resource version, now on a server whose
 * watch cache started after that version.
 */
class HoldingProxy {
  readonly #server: HttpsServer;
  readonly #held = new Set<ServerResponse>();
  readonly #waiting: Array<() => void> = [];
  #holding = false;
  port = 0;

  constructor(target: URL, tls: { ca: Buffer; cert: Buffer; key: Buffer; serverCert: Buffer; serverKey: Buffer }) {
    this.#server = createHttpsServer({ cert: tls.serverCert, key: tls.serverKey }, (req, res) => {
      const forward = (): void => {
        const headers = { ...req.headers, host: target.host };
        const up = httpsRequest(new URL(req.url ?? '/', target), { method: req.method, headers, ca: tls.ca, cert: tls.cert, key: tls.key }, (upRes) => {
          res.writeHead(upRes.statusCode ?? 502, upRes.headers);
          upRes.on('data', (c: Buffer) => res.write(c));
          upRes.on('end', () => res.end());
          upRes.on('error', () => this.#lost(res));
        });
        up.on('error', () => this.#lost(res));
        req.pipe(up);
      };
      if (this.#holding) this.#waiting.push(forward);
      else forward();
    });
  }

  #lost(res: ServerResponse): void {
    if (this.#holding) this.#held.add(res);
    else res.destroy();
  }

  async listen(): Promise<void> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    const address = this.#server.address();
    this.port = typeof address === 'object' && address !== null ? address.port : 0;
  }

  /** From now on a response whose server side broke stays open, and new requests wait. */
  hold(): void {
    this.#holding = true;
  }

  /** Ends every held response cleanly and forwards the requests that waited. */
  release(): void {
    this.#holding = false;
    for (const res of this.#held) res.end();
    this.#held.clear();
    for (const forward of this.#waiting.splice(0)) forward();
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise((resolve) => this.#server.close(resolve));
  }
}

describe('faults of the real control plane: no VM lost, no VMI stuck, no write storm', { skip }, () => {
  const report: string[] = [];
  /**
   * From each restart of kube-apiserver until its /readyz said ok. It serves requests before that,
   * while its RBAC caches still fill: a request then may be refused (403) as any client of a
   * restarting API server sees; the clients retry.
   */
  const notReady: Array<[number, number]> = [];
  /**
   * podvirt-controller exits when it cannot renew its lease within the renew deadline (10 s), as
   * client-go's leader election does; in a cluster its Deployment starts it again. A kube-apiserver
   * that takes longer than that to come back (this 2-core machine under load) ends it so: the
   * test then starts it again as the Deployment would, and says so.
   */
  let replacement: StackProcess | undefined;
  const controllerNow = (): StackProcess => replacement ?? suite.stack.controller;
  async function restartApiserver(): Promise<void> {
    const from = Date.now();
    await cp().restart('kube-apiserver');
    notReady.push([from, Date.now()]);
    const gone = controllerNow();
    if (gone.running) return;
    const exit = await gone.exited;
    assert.ok(gone.lines.some((l) => l.msg === 'leadership ended' && l['end'] === 'lost'), `the controller exited (${JSON.stringify(exit)}) without losing its lease\n${gone.tail(30)}`);
    const command = suite.stack.controllerCommand;
    replacement = new StackProcess({ name: 'controller', argv: command.argv, env: { ...process.env, ...command.env } });
    const started = replacement;
    report.push(`podvirt-controller lost its lease while kube-apiserver was away (exit ${String(exit.code)}); started again, as its Deployment would`);
    await suite.eventually('the controller started again', () => Promise.resolve(started.lines.some((l) => l.msg === 'controller started') ? true : undefined), 60_000);
  }
  const suite = VmiSuite.setUp({
    stack: { controlPlane: 'real', handlerArgs: [`--heartbeat-interval=${HEARTBEAT}`] },
    beforeClose: async (s) => {
      console.log(`real control plane faults:\n  ${report.join('\n  ')}`);
      await s.kubectl(['delete', 'vmi', '--all', '--wait=false']);
      for (const name of [KEEP, STARTING]) await s.waitForGone(name).catch(() => undefined);
      await replacement?.stop();
    },
  });
  const cp = (): RealControlPlane => suite.stack.testbed.controlPlane ?? assert.fail('the stack runs on the real control plane');
  const audit = (): Promise<AuditEvent[]> => readAuditLog(cp().auditLogPath);
  const linesSince = (p: StackProcess, from: number): LogLine[] => p.lines.slice(from);

  /** Runs a fault; counts each podvirt ServiceAccount's writes from its start to the end of `run`. */
  async function fault(what: string, run: () => Promise<void>): Promise<void> {
    const from = Date.now();
    await run();
    const to = Date.now();
    const events = await audit();
    for (const user of [CONTROLLER, HANDLER]) {
      const writes = writesOf(events, user, from, to);
      report.push(`${what} (${Math.round((to - from) / 1000)} s): ${user.split(':').pop() ?? ''} wrote ${writes.count}: ${writes.calls}`);
      assert.ok(writes.count <= MAX_WRITES_PER_FAULT, `${what}: ${writes.count} writes by ${user}: ${writes.calls}`);
    }
  }

  /** Both components listed again after `since` (their informers came back). */
  async function relisted(since: number): Promise<void> {
    await suite.eventually('controller and handler list VMIs again', async () => {
      const events = await audit();
      const listed = (user: string): boolean => requestsOf(events, user, since).some((e) => e.verb === 'list' && e.objectRef?.resource === 'virtualmachineinstances' && e.responseStatus?.code === 200);
      return listed(CONTROLLER) && listed(HANDLER) ? true : undefined;
    }, 90_000);
  }

  /**
   * Polls the VMI until `done` holds: the suite's own watch (client-node's ListWatch) does not
   * come back after the API server died, so phases after a fault are read with GETs.
   */
  async function polled(name: string, what: string, done: (vmi: VirtualMachineInstance | undefined) => boolean): Promise<VirtualMachineInstance | undefined> {
    return suite.eventually(`${name} ${what}`, async () => {
      const vmi = await suite.vmi(name);
      return done(vmi) ? { vmi } : undefined;
    }, FINAL_PHASE_BOUND_MS).then((r) => r.vmi);
  }

  async function stillRunning(name: string, qemu: readonly number[]): Promise<void> {
    assert.ok(controllerNow().running, `the controller runs\n${controllerNow().tail(20)}`);
    const vmi = await suite.vmi(name);
    assert.equal(vmi?.status?.phase, 'Running', `${name} after the fault\n${suite.diagnostics()}`);
    assert.deepEqual(await suite.qemuPids(name), qemu, `the same qemu runs ${name}`);
  }

  test('kube-apiserver killed while a VM runs and while a VMI starts, etcd restarted: the VM stays, the VMI starts', async () => {
    await suite.apply(guestVmi(suite.guest, KEEP));
    const keep = await suite.waitForPhase(KEEP, 'Running');
    await suite.waitForGuestReady(keep);
    const qemu = await suite.qemuPids(KEEP);
    assert.equal(qemu.length, 1);
    const { controller, handler } = suite.stack;

    // 1. The API server dies (SIGKILL) under a running VM, and comes back.
    let c0 = controller.lines.length;
    let h0 = handler.lines.length;
    await fault('kube-apiserver SIGKILL, VM running', async () => {
      cp().process('kube-apiserver')?.kill('SIGKILL');
      await sleep(DOWN_MS);
      const back = Date.now();
      await restartApiserver();
      report.push(`kube-apiserver ready again ${Date.now() - back} ms after its restart`);
      await relisted(back);
      await stillRunning(KEEP, qemu);
    });
    // What they said: the watches broke and were retried; the heartbeat failed while it was down.
    assert.ok(linesSince(controller, c0).some((l) => l.msg === 'list or watch failed, retrying'), controller.tail(30));
    assert.ok(linesSince(handler, h0).some((l) => l.msg === 'list or watch failed, retrying'), handler.tail(30));
    assert.ok(linesSince(handler, h0).some((l) => l.msg === 'heartbeat failed'), handler.tail(30));

    // 2. The API server dies while a VMI starts (its launcher pod made, not yet running); the VMI still reaches Running.
    await fault('kube-apiserver SIGKILL, VMI starting', async () => {
      await suite.apply(guestVmi(suite.guest, STARTING));
      // Scheduling: its launcher pod exists; Scheduled: the pod is up, the domain not yet started.
      const created = await polled(STARTING, 'has its launcher pod', (v) => ['Scheduling', 'Scheduled'].includes(v?.status?.phase ?? ''));
      cp().process('kube-apiserver')?.kill('SIGKILL');
      const killedAt = Date.now();
      report.push(`kube-apiserver killed with ${STARTING} ${created?.status?.phase ?? ''}, ${(await suite.qemuPids(STARTING)).length} qemu running for it`);
      await sleep(DOWN_MS);
      await restartApiserver();
      await polled(STARTING, 'Running', (v) => v?.status?.phase === 'Running');
      report.push(`${STARTING} Running ${Date.now() - killedAt} ms after the kill (bound ${FINAL_PHASE_BOUND_MS} ms)`);
      const running = await suite.vmi(STARTING);
      assert.equal((await suite.podsOf(running as VirtualMachineInstance)).length, 1, 'one launcher pod, not a second one made while the server was away');
      await stillRunning(KEEP, qemu);
    });

    // 3. etcd stops and starts again behind a running API server.
    c0 = controller.lines.length;
    h0 = handler.lines.length;
    await fault('etcd restarted', async () => {
      await cp().process('etcd')?.stop();
      await sleep(ETCD_DOWN_MS);
      await cp().restart('etcd');
      const back = Date.now();
      // A write goes through again once the API server reconnected.
      await suite.eventually('a write after etcd restarted', async () =>
        ((await suite.kubectl(['annotate', 'vmi', KEEP, `faults/etcd-restarted=${back}`, '--overwrite'])).code === 0 ? true : undefined), 90_000);
      // The handler's heartbeat lands again (its patch is answered 200 after the restart).
      await suite.eventually('a heartbeat after etcd restarted', async () =>
        (requestsOf(await audit(), HANDLER, back).some((e) => e.verb === 'patch' && e.objectRef?.resource === 'nodes' && e.responseStatus?.code === 200) ? true : undefined), 60_000);
      await stillRunning(KEEP, qemu);
      await stillRunning(STARTING, await suite.qemuPids(STARTING));
    });
    // A short etcd outage is absorbed by kube-apiserver (its requests wait for etcd): what each said is reported.
    for (const [name, p, from] of [['controller', controller, c0], ['handler', handler, h0]] as const) {
      report.push(`${name} warnings during the etcd restart: ${[...new Set(linesSince(p, from).filter((l) => l.level >= 40).map((l) => l.msg))].join(' | ') || 'none'}`);
    }

    // After the faults the lifecycle still ends: the VMI that started during one is deleted to Succeeded, its pod removed.
    const starting = await suite.vmi(STARTING);
    assert.equal((await suite.kubectl(['delete', 'vmi', STARTING, '--wait=false'])).code, 0);
    const ended = await polled(STARTING, 'Succeeded or gone', (v) => v === undefined || v.status?.phase === 'Succeeded');
    assert.ok(ended === undefined || ended.status?.phase === 'Succeeded', JSON.stringify(ended?.status));
    await suite.waitForGone(STARTING);
    await suite.waitForPodsGone(starting as VirtualMachineInstance);
  });

  test('a watch resumed on a restarted API server after an etcd compaction gets 410 Gone and relists', async () => {
    const { pki } = cp();
    const [ca, cert, key, serverCert, serverKey] = [pki.caCert, pki.admin.cert, pki.admin.key, pki.apiServer.cert, pki.apiServer.key].map((f) => readFileSync(f)) as [Buffer, Buffer, Buffer, Buffer, Buffer];
    const relay = new HoldingProxy(new URL(cp().url), { ca, cert, key, serverCert, serverKey });
    await relay.listen();
    const client = await KubeClient.create({
      server: `https://127.0.0.1:${relay.port}`, insecureSkipTlsVerify: false,
      certificateAuthority: { path: pki.caCert }, clientCertificate: { path: pki.admin.cert }, clientKey: { path: pki.admin.key },
    }, { userAgent: 'podvirt-faults-test' });
    const logged: Array<{ level: string; msg: string }> = [];
    const names = new Set<string>();
    const informer = new Informer<VirtualMachineInstance>({
      source: new ResourceClient<VirtualMachineInstance>(client, VMI_RESOURCE).listWatch(NS),
      onEvent: (type, vmi) => {
        if (type === 'DELETED') names.delete(vmi.metadata.name ?? '');
        else names.add(vmi.metadata.name ?? '');
      },
      log: { info: (_o: object, msg: string) => logged.push({ level: 'info', msg }), warn: (_o: object, msg: string) => logged.push({ level: 'warn', msg }) },
      resyncPeriodMs: 3_600_000,
      retryMs: 500,
    });
    informer.start();
    try {
      await eventually(() => (names.has(KEEP) ? true : undefined), { what: 'the informer lists the VMIs', deadlineMs: 30_000 });
      relay.hold();
      cp().process('kube-apiserver')?.kill('SIGKILL');
      await cp().process('kube-apiserver')?.exited;
      // Behind the dead API server's back: etcd's revision moves on and is compacted up to there,
      // as the API server's own compaction would have done. The informer's version is now history.
      const before = await etcdRevision(cp().etcdUrl);
      const after = await etcdPut(cp().etcdUrl, '/podvirt-faults-test/bump', String(Date.now()));
      await etcdCompact(cp().etcdUrl, after);
      report.push(`etcd revision ${before} → ${after}, compacted up to ${after}`);
      await restartApiserver();
      const resumedAt = Date.now();
      relay.release();
      await eventually(() => (logged.some((l) => l.msg === 'watch expired, relisting') ? true : undefined), { what: 'the informer says its watch expired', deadlineMs: 60_000, detail: () => JSON.stringify(logged) });
      // The API server's side: a watch resumed from an old version (answered by an ERROR event with
      // the 410 Status inside a 200 stream, so the log shows the request), then a new list.
      // The informer says so before it lists, and the audit log is written behind the requests:
      // read it until the relist shows.
      const mine = async (): Promise<AuditEvent[]> => (await audit()).filter((e) => e.userAgent === 'podvirt-faults-test' && Date.parse(e.requestReceivedTimestamp) >= resumedAt - 1000);
      const resumedWatch = (events: readonly AuditEvent[]): AuditEvent | undefined => events.find((e) => e.verb === 'watch' && /resourceVersion=\d+/.test(e.requestURI));
      let last: readonly AuditEvent[] = [];
      const seen = await eventually(async () => {
        const events = (last = await mine());
        const watch = resumedWatch(events);
        return watch !== undefined && events.some((e) => e.verb === 'list' && Date.parse(e.requestReceivedTimestamp) >= Date.parse(watch.requestReceivedTimestamp)) ? events : undefined;
      }, { what: 'a resumed watch, then a list, in the audit log', deadlineMs: 30_000, detail: () => last.map((e) => `${e.verb} ${e.requestURI}`).join('\n') });
      const resumed = resumedWatch(seen) ?? assert.fail('a resumed watch');
      const version = Number(/resourceVersion=(\d+)/.exec(resumed.requestURI)?.[1]);
      assert.ok(version < after, `the watch resumed from ${version}, older than the compaction at ${after}`);
      const listed = (await suite.custom.listNamespacedCustomObject({ group: 'kubevirt.io', version: 'v1', namespace: NS, plural: 'virtualmachineinstances' })) as { items: VirtualMachineInstance[] };
      assert.deepEqual([...names].sort(), listed.items.map((v) => v.metadata.name ?? '').sort(), 'the relisted cache holds every VMI');
      report.push(`410: watch resumed from ${version} < ${after}; informer said ${JSON.stringify(logged.map((l) => l.msg))}`);
      assert.equal((await suite.vmi(KEEP))?.status?.phase, 'Running', `${KEEP} still Running`);
    } finally {
      await informer.close();
      await client.close();
      await relay.close();
    }
  });

  test('RBAC from the audit log: nothing the controller or handler asked was refused; every granted permission used or explained', async () => {
    const manifests = await allManifests();
    const lines: string[] = [];
    for (const name of ['podvirt-controller', 'podvirt-handler'] as const) {
      const use = await rbacUse(cp().auditLogPath, manifests, 'podvirt', name);
      assert.ok(use.requests.length > 0, `${name} made requests`);
      const whileStarting = (e: AuditEvent): boolean => notReady.some(([from, to]) => Date.parse(e.requestReceivedTimestamp) >= from && Date.parse(e.requestReceivedTimestamp) <= to);
      report.push(`${name}: refused while kube-apiserver was starting (retried): ${use.refused.filter(whileStarting).map(showRequest).join(', ') || 'none'}`);
      assert.deepEqual(use.refused.filter((e) => !whileStarting(e)).map(showRequest), [], `${name} was refused by a ready kube-apiserver`);
      for (const p of use.granted) {
        if (use.used.has(p)) continue;
        assert.ok(NOT_EXERCISED[p] !== undefined, `${name} is granted ${p}, which the run never used and no reason names (too broad?)`);
      }
      assert.deepEqual(use.ungranted, [], `${name} used permissions its roles do not grant`);
      lines.push(`${name}: ${[...countBy(use.requests, callOf)].map(([k, n]) => `${k} ×${n}`).join(', ')}`);
    }
    report.push(...lines);
  });
});
