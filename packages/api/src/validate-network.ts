// spec.domain.devices.interfaces and spec.networks.

import { fieldPath, indexPath, type RawObject, type Validation } from './validate-context.js';

const BINDINGS = ['bridge', 'masquerade', 'sriov', 'slirp', 'macvtap', 'passt', 'passtBinding', 'binding'];
const MODELS = ['e1000', 'e1000e', 'igb', 'ne2k_pci', 'pcnet', 'rtl8139', 'virtio'] as const;
const MAC_RE = /^([0-9A-Fa-f]{2}[:-]){5}[0-9A-Fa-f]{2}$/;
const NETWORK_SOURCES = ['pod', 'multus'];
const PCI_RE = /^[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$/;

/** Requires a name and reports a second item with the same one. */
function checkUniqueName(v: Validation, path: string, item: RawObject, seen: Map<string, string>, parent: string): void {
  const name = v.string(fieldPath(path, 'name'), item['name'], true);
  if (name === undefined) return;
  const first = seen.get(name);
  if (first === undefined) seen.set(name, path);
  else v.add(fieldPath(path, 'name'), 'Duplicate', `${JSON.stringify(name)} is already the name of ${first} in ${parent}`);
}

function validatePorts(v: Validation, path: string, value: unknown): void {
  v.array(path, value)?.forEach((item, i) => {
    const at = indexPath(path, i);
    const port = v.object(at, item, true);
    if (!port) return;
    v.string(fieldPath(at, 'name'), port['name']);
    v.oneOf(fieldPath(at, 'protocol'), port['protocol'], ['TCP', 'UDP']);
    if (port['port'] === undefined || port['port'] === null) v.required(fieldPath(at, 'port'), 'a port number');
    else v.integer(fieldPath(at, 'port'), port['port'], 1, 65535);
  });
}

export function validateInterfaces(v: Validation, path: string, value: unknown): void {
  const seen = new Map<string, string>();
  v.array(path, value)?.forEach((item, i) => {
    const at = indexPath(path, i);
    const iface = v.object(at, item, true);
    if (!iface) return;
    checkUniqueName(v, at, iface, seen, path);
    const bindings = v.presentKeys(iface, BINDINGS);
    if (bindings.length > 1) v.add(at, 'Invalid', `set exactly one binding; found ${bindings.join(' and ')}`);
    v.object(fieldPath(at, 'bridge'), iface['bridge']);
    v.object(fieldPath(at, 'masquerade'), iface['masquerade']);
    v.oneOf(fieldPath(at, 'model'), iface['model'], MODELS);
    const mac = v.string(fieldPath(at, 'macAddress'), iface['macAddress']);
    if (mac !== undefined && mac !== '' && !MAC_RE.test(mac)) {
      v.add(fieldPath(at, 'macAddress'), 'Invalid', `${JSON.stringify(mac)} is not a MAC address such as de:ad:00:00:be:af`);
    } else if (mac !== undefined && mac !== '' && (parseInt(mac.slice(0, 2), 16) & 1) === 1) {
      v.add(fieldPath(at, 'macAddress'), 'Invalid', `${JSON.stringify(mac)} is a multicast address; a NIC needs a unicast one (even first octet)`);
    }
    const pci = v.string(fieldPath(at, 'pciAddress'), iface['pciAddress']);
    if (pci !== undefined && !PCI_RE.test(pci)) {
      v.add(fieldPath(at, 'pciAddress'), 'Invalid', `${JSON.stringify(pci)} is not a PCI address such as 0000:81:01.0`);
    }
    v.integer(fieldPath(at, 'bootOrder'), iface['bootOrder'], 1);
    validatePorts(v, fieldPath(at, 'ports'), iface['ports']);
  });
}

export function validateNetworks(v: Validation, path: string, value: unknown): void {
  const seen = new Map<string, string>();
  let podNetwork: string | undefined;
  v.array(path, value)?.forEach((item, i) => {
    const at = indexPath(path, i);
    const network = v.object(at, item, true);
    if (!network) return;
    checkUniqueName(v, at, network, seen, path);
    const sources = v.presentKeys(network, NETWORK_SOURCES);
    if (sources.length === 0) v.required(at, 'a network source (pod)');
    if (sources.length > 1) v.add(at, 'Invalid', `set exactly one network source; found ${sources.join(' and ')}`);
    const pod = v.object(fieldPath(at, 'pod'), network['pod']);
    if (!pod) return;
    v.string(fieldPath(at, 'pod.vmNetworkCIDR'), pod['vmNetworkCIDR']);
    if (podNetwork === undefined) podNetwork = at;
    else v.add(fieldPath(at, 'pod'), 'Duplicate', `only one pod network is allowed; ${podNetwork} is one already`);
  });
}
