// Cross-references inside a spec: disks ↔ volumes, interfaces ↔ networks, unique boot orders.

import { fieldPath, indexPath, isRawObject, type Validation } from './validate-context.js';

interface Named {
  readonly path: string;
  readonly name: string;
  readonly item: Record<string, unknown>;
}

function named(path: string, value: unknown): Named[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((item: unknown, i) =>
    isRawObject(item) && typeof item['name'] === 'string' && item['name'] !== ''
      ? [{ path: indexPath(path, i), name: item['name'], item }]
      : [],
  );
}

function matchNames(v: Validation, from: Named[], to: Named[], message: (name: string) => string): void {
  const names = new Set(to.map((entry) => entry.name));
  for (const entry of from) {
    if (!names.has(entry.name)) v.add(fieldPath(entry.path, 'name'), 'NotFound', message(entry.name));
  }
}

function checkBootOrders(v: Validation, devices: Named[]): void {
  const seen = new Map<number, string>();
  for (const device of devices) {
    const order = device.item['bootOrder'];
    if (typeof order !== 'number') continue;
    const first = seen.get(order);
    if (first === undefined) seen.set(order, device.path);
    else {
      v.add(fieldPath(device.path, 'bootOrder'), 'Duplicate', `boot order ${order} is already used by ${first}; each device needs its own`);
    }
  }
}

/** A list that is absent or well-formed; a malformed one was reported and is not matched. */
function usable(value: unknown): boolean {
  return value === undefined || value === null || Array.isArray(value);
}

const DISKS = 'spec.domain.devices.disks';
const INTERFACES = 'spec.domain.devices.interfaces';

function quote(name: string): string {
  return JSON.stringify(name);
}

export function validateReferences(v: Validation, spec: Record<string, unknown>): void {
  const domain = spec['domain'];
  const devices = isRawObject(domain) ? domain['devices'] : undefined;
  // Without a readable devices object there is nothing to match volumes against.
  if (!isRawObject(devices)) return;
  const disks = named(DISKS, devices['disks']);
  const interfaces = named(INTERFACES, devices['interfaces']);
  if (usable(devices['disks']) && usable(spec['volumes'])) {
    const volumes = named('spec.volumes', spec['volumes']);
    // A volume without a disk is no error: defaulting gives it one (defaultVolumeDisks), as KubeVirt's does.
    matchNames(v, disks, volumes, (name) => `no volume named ${quote(name)} in spec.volumes; each disk shows the volume of the same name`);
  }
  if (usable(devices['interfaces']) && usable(spec['networks'])) {
    const networks = named('spec.networks', spec['networks']);
    matchNames(v, interfaces, networks, (name) => `no network named ${quote(name)} in spec.networks; each interface attaches to it`);
    matchNames(v, networks, interfaces, (name) => `network ${quote(name)} is not used: add an interface named ${quote(name)} to ${INTERFACES}`);
  }
  checkBootOrders(v, [...disks, ...interfaces]);
}
