// One plugin's DevicePlugin service (kubelet device plugin API v1beta1). ListAndWatch sends the
// whole list at once and again whenever the node's device appears or disappears (all IDs share
// one device node, so they are healthy or unhealthy together), and an empty list when the plugin
// stops so the kubelet drops the devices at once. Allocate answers only the device node: no
// environment, mounts or annotations.

import * as grpc from '@grpc/grpc-js';
import { DEVICE_HEALTHY, DEVICE_UNHEALTHY, type deviceplugin } from '@podvirt/proto';
import type { Logger } from 'pino';
import { DEVICE_PERMISSIONS, deviceIds, type HostDevice } from './host-devices.js';

type Stream = grpc.ServerWritableStream<deviceplugin.Empty, deviceplugin.ListAndWatchResponse>;

export class DevicePluginService {
  readonly device: HostDevice;
  readonly #ids: readonly string[];
  readonly #idSet: ReadonlySet<string>;
  readonly #streams = new Set<Stream>();
  readonly #log: Logger;
  #healthy: boolean;

  constructor(device: HostDevice, count: number, healthy: boolean, log: Logger) {
    this.device = device;
    this.#ids = deviceIds(device, count);
    this.#idSet = new Set(this.#ids);
    this.#healthy = healthy;
    this.#log = log;
  }

  get healthy(): boolean {
    return this.#healthy;
  }

  get watchers(): number {
    return this.#streams.size;
  }

  list(): deviceplugin.ListAndWatchResponse {
    const health = this.#healthy ? DEVICE_HEALTHY : DEVICE_UNHEALTHY;
    return { devices: this.#ids.map((ID) => ({ ID, health })) };
  }

  setHealthy(healthy: boolean): void {
    if (healthy === this.#healthy) return;
    this.#healthy = healthy;
    this.#log.info({ device: this.device.path, healthy }, healthy ? 'device node present, devices healthy' : 'device node gone, devices unhealthy');
    const list = this.list();
    for (const stream of this.#streams) stream.write(list);
  }

  /** Ends every ListAndWatch with an empty list (the API has no deregistration). */
  endStreams(): void {
    for (const stream of this.#streams) {
      stream.write({ devices: [] });
      stream.end();
    }
    this.#streams.clear();
  }

  implementation(): deviceplugin.DevicePluginServer {
    return {
      getDevicePluginOptions: (_call, callback) => callback(null, { preStartRequired: false, getPreferredAllocationAvailable: false }),
      listAndWatch: (call) => {
        this.#streams.add(call);
        const drop = (): void => {
          this.#streams.delete(call);
        };
        call.on('cancelled', drop);
        call.on('close', drop);
        call.on('error', drop);
        call.write(this.list());
      },
      getPreferredAllocation: (call, callback) => {
        // Not advertised in the options; any choice among identical devices is as good.
        const containerResponses = call.request.containerRequests.map((r) => ({
          deviceIDs: [...r.mustIncludeDeviceIDs, ...r.availableDeviceIDs.filter((id) => !r.mustIncludeDeviceIDs.includes(id))].slice(0, r.allocationSize),
        }));
        callback(null, { containerResponses });
      },
      allocate: (call, callback) => {
        const problem = this.#allocateProblem(call.request);
        if (problem !== undefined) {
          callback({ code: grpc.status.INVALID_ARGUMENT, details: problem });
          return;
        }
        const spec = { hostPath: this.device.path, containerPath: this.device.path, permissions: DEVICE_PERMISSIONS };
        this.#log.info({ containers: call.request.containerRequests.map((r) => r.devicesIds.length) }, 'allocate');
        callback(null, {
          containerResponses: call.request.containerRequests.map(() => ({ envs: {}, mounts: [], devices: [spec], annotations: {}, cdiDevices: [] })),
        });
      },
      preStartContainer: (_call, callback) => callback(null, {}),
    };
  }

  #allocateProblem(request: deviceplugin.AllocateRequest): string | undefined {
    for (const [i, container] of request.containerRequests.entries()) {
      for (const [j, id] of container.devicesIds.entries()) {
        if (!this.#idSet.has(id)) return `container_requests[${i}].devices_ids[${j}]: ${JSON.stringify(id)} is not a device of ${this.device.name}`;
      }
    }
    return undefined;
  }
}
