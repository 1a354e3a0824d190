// From the connection settings to a ready-to-use client: the unix socket is probed first
// (see socket-probe.ts), TLS material is read from the files the flags name.
import { readFile } from 'node:fs/promises';
import * as grpc from '@grpc/grpc-js';
import { NodeApiClient } from './node-client.js';
import type { Connection } from './parse-args.js';
import { probeUnixSocket } from './socket-probe.js';
import { UsageError } from './usage-error.js';

export async function openNodeClient(connection: Connection, timeoutMs: number, signal?: AbortSignal): Promise<NodeApiClient> {
  if (connection.kind === 'unix') {
    await probeUnixSocket(connection.path, timeoutMs, signal);
    return new NodeApiClient(`unix:${connection.path}`, grpc.credentials.createInsecure(), connection.path);
  }
  const [ca, key, cert] = await Promise.all([
    connection.ca === undefined ? null : readFlagFile('ca', connection.ca, signal),
    readFlagFile('key', connection.key, signal),
    readFlagFile('cert', connection.cert, signal),
  ]);
  return new NodeApiClient(connection.address, grpc.credentials.createSsl(ca, key, cert), connection.address);
}

async function readFlagFile(flag: string, path: string, signal?: AbortSignal): Promise<Buffer> {
  try {
    return await readFile(path, signal === undefined ? {} : { signal });
  } catch (err) {
    if (signal?.aborted === true) throw err;
    const reason = err instanceof Error ? err.message : String(err);
    throw new UsageError(`cannot read --${flag} ${path}: ${reason}`, undefined, { cause: err });
  }
}
