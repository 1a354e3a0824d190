// What the migration flow needs from the proxy (the TLS module beside this one), as a role
// interface: the target opens TLS listeners for its pod's streams and says where they are; the
// source opens unix sockets in its pod that tunnel to them and says which URIs its launcher's
// daemon and qemu use. Unit tests pass a fake; main.ts the real one (proxy-endpoints.ts).

import type { Logger } from 'pino';

export interface TargetEndpoint {
  /** What the target advertises: `targetNodeAddress`. */
  readonly address: string;
  /** `targetDirectMigrationNodePorts`: node port (as a string) → stream (MIGRATION_STREAMS). */
  readonly ports: Readonly<Record<string, number>>;
  close(): Promise<void>;
}

export interface SourceEndpoint {
  /** The destination daemon as the source launcher's daemon reaches it (qemu+unix:///system?socket=…). */
  readonly destinationUri: string;
  /** unix:///… for memory and for the disks. */
  readonly migrateUri: string;
  readonly disksUri: string;
  close(): Promise<void>;
}

export interface EndpointTarget {
  readonly uid: string;
  /** The launcher's socket on the host: its pod's emptyDirs are beside it. */
  readonly launcherSocket: string;
  readonly log: Logger;
}

export interface MigrationEndpoints {
  openTarget(o: EndpointTarget): Promise<TargetEndpoint>;
  openSource(o: EndpointTarget & { readonly address: string; readonly ports: Readonly<Record<string, number>> }): Promise<SourceEndpoint>;
  /** Removes what a source endpoint of an earlier handler process (killed, never closed) left in the pod. */
  sweepSource(o: EndpointTarget): Promise<void>;
}
