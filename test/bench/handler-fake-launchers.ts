// Launchers without VMs for the handler benchmarks: one grpc-js Cmd server per VMI on a real
// unix socket at the kubelet pods-dir path the handler discovers, answering the calls a
// running VM gets (Info, Ping, GetDomain, Sync, WatchDomain, Pause/Unpause, Shutdown …) from
// a domain held in memory, and GetDomainStats with a small guest's libvirt stats. It counts open domain streams: that is how "re-adopted" is seen;
// and the GetDomainStats calls it answered: that is how "read on scrape only" is seen.
import { mkdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { PatchStrategy, setHeaderOptions, type CustomObjectsApi } from '@kubernetes/client-node';
import { CMD_VERSIONS, cmd, shutdownGrpcServer } from '@podvirt/proto';
import type { TestApiServer } from '../e2e/testbed-helpers.js';
import { repoRoot, StackProcess } from '../testbed/index.js';

export const LAUNCHER_SOCKET_SUBPATH = join('volumes', 'kubernetes.io~empty-dir', 'sockets', 'launcher-sock');

// What libvirt reports for a small running guest: 1 vCPU, a balloon, one NIC, two drives.
const BENCH_STATS: cmd.DomainStats = {
  values: {
    'state.state': 1, 'state.reason': 1, 'cpu.time': 5.2e9, 'cpu.user': 1.1e9, 'cpu.system': 2.3e9, 'cpu.cache.monitor.count': 0,
    'balloon.current': 131072, 'balloon.maximum': 131072, 'balloon.swap_in': 0, 'balloon.swap_out': 0, 'balloon.major_fault': 120,
    'balloon.minor_fault': 34000, 'balloon.unused': 90000, 'balloon.available': 120000, 'balloon.usable': 100000,
    'balloon.last-update': 1700000000, 'balloon.disk_caches': 4000, 'balloon.rss': 180000,
    'vcpu.current': 1, 'vcpu.maximum': 1, 'vcpu.0.state': 1, 'vcpu.0.time': 4.1e9, 'vcpu.0.wait': 0, 'vcpu.0.delay': 2e7,
    'net.count': 1, 'net.0.rx.bytes': 150000, 'net.0.rx.pkts': 1200, 'net.0.rx.errs': 0, 'net.0.rx.drop': 0,
    'net.0.tx.bytes': 90000, 'net.0.tx.pkts': 800, 'net.0.tx.errs': 0, 'net.0.tx.drop': 0,
    'block.count': 2, 'block.0.backingIndex': 1, 'block.0.rd.reqs': 900, 'block.0.rd.bytes': 2.1e7, 'block.0.rd.times': 3e8,
    'block.0.wr.reqs': 40, 'block.0.wr.bytes': 4e5, 'block.0.wr.times': 2e7, 'block.0.fl.reqs': 10, 'block.0.fl.times': 1e6,
    'block.0.allocation': 0, 'block.0.capacity': 1.6e7, 'block.0.physical': 1.6e7,
    'block.1.rd.reqs': 30, 'block.1.rd.bytes': 1e5, 'block.1.rd.times': 1e6, 'block.1.wr.reqs': 0, 'block.1.wr.bytes': 0,
    'block.1.wr.times': 0, 'block.1.fl.reqs': 0, 'block.1.fl.times': 0,
  },
  labels: {
    'net.0.name': 'tap0', 'net.0.alias': 'default', 'block.0.name': 'vda', 'block.0.alias': 'rootdisk', 'block.0.path': '/var/run/kubevirt/disk.qcow2',
    'block.1.name': 'vdb', 'block.1.alias': 'cloudinit', 'block.1.path': '/var/run/kubevirt/noCloud.iso',
  },
};

type Stream = grpc.ServerWritableStream<cmd.WatchDomainRequest, cmd.WatchDomainEvent>;

export class BenchLauncher {
  readonly path: string;
  readonly #server = new grpc.Server();
  readonly #streams = new Set<Stream>();
  #domain: cmd.Domain | undefined;
  /** GetDomainStats calls answered since the launcher started. */
  statsReads = 0;

  private constructor(podsDir: string, podUid: string) {
    this.path = join(podsDir, podUid, LAUNCHER_SOCKET_SUBPATH);
  }

  static async start(podsDir: string, podUid: string): Promise<BenchLauncher> {
    const l = new BenchLauncher(podsDir, podUid);
    await mkdir(dirname(l.path), { recursive: true });
    l.#server.addService(cmd.CmdService, l.#implementation());
    await new Promise<void>((resolve, reject) =>
      l.#server.bindAsync(`unix:${l.path}`, grpc.ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve())),
    );
    return l;
  }

  get openStreams(): number {
    return this.#streams.size;
  }

  /** Ends the domain streams, then stops the server the one way (calls still running are cut after 500 ms). */
  close(): Promise<void> {
    for (const s of this.#streams) s.end();
    this.#streams.clear();
    return shutdownGrpcServer(this.#server, 500);
  }

  #set(patch: Partial<cmd.Domain>): void {
    this.#domain = cmd.Domain.fromPartial({ ...this.#domain, ...patch, observedAtMs: Date.now() });
    for (const s of this.#streams) s.write({ event: { $case: 'domain', value: this.#domain } });
  }

  #implementation(): cmd.CmdServer {
    const ok = <Res>(fn: () => Res) => (_call: unknown, callback: grpc.sendUnaryData<Res>): void => callback(null, fn());
    const none = (_call: unknown, callback: grpc.sendUnaryData<never>): void => callback({ code: grpc.status.UNIMPLEMENTED, details: 'bench launcher' });
    return {
      info: ok(() => ({ supportedVersions: [...CMD_VERSIONS], negotiatedVersion: 1, launcherVersion: 'bench', libvirtVersion: '', qemuVersion: '' })),
      ping: ok(() => ({})),
      getDomain: ok(() => (this.#domain === undefined ? {} : { domain: this.#domain })),
      sync: ok(() => {
        if (this.#domain === undefined) this.#set({ state: 'Running', reason: 'Booted' });
        return { domain: this.#domain };
      }),
      pause: ok(() => (this.#set({ state: 'Paused', reason: 'User', pausedByUser: true }), {})),
      unpause: ok(() => (this.#set({ state: 'Running', reason: 'Unpaused', pausedByUser: false }), {})),
      shutdown: ok(() => (this.#set({ state: 'Shutoff', reason: 'Shutdown' }), {})),
      kill: ok(() => (this.#set({ state: 'Shutoff', reason: 'Destroyed' }), {})),
      delete: ok(() => (this.#set({ deleted: true }), {})),
      watchDomain: (call: Stream) => {
        this.#streams.add(call);
        const drop = (): void => void this.#streams.delete(call);
        call.on('cancelled', drop);
        call.on('close', drop);
        call.on('error', drop);
        call.write(this.#domain === undefined ? { event: { $case: 'noDomain', value: {} } } : { event: { $case: 'domain', value: this.#domain } });
      },
      freeze: none, unfreeze: none, softReboot: none, reset: none, getDomainStats: ok(() => (this.statsReads++, BENCH_STATS)),
      getGuestInfo: none, getUsers: none, getFilesystems: none, guestPing: none,
      prepareMigrationTarget: none, migrate: none, cancelMigration: none,
    };
  }
}

// The handler under benchmark: the real binary against the test API server, on node NODE.
export const NODE = 'bench-node';
export const VMI_API = { group: 'kubevirt.io', version: 'v1', namespace: 'default', plural: 'virtualmachineinstances' };
const handlerBin = join(repoRoot(import.meta.url), 'packages/handler/bin/podvirt-handler.js');

export async function rssMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1] ?? NaN) / 1024;
}

export function startHandler(api: TestApiServer, dir: string, podsDir: string): StackProcess {
  return new StackProcess({
    name: 'handler',
    argv: [process.execPath, handlerBin, '--kubeconfig', api.kubeconfigPath, '--node-name', NODE, '--pods-dir', podsDir,
      '--ghost-record-dir', join(dir, 'records'), '--node-api-socket', join(dir, 'node.sock'), '--metrics-port', '0', '--health-port', '0', '--disable-device-plugins'],
    env: { ...process.env },
  });
}

export async function runningCount(custom: CustomObjectsApi): Promise<{ running: number; failed: number }> {
  const list = (await custom.listNamespacedCustomObject(VMI_API)) as { items: Array<{ status?: { phase?: string } }> };
  return {
    running: list.items.filter((v) => v.status?.phase === 'Running').length,
    failed: list.items.filter((v) => v.status?.phase === 'Failed').length,
  };
}

export async function createVmi(custom: CustomObjectsApi, i: number): Promise<void> {
  const name = `bench-${i}`;
  // No pod network: a fake launcher is no process in a pod, so the handler's pod-network phase
  // (which enters the launcher process's network namespace before the first Sync) would find
  // nothing and retry for ever; without the opt-out, defaulting adds the `default` pod interface.
  const created = (await custom.createNamespacedCustomObject({
    ...VMI_API,
    body: {
      apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance',
      metadata: { name, namespace: 'default' },
      spec: { domain: { devices: { autoattachPodInterface: false }, resources: { requests: { memory: '128Mi' } } } },
    },
  })) as Record<string, unknown>;
  // What the controller would have written by the time the launcher pod runs.
  const status = { phase: 'Scheduled', nodeName: NODE, activePods: { [`p${i}`]: NODE } };
  await custom.replaceNamespacedCustomObjectStatus({ ...VMI_API, name, body: { ...created, status } });
  // Only now does the VMI enter this node's informer, complete, as it would after scheduling.
  await custom.patchNamespacedCustomObject(
    { ...VMI_API, name, body: { metadata: { labels: { 'kubevirt.io/nodeName': NODE } } } },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
}
