// The kubelet's device manager, as far as the testbed needs it: the Registration service on
// <device-plugins dir>/kubelet.sock; for each registered plugin a ListAndWatch stream that keeps
// the resource's devices and their health; per-resource capacity (all devices) and allocatable
// (healthy ones) for the Node status; and Allocate when a container that requests the resource
// starts, picking free healthy devices and keeping them until the pod ends. Like the real
// kubelet, it empties the directory when it starts (every plugin must register again) and, when a
// plugin's stream ends, keeps the resource's capacity but makes none of it allocatable.

import { lstat, mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { DEVICE_HEALTHY, DEVICE_PLUGIN_API_VERSION, KUBELET_SOCKET_NAME, deviceplugin, promiseClient, shutdownGrpcServer } from '@podvirt/proto';
import type { Logger } from 'pino';

/** How long close() waits for calls in flight before it cuts them. */
const REGISTRY_SHUTDOWN_MS = 2_000;

export interface ResourceCount {
  readonly capacity: number;
  readonly allocatable: number;
}

/** A device spec the plugin answered, with the container's name for it. */
export type AllocatedDevice = deviceplugin.DeviceSpec;

export class DeviceAllocationError extends Error {
  readonly code = 'TESTBED_DEVICE_ALLOCATION';
}

interface Endpoint {
  readonly resource: string;
  readonly client: deviceplugin.DevicePluginClient;
  readonly stream: grpc.ClientReadableStream<deviceplugin.ListAndWatchResponse>;
  readonly devices: Map<string, string>;
  ended: boolean;
}

const ALLOCATE_TIMEOUT_MS = 10_000;

export class DevicePluginRegistry {
  readonly dir: string;
  readonly #log: Logger;
  readonly #onChange: () => void;
  readonly #endpoints = new Map<string, Endpoint>();
  /** `<pod uid>/<container>` → resource → device IDs. */
  readonly #allocations = new Map<string, Map<string, string[]>>();
  readonly #server = new grpc.Server();
  #closed = false;

  constructor(options: { dir: string; log: Logger; onChange: () => void }) {
    this.dir = options.dir;
    this.#log = options.log.child({ subcomponent: 'device-manager' });
    this.#onChange = options.onChange;
  }

  get socketPath(): string {
    return join(this.dir, KUBELET_SOCKET_NAME);
  }

  async start(): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    await Promise.all((await readdir(this.dir)).map((name) => rm(join(this.dir, name), { force: true, recursive: true })));
    this.#server.addService(deviceplugin.RegistrationService, {
      register: (call: grpc.ServerUnaryCall<deviceplugin.RegisterRequest, deviceplugin.Empty>, callback: grpc.sendUnaryData<deviceplugin.Empty>) => {
        const problem = registrationProblem(call.request);
        if (problem !== undefined) {
          this.#log.warn({ request: call.request, problem }, 'device plugin registration refused');
          callback({ code: grpc.status.INVALID_ARGUMENT, details: problem });
          return;
        }
        this.#connect(call.request.resourceName, call.request.endpoint);
        callback(null, {});
      },
    } satisfies deviceplugin.RegistrationServer);
    await new Promise<void>((resolve, reject) =>
      this.#server.bindAsync(`unix:${this.socketPath}`, grpc.ServerCredentials.createInsecure(), (err) => (err === null ? resolve() : reject(err))));
  }

  #connect(resource: string, endpoint: string): void {
    this.#drop(resource);
    const client = new deviceplugin.DevicePluginClient(`unix:${join(this.dir, endpoint)}`, grpc.credentials.createInsecure());
    const stream = client.listAndWatch({});
    const ep: Endpoint = { resource, client, stream, devices: new Map(), ended: false };
    this.#endpoints.set(resource, ep);
    this.#log.info({ resource, endpoint }, 'device plugin registered');
    stream.on('data', (res: deviceplugin.ListAndWatchResponse) => {
      ep.devices.clear();
      for (const d of res.devices) ep.devices.set(d.ID, d.health);
      this.#onChange();
    });
    const ended = (err?: Error): void => {
      if (ep.ended) return;
      ep.ended = true;
      if (!this.#closed && err !== undefined) this.#log.info({ resource, err: err.message }, 'device plugin stream ended');
      this.#onChange();
    };
    stream.on('error', ended);
    stream.on('end', () => ended());
  }

  #drop(resource: string): void {
    const old = this.#endpoints.get(resource);
    if (old === undefined) return;
    old.ended = true;
    old.stream.cancel();
    old.client.close();
  }

  /** Capacity and allocatable per registered resource. */
  resources(): Map<string, ResourceCount> {
    const out = new Map<string, ResourceCount>();
    for (const [resource, ep] of this.#endpoints) {
      const healthy = ep.ended ? 0 : [...ep.devices.values()].filter((h) => h === DEVICE_HEALTHY).length;
      out.set(resource, { capacity: ep.devices.size, allocatable: healthy });
    }
    return out;
  }

  /** Devices in use per resource (what `kubectl describe node` counts from the pods). */
  allocated(resource: string): number {
    let n = 0;
    for (const byResource of this.#allocations.values()) n += byResource.get(resource)?.length ?? 0;
    return n;
  }

  /**
   * The device specs for a container's extended resources (`requests`: resource → count).
   * A container restarting keeps the devices it had. Throws DeviceAllocationError when a
   * resource has no plugin or too few free healthy devices.
   */
  async allocate(key: string, requests: ReadonlyMap<string, number>): Promise<AllocatedDevice[]> {
    const specs: AllocatedDevice[] = [];
    const mine = this.#allocations.get(key) ?? new Map<string, string[]>();
    for (const [resource, count] of requests) {
      const ep = this.#endpoints.get(resource);
      if (ep === undefined || ep.ended) throw new DeviceAllocationError(`no device plugin serves ${resource}`);
      let ids = mine.get(resource);
      if (ids === undefined) {
        const taken = new Set([...this.#allocations.values()].flatMap((m) => m.get(resource) ?? []));
        const free = [...ep.devices].filter(([id, health]) => health === DEVICE_HEALTHY && !taken.has(id)).map(([id]) => id);
        if (free.length < count) throw new DeviceAllocationError(`requested ${count} of ${resource}, ${free.length} free and healthy`);
        ids = free.slice(0, count);
      }
      const plugin = promiseClient(deviceplugin.DevicePluginService, ep.client, { timeoutMs: ALLOCATE_TIMEOUT_MS });
      let res: deviceplugin.AllocateResponse;
      try {
        res = await plugin.allocate({ containerRequests: [{ devicesIds: ids }] });
      } catch (err) {
        throw new DeviceAllocationError(`device plugin for ${resource} failed Allocate: ${(err as grpc.ServiceError).details || String(err)}`, { cause: err });
      }
      mine.set(resource, ids);
      this.#allocations.set(key, mine);
      specs.push(...(res.containerResponses[0]?.devices ?? []));
    }
    return specs;
  }

  /** Frees every device of the pod's containers (keys `<pod uid>/…`). */
  release(podUid: string): void {
    for (const key of [...this.#allocations.keys()]) if (key.startsWith(`${podUid}/`)) this.#allocations.delete(key);
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const resource of [...this.#endpoints.keys()]) this.#drop(resource);
    // A plugin still holding its Registration call must not hold the kubelet's close for ever.
    await shutdownGrpcServer(this.#server, REGISTRY_SHUTDOWN_MS);
    await rm(this.socketPath, { force: true });
  }
}

function registrationProblem(req: deviceplugin.RegisterRequest): string | undefined {
  if (req.version !== DEVICE_PLUGIN_API_VERSION) return `version ${JSON.stringify(req.version)} is not supported, only ${DEVICE_PLUGIN_API_VERSION}`;
  if (!/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?\/[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/.test(req.resourceName) || req.resourceName.startsWith('kubernetes.io/')) {
    return `resource_name ${JSON.stringify(req.resourceName)} is not an extended resource name (domain/name outside kubernetes.io)`;
  }
  if (req.endpoint === '' || req.endpoint.includes('/')) return `endpoint ${JSON.stringify(req.endpoint)} must be a socket name in ${KUBELET_SOCKET_NAME}'s directory`;
  return undefined;
}

/** The node's device behind a spec's host path, under `hostRoot` (`/` on a real node). */
export async function deviceNumbers(hostRoot: string, spec: AllocatedDevice): Promise<{ type: 'c' | 'b'; major: number; minor: number; mode: number }> {
  const st = await lstat(join(hostRoot, spec.hostPath));
  if (!st.isCharacterDevice() && !st.isBlockDevice()) throw new DeviceAllocationError(`${spec.hostPath} is not a device node`);
  // Linux dev_t: major in bits 8-19 (and 32+), minor in bits 0-7 and 20-31.
  const major = Number((BigInt(st.rdev) >> 8n) & 0xfffn);
  const minor = Number((BigInt(st.rdev) & 0xffn) | ((BigInt(st.rdev) >> 12n) & 0xfff00n));
  return { type: st.isCharacterDevice() ? 'c' : 'b', major, minor, mode: st.mode & 0o777 };
}

/** The Node status with the plugins' resources added to capacity and allocatable. */
export function withDeviceResources<S extends { capacity?: Record<string, string>; allocatable?: Record<string, string> }>(status: S, resources: ReadonlyMap<string, ResourceCount>): S {
  const capacity = { ...status.capacity };
  const allocatable = { ...status.allocatable };
  for (const [name, count] of resources) {
    capacity[name] = String(count.capacity);
    allocatable[name] = String(count.allocatable);
  }
  return { ...status, capacity, allocatable };
}
