// Constants of the kubelet's device plugin API (v1beta1) that are not in the .proto: the
// version string a plugin registers with, where the kubelet looks for sockets, the health words.

export const DEVICE_PLUGIN_API_VERSION = 'v1beta1';
/** The kubelet's device-plugins directory on a node; the handler's default. */
export const DEVICE_PLUGINS_DIR = '/var/lib/kubelet/device-plugins';
/** The kubelet's Registration socket, inside the device-plugins directory. */
export const KUBELET_SOCKET_NAME = 'kubelet.sock';
export const DEVICE_HEALTHY = 'Healthy';
export const DEVICE_UNHEALTHY = 'Unhealthy';
