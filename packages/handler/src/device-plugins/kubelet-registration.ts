// The kubelet's Registration service on <device-plugins dir>/kubelet.sock: one Register call per
// plugin, each on a fresh connection (the socket is re-created when the kubelet restarts, so a
// long-lived channel would point at the old one).

import * as grpc from '@grpc/grpc-js';
import { DEVICE_PLUGIN_API_VERSION, deviceplugin, promiseClient } from '@podvirt/proto';
import { HandlerError } from '../handler-error.js';

export interface RegistrationRequest {
  /** The plugin's socket name, relative to the device-plugins directory. */
  readonly endpoint: string;
  readonly resourceName: string;
}

/** What the plugins need from the kubelet; a fake in unit tests. */
export interface KubeletRegistrar {
  register(request: RegistrationRequest, signal: AbortSignal): Promise<void>;
}

const REGISTER_TIMEOUT_MS = 5_000;

export function kubeletRegistrar(kubeletSocket: string): KubeletRegistrar {
  return {
    async register(request, signal) {
      const client = new deviceplugin.RegistrationClient(`unix:${kubeletSocket}`, grpc.credentials.createInsecure());
      try {
        const registration = promiseClient(deviceplugin.RegistrationService, client, {
          timeoutMs: REGISTER_TIMEOUT_MS,
          toError: (err) => new HandlerError('HANDLER_ERR_DEVICE_PLUGIN', `kubelet refused or did not answer the registration of ${request.resourceName}: ${err.details || err.message}`, { cause: err }),
        });
        await registration.register({ version: DEVICE_PLUGIN_API_VERSION, endpoint: request.endpoint, resourceName: request.resourceName, options: { preStartRequired: false, getPreferredAllocationAvailable: false } }, { signal });
      } finally {
        client.close();
      }
    },
  };
}
