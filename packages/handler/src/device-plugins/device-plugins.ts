// The handler's device plugins (KubeVirt's virt-handler device-manager, our own code): one
// plugin per host device node that exists, each serving on its own socket in the kubelet's
// device-plugins directory and registered with the kubelet there.
// - A device node that disappears makes its plugin's devices unhealthy, and healthy again when
//   it returns; one that appears after start gets its plugin then.
// - The kubelet removes every plugin socket when it restarts and re-creates kubelet.sock: a
//   removed plugin socket makes that plugin listen again, a new kubelet.sock re-registers all.
// - Registration that fails (no kubelet.sock yet, kubelet refusing) is retried with KubeVirt's
//   backoff, 1 s, 2 s, 5 s, then every 10 s; `registered` is false until every plugin is in,
//   and the handler's /readyz says so.

import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { KUBELET_SOCKET_NAME } from '@podvirt/proto';
import type { Logger } from 'pino';
import { DevicePluginServer } from './device-plugin-server.js';
import { DevicePluginService } from './device-plugin-service.js';
import { HOST_DEVICES, pluginSocketName, resourceName, type HostDevice } from './host-devices.js';
import type { KubeletRegistrar } from './kubelet-registration.js';
import { PathWatch } from './path-watch.js';

export const REGISTER_BACKOFF_MS: readonly number[] = [1_000, 2_000, 5_000, 10_000];

export interface DevicePluginsOptions {
  /** The kubelet's device-plugins directory: plugin sockets and kubelet.sock. */
  readonly dir: string;
  /** Where the host's /dev is seen from ("/" on the host; the host root in a container). */
  readonly deviceRoot: string;
  readonly devicesPerPlugin: number;
  readonly registrar: KubeletRegistrar;
  readonly log: Logger;
  readonly devices?: readonly HostDevice[];
  readonly backoffMs?: readonly number[];
}

interface Plugin {
  readonly device: HostDevice;
  readonly service: DevicePluginService;
  server: DevicePluginServer;
  socketWatch: PathWatch;
  registered: boolean;
}

export class DevicePlugins {
  readonly #o: DevicePluginsOptions;
  readonly #plugins = new Map<string, Plugin>();
  readonly #deviceWatches: PathWatch[] = [];
  readonly #abort = new AbortController();
  #kubeletWatch: PathWatch | undefined;
  #retry: NodeJS.Timeout | undefined;
  #attempt = 0;
  #registering: Promise<void> | undefined;
  #again = false;
  #pending: Promise<unknown>[] = [];
  #closing: Promise<void> | undefined;

  constructor(options: DevicePluginsOptions) {
    this.#o = options;
  }

  /** True once every running plugin is registered with the kubelet (and with no plugin at all). */
  get registered(): boolean {
    return [...this.#plugins.values()].every((p) => p.registered);
  }

  /** Resource names of the running plugins, e.g. devices.kubevirt.io/kvm. */
  get resources(): string[] {
    return [...this.#plugins.values()].map((p) => resourceName(p.device));
  }

  plugin(name: string): DevicePluginService | undefined {
    return this.#plugins.get(name)?.service;
  }

  async start(): Promise<void> {
    const { dir, log } = this.#o;
    await mkdir(dir, { recursive: true });
    this.#kubeletWatch = new PathWatch(join(dir, KUBELET_SOCKET_NAME), {
      kind: 'socket',
      onChange: (present) => {
        if (!present) return;
        log.info('kubelet.sock created (kubelet restarted), registering every device plugin again');
        for (const p of this.#plugins.values()) p.registered = false;
        this.#kick();
      },
      onError: (err) => log.warn({ err }, 'watching the device-plugins directory failed'),
    });
    await this.#kubeletWatch.start();
    for (const device of this.#o.devices ?? HOST_DEVICES) {
      const watch = new PathWatch(join(this.#o.deviceRoot, device.path), {
        onChange: (present) => this.#track(this.#devicePresence(device, present)),
        onError: (err) => log.warn({ err, device: device.path }, 'watching a device node failed'),
      });
      this.#deviceWatches.push(watch);
      if (await watch.start()) await this.#startPlugin(device);
      else log.info({ device: device.path }, 'device node absent, no device plugin for it');
    }
    this.#kick();
  }

  async #devicePresence(device: HostDevice, present: boolean): Promise<void> {
    const plugin = this.#plugins.get(device.name);
    if (plugin !== undefined) plugin.service.setHealthy(present);
    else if (present && !this.#closed) {
      await this.#startPlugin(device);
      this.#kick();
    }
  }

  get #closed(): boolean {
    return this.#abort.signal.aborted;
  }

  async #startPlugin(device: HostDevice): Promise<void> {
    const { dir, log } = this.#o;
    const plog = log.child({ plugin: resourceName(device) });
    const service = new DevicePluginService(device, this.#o.devicesPerPlugin, true, plog);
    const socketPath = join(dir, pluginSocketName(device));
    const server = await DevicePluginServer.listen(socketPath, service);
    const plugin: Plugin = { device, service, server, socketWatch: this.#socketWatch(device, socketPath), registered: false };
    this.#plugins.set(device.name, plugin);
    await plugin.socketWatch.start();
    plog.info({ socket: socketPath, devices: this.#o.devicesPerPlugin }, 'device plugin serving');
  }

  #socketWatch(device: HostDevice, socketPath: string): PathWatch {
    return new PathWatch(socketPath, {
      kind: 'socket',
      onChange: (present) => {
        if (!present && !this.#closed) this.#track(this.#relisten(device));
      },
      onError: (err) => this.#o.log.warn({ err }, 'watching a device plugin socket failed'),
    });
  }

  /** Our socket was removed (the kubelet does that when it restarts): serve and register anew. */
  async #relisten(device: HostDevice): Promise<void> {
    const plugin = this.#plugins.get(device.name);
    if (plugin === undefined) return;
    this.#o.log.info({ plugin: resourceName(device) }, 'device plugin socket removed, serving again');
    plugin.registered = false;
    plugin.socketWatch.close();
    await plugin.server.close({ keepSocket: true });
    if (this.#closed) return;
    plugin.server = await DevicePluginServer.listen(plugin.server.socketPath, plugin.service);
    plugin.socketWatch = this.#socketWatch(device, plugin.server.socketPath);
    await plugin.socketWatch.start();
    this.#kick();
  }

  #track(work: Promise<void>): void {
    const tracked = work.catch((err: unknown) => this.#o.log.error({ err }, 'device plugin change failed'));
    this.#pending.push(tracked);
    void tracked.finally(() => {
      this.#pending = this.#pending.filter((p) => p !== tracked);
    });
  }

  /** Registers what is unregistered now; one round at a time, a kick during a round runs another. */
  #kick(): void {
    if (this.#closed) return;
    clearTimeout(this.#retry);
    this.#retry = undefined;
    if (this.#registering !== undefined) {
      this.#again = true;
      return;
    }
    this.#registering = this.#registerRound().finally(() => {
      this.#registering = undefined;
      if (this.#again) {
        this.#again = false;
        this.#kick();
      }
    });
  }

  async #registerRound(): Promise<void> {
    const { log, registrar } = this.#o;
    let failed = false;
    for (const plugin of this.#plugins.values()) {
      if (plugin.registered || this.#closed) continue;
      const resource = resourceName(plugin.device);
      try {
        await registrar.register({ endpoint: pluginSocketName(plugin.device), resourceName: resource }, this.#abort.signal);
        plugin.registered = true;
        log.info({ plugin: resource }, 'device plugin registered with the kubelet');
      } catch (err) {
        if (this.#closed) return;
        failed = true;
        log.warn({ err, plugin: resource, attempt: this.#attempt + 1 }, 'device plugin registration failed, retrying');
      }
    }
    if (!failed) {
      this.#attempt = 0;
      return;
    }
    const backoff = this.#o.backoffMs ?? REGISTER_BACKOFF_MS;
    const delay = backoff[Math.min(this.#attempt, backoff.length - 1)] ?? 10_000;
    this.#attempt += 1;
    this.#retry = setTimeout(() => this.#kick(), delay);
    this.#retry.unref();
  }

  /** Stops watching, ends the streams, removes the sockets. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#abort.abort();
      clearTimeout(this.#retry);
      this.#kubeletWatch?.close();
      for (const w of this.#deviceWatches) w.close();
      await Promise.allSettled([this.#registering, ...this.#pending]);
      await Promise.all([...this.#plugins.values()].map(async (p) => {
        p.socketWatch.close();
        await p.server.close();
      }));
    })();
    return this.#closing;
  }
}
