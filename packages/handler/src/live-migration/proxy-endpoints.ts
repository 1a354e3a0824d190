// The real MigrationEndpoints: the TLS proxy (../migration-proxy/) with the sockets where each pod's
// streams meet it (../migration-proxy/migration-sockets.ts). The target proxy dials its pod's own
// libvirt daemon for the connection stream and the pod's migrationproxy sockets, where the
// incoming qemu listens, for memory and disks; the source proxy listens on those same in-pod
// paths in its own pod and the source launcher's Migrate names them.

import { lstat, stat, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { HandlerError } from '../handler-error.js';
import { listenSource, listenTarget, type MigrationTls } from '../migration-proxy/migration-proxy.js';
import { hostMigrationSocket, MIGRATION_STREAMS, migrationUris, type MigrationStream } from '../migration-proxy/migration-sockets.js';
import type { EndpointTarget, MigrationEndpoints, SourceEndpoint, TargetEndpoint } from './migration-endpoints.js';

// The launcher runs virtqemud where the distribution has it, else libvirtd (one or the other).
const DAEMON_SOCKETS = ['virtqemud-sock', 'libvirt-sock'] as const;
const LIBVIRT_RUNTIME_EMPTY_DIR = 'libvirt-runtime';

export interface ProxyEndpointsOptions {
  /** `--migration-address`: where the target listens, and what it advertises. */
  readonly address: string;
  readonly tls: MigrationTls;
}

export class ProxyEndpoints implements MigrationEndpoints {
  readonly #o: ProxyEndpointsOptions;

  constructor(o: ProxyEndpointsOptions) {
    this.#o = o;
  }

  async openTarget(o: EndpointTarget): Promise<TargetEndpoint> {
    const streams = new Map<number, string>([
      [MIGRATION_STREAMS.libvirt, await daemonSocket(o.launcherSocket)],
      [MIGRATION_STREAMS.memory, hostMigrationSocket(o.launcherSocket, o.uid, MIGRATION_STREAMS.memory)],
      [MIGRATION_STREAMS.disks, hostMigrationSocket(o.launcherSocket, o.uid, MIGRATION_STREAMS.disks)],
    ]);
    const proxy = await listenTarget({ address: this.#o.address, tls: this.#o.tls, streams, log: o.log });
    const ports = Object.fromEntries([...proxy.ports].map(([port, stream]) => [String(port), stream]));
    return { address: this.#o.address, ports, close: () => proxy.close() };
  }

  async openSource(o: EndpointTarget & { readonly address: string; readonly ports: Readonly<Record<string, number>> }): Promise<SourceEndpoint> {
    const streams = new Map<string, number>();
    for (const [port, stream] of Object.entries(o.ports)) {
      if (!isStream(stream) || !/^\d+$/.test(port)) throw new HandlerError('HANDLER_ERR_MIGRATION_PROXY', `targetDirectMigrationNodePorts: ${port} → ${stream} is not a migration stream`);
      streams.set(hostMigrationSocket(o.launcherSocket, o.uid, stream), Number(port));
    }
    if (streams.size !== Object.keys(MIGRATION_STREAMS).length) throw new HandlerError('HANDLER_ERR_MIGRATION_PROXY', `targetDirectMigrationNodePorts names ${streams.size} of the ${Object.keys(MIGRATION_STREAMS).length} streams`);
    const proxy = await listenSource({ address: o.address, tls: this.#o.tls, streams, log: o.log });
    return { ...migrationUris(o.uid), close: () => proxy.close() };
  }

  async sweepSource(o: EndpointTarget): Promise<void> {
    await Promise.all(Object.values(MIGRATION_STREAMS).map((stream) => removeStaleSocket(hostMigrationSocket(o.launcherSocket, o.uid, stream))));
  }
}

/** Only socket files are removed: the in-pod directory is the launcher's too. */
async function removeStaleSocket(path: string): Promise<void> {
  const st = await lstat(path).catch(() => undefined);
  if (st?.isSocket() === true) await unlink(path).catch(() => undefined);
}

function isStream(value: number): value is MigrationStream {
  return (Object.values(MIGRATION_STREAMS) as number[]).includes(value);
}

/** The target pod's daemon socket, beside its launcher socket (`<pod>/volumes/kubernetes.io~empty-dir/…`). */
async function daemonSocket(launcherSocket: string): Promise<string> {
  const dir = join(dirname(dirname(launcherSocket)), LIBVIRT_RUNTIME_EMPTY_DIR);
  for (const name of DAEMON_SOCKETS) {
    const path = join(dir, name);
    if (await stat(path).then((s) => s.isSocket(), () => false)) return path;
  }
  throw new HandlerError('HANDLER_ERR_MIGRATION_PROXY', `no libvirt daemon socket in the target pod (${dir})`);
}
