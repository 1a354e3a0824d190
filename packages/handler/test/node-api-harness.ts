// A handler's node API end to end in one process: HandlerController over the in-memory API
// server, a fake launcher on a real unix socket, and NodeApiServer on a temp socket, with a
// promise-returning client. Everything is closed by the test context, leak checks included.

import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import type { VirtualMachineInstance } from '@podvirt/api';
import { node, promiseClient, type PromiseMethods } from '@podvirt/proto';
import { GuestStreams } from '../src/guest-stream/guest-streams.js';
import { HandlerController } from '../src/handler-controller.js';
import { NodeApiServer, type NodeApiTls } from '../src/node-api/node-api-server.js';
import { nodeApiService } from '../src/node-api/node-api-service.js';
import { NodeOperations } from '../src/node-api/node-operations.js';
import { VmiResolver } from '../src/node-api/vmi-resolver.js';
import { FakeEvents, FakeKube } from './fake-kube.js';
import { FakeLauncher } from './fake-launcher.js';
import { makeVmi, NODE, quietLog, type VmiShape } from './fixtures.js';

export const KEY = 'default/vm1';

export interface NodeApiHarness {
  readonly dir: string;
  readonly kube: FakeKube;
  readonly events: FakeEvents;
  readonly launcher: FakeLauncher;
  readonly server: NodeApiServer;
  readonly calls: string[];
  readonly streams: GuestStreams;
  readonly client: node.NodeClient;
  readonly controller: HandlerController;
  vmi(): VirtualMachineInstance;
  /** The node API's calls through @podvirt/proto's promise client, as podvirtctl makes them. */
  readonly node: NodeCalls;
}

/** `tls` file names are relative to the harness dir, which `prepare` fills first. */
export async function nodeApiHarness(
  t: TestContext,
  shape: VmiShape = {},
  tls?: Omit<NodeApiTls, 'host' | 'port'>,
  prepare?: (dir: string) => Promise<void>,
): Promise<NodeApiHarness> {
  const dir = await mkdtemp(join(tmpdir(), 'pvh-api-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  await prepare?.(dir);
  const launcher = await FakeLauncher.start({ podsDir: dir, podUid: 'p1' });
  t.after(() => launcher.close());
  const kube = new FakeKube();
  const events = new FakeEvents();
  kube.create(makeVmi(shape));
  const controller = new HandlerController({
    nodeName: NODE, podsDir: dir, vmiApi: kube, eventApi: events, log: quietLog(), workers: 2, watchdogMs: 30_000,
    resyncPeriodMs: 60_000, launcherTimeouts: { shortMs: 500, longMs: 2_000 }, backoff: { baseDelayMs: 50, maxDelayMs: 400 }, reconnectBaseMs: 20,
  });
  t.after(async () => {
    await controller.close(2_000);
    assert.equal(launcher.openStreams, 0, 'WatchDomain streams left open');
  });
  const ops = new NodeOperations({
    resolver: new VmiResolver({ nodeName: NODE, local: controller.informer, remote: kube }),
    launchers: controller.registry,
    recorder: controller.recorder,
    list: () => controller.informer.list(),
    enqueue: (key) => controller.queue.add(key),
    holdForAnswer: (key) => controller.holdForAnswer(key),
    log: quietLog(),
  });
  const calls: string[] = [];
  const observe = (method: string, code: string): number => calls.push(`${method} ${code}`);
  const streams = new GuestStreams({ resolver: ops, log: quietLog(), observe });
  const service = nodeApiService(ops, quietLog(), observe, streams);
  const server = await NodeApiServer.listen({
    socketPath: join(dir, 'node-api', 'node.sock'), service,
    tls: tls === undefined
      ? undefined
      : {
        host: '127.0.0.1', port: 0, certFile: join(dir, tls.certFile), keyFile: join(dir, tls.keyFile), clientCaFile: join(dir, tls.clientCaFile), allowedClients: tls.allowedClients,
        ...(tls.reloadMs === undefined ? {} : { reloadMs: tls.reloadMs }),
      },
  });
  t.after(() => server.close());
  const ac = new AbortController();
  t.after(() => ac.abort());
  await controller.start(ac.signal);
  const client = new node.NodeClient(`unix:${server.socketPath}`, grpc.credentials.createInsecure());
  t.after(() => client.close());
  return {
    dir, kube, events, launcher, server, calls, streams, client, controller,
    vmi: () => kube.current(KEY) ?? assert.fail('VMI vanished'),
    node: nodeCalls(client),
  };
}

export type NodeCalls = PromiseMethods<typeof node.NodeService>;

/** Failures stay grpc ServiceErrors, for tests that check the exact status. */
export function nodeCalls(client: node.NodeClient): NodeCalls {
  return promiseClient(node.NodeService, client, { timeoutMs: 5_000 });
}

/** Matches a gRPC failure by status code and a fragment of its details. */
export function grpcFailure(code: grpc.status, details: RegExp) {
  return (err: unknown): boolean => {
    const e = err as grpc.ServiceError;
    assert.equal(grpc.status[e.code], grpc.status[code], e.details);
    assert.match(e.details, details);
    return true;
  };
}
