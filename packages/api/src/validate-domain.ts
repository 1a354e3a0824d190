// spec.domain: resources, memory, CPU topology, machine type and firmware.

import { compareQuantities, toBytes } from './quantity-math.js';
import { formatQuantity } from './quantity-format.js';
import type { Quantity } from './quantity.js';
import { utf8Length } from './validate-text.js';
import { fieldPath, isSafeAbsolutePath, type RawObject, type Validation } from './validate-context.js';

const PULL_POLICIES = ['Always', 'IfNotPresent', 'Never'] as const;
const UUID_RE = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
// KubeVirt's default list of emulated machines on amd64 is `q35*` and `pc-q35*`; i440fx is
// not offered because the device layout assumes PCIe.
// x86 Linux keeps COMMAND_LINE_SIZE = 2048 bytes, its terminating NUL included.
const MAX_KERNEL_ARGS_BYTES = 2047;
const MACHINE_TYPE_RE = /^(q35|pc-q35-[0-9A-Za-z.+_-]+)$/;

interface MemoryFields {
  guest?: Quantity;
  request?: Quantity;
  limit?: Quantity;
}

function validateResources(v: Validation, path: string, value: unknown): MemoryFields {
  const resources = v.object(path, value);
  if (!resources) return {};
  const read = (kind: 'requests' | 'limits'): { memory?: Quantity; cpu?: Quantity } => {
    const list = v.object(fieldPath(path, kind), resources[kind]);
    if (!list) return {};
    const memory = v.quantity(fieldPath(path, `${kind}.memory`), list['memory']);
    const cpu = v.quantity(fieldPath(path, `${kind}.cpu`), list['cpu']);
    return { ...(memory && { memory }), ...(cpu && { cpu }) };
  };
  const requests = read('requests');
  const limits = read('limits');
  for (const resource of ['memory', 'cpu'] as const) {
    const request = requests[resource];
    const limit = limits[resource];
    if (request && limit && compareQuantities(request, limit) > 0) {
      v.add(
        fieldPath(path, `requests.${resource}`),
        'Invalid',
        `${formatQuantity(request)} is greater than ${path}.limits.${resource} (${formatQuantity(limit)}); a request may not exceed its limit`,
      );
    }
  }
  return { ...(requests.memory && { request: requests.memory }), ...(limits.memory && { limit: limits.memory }) };
}

function validateMemorySize(v: Validation, domainPath: string, memory: MemoryFields, anyGiven: boolean): void {
  const candidates: [string, Quantity | undefined][] = [
    ['memory.guest', memory.guest],
    ['resources.requests.memory', memory.request],
    ['resources.limits.memory', memory.limit],
  ];
  const found = candidates.find(([, quantity]) => quantity !== undefined);
  if (!found?.[1]) {
    // A size that was given but is malformed has been reported already.
    if (anyGiven) return;
    v.required(
      fieldPath(domainPath, 'resources.requests.memory'),
      `guest memory (one of ${domainPath}.memory.guest, ${domainPath}.resources.requests.memory or ${domainPath}.resources.limits.memory)`,
    );
    return;
  }
  const [where, quantity] = found;
  const minimum = v.options.minGuestMemoryBytes;
  if (toBytes(quantity) < minimum) {
    v.add(
      fieldPath(domainPath, where),
      'Invalid',
      `guest memory ${formatQuantity(quantity)} is below ${minimum} bytes (${minimum / 1048576n}Mi), the least a guest boots with here`,
    );
  }
  if (memory.guest && memory.limit && compareQuantities(memory.guest, memory.limit) > 0) {
    v.add(
      fieldPath(domainPath, 'memory.guest'),
      'Invalid',
      `${formatQuantity(memory.guest)} exceeds ${domainPath}.resources.limits.memory (${formatQuantity(memory.limit)})`,
    );
  }
}

// No q35 machine of any QEMU offers more vCPUs (QEMU 9 raised q35 to 4096; 7.2 stops at 288,
// which the launcher checks against the node's own emulator). Larger counts made libvirt
// allocate per-vCPU state for billions of vCPUs, or crash, before anything could refuse them.
export const MAX_VCPUS = 4096;

function validateCpu(v: Validation, path: string, value: unknown): void {
  const cpu = v.object(path, value);
  if (!cpu) return;
  const counts = ['sockets', 'cores', 'threads'].map((key) => v.integer(fieldPath(path, key), cpu[key], 1, MAX_VCPUS));
  const [sockets = 1, cores = 1, threads = 1] = counts;
  const total = sockets * cores * threads;
  if (total > MAX_VCPUS) {
    v.add(path, 'Invalid', `sockets × cores × threads is ${sockets} × ${cores} × ${threads} = ${total} vCPUs; at most ${MAX_VCPUS} are allowed`);
  }
  v.string(fieldPath(path, 'model'), cpu['model']);
}

function validateMachine(v: Validation, path: string, value: unknown): void {
  const machine = v.object(path, value);
  if (!machine) return;
  const type = v.string(fieldPath(path, 'type'), machine['type']);
  if (type !== undefined && type !== '' && !MACHINE_TYPE_RE.test(type)) {
    v.add(fieldPath(path, 'type'), 'NotSupported', `machine type ${JSON.stringify(type)} is not supported; accepted: q35 or pc-q35-<version>`);
  }
}

function validatePath(v: Validation, path: string, value: unknown): string | undefined {
  const text = v.string(path, value);
  if (text !== undefined && text !== '' && !isSafeAbsolutePath(text)) {
    v.add(path, 'Invalid', `${JSON.stringify(text)} must be an absolute path without ".." segments`);
  }
  return text;
}

function validateKernelBoot(v: Validation, path: string, value: unknown): void {
  const kernelBoot = v.object(path, value);
  if (!kernelBoot) return;
  const kernelArgs = v.string(fieldPath(path, 'kernelArgs'), kernelBoot['kernelArgs']);
  const argsBytes = kernelArgs === undefined ? 0 : utf8Length(kernelArgs);
  if (argsBytes > MAX_KERNEL_ARGS_BYTES) {
    v.add(
      fieldPath(path, 'kernelArgs'),
      'TooLong',
      `is ${argsBytes} bytes; an x86 Linux kernel takes at most ${MAX_KERNEL_ARGS_BYTES} bytes of command line`,
    );
  }
  const containerPath = fieldPath(path, 'container');
  const container = v.object(containerPath, kernelBoot['container']);
  if (!container) {
    if (kernelBoot['container'] === undefined || kernelBoot['container'] === null) {
      const why = kernelArgs ? 'kernel arguments need a kernel to pass them to' : 'kernel boot needs a kernel';
      v.required(containerPath, `a container with the kernel (${why})`);
    }
    return;
  }
  v.string(fieldPath(containerPath, 'image'), container['image'], true);
  v.oneOf(fieldPath(containerPath, 'imagePullPolicy'), container['imagePullPolicy'], PULL_POLICIES);
  const kernel = validatePath(v, fieldPath(containerPath, 'kernelPath'), container['kernelPath']);
  const initrd = validatePath(v, fieldPath(containerPath, 'initrdPath'), container['initrdPath']);
  if (!kernel && !initrd) {
    v.required(containerPath, 'at least one of kernelPath and initrdPath');
  } else if (kernelArgs && !kernel) {
    v.add(fieldPath(path, 'kernelArgs'), 'Invalid', `kernel arguments need ${containerPath}.kernelPath: an initrd alone takes none`);
  }
}

function validateFirmware(v: Validation, path: string, value: unknown): void {
  const firmware = v.object(path, value);
  if (!firmware) return;
  const uuid = v.string(fieldPath(path, 'uuid'), firmware['uuid']);
  if (uuid !== undefined && uuid !== '' && !UUID_RE.test(uuid)) {
    v.add(fieldPath(path, 'uuid'), 'Invalid', `${JSON.stringify(uuid)} is not a UUID; expected the form 8-4-4-4-12 hex digits`);
  }
  v.string(fieldPath(path, 'serial'), firmware['serial']);
  validateKernelBoot(v, fieldPath(path, 'kernelBoot'), firmware['kernelBoot']);
}

/** Everything under spec.domain except features, clock and devices. */
export function validateDomainCore(v: Validation, path: string, domain: RawObject): void {
  const memory = validateResources(v, fieldPath(path, 'resources'), domain['resources']);
  const memoryObject = v.object(fieldPath(path, 'memory'), domain['memory']);
  const guest = memoryObject && v.quantity(fieldPath(path, 'memory.guest'), memoryObject['guest']);
  const given = (value: unknown): boolean => value !== undefined && value !== null;
  const resources = domain['resources'] as { requests?: RawObject; limits?: RawObject } | undefined;
  const anyGiven =
    given(memoryObject?.['guest']) || given(resources?.requests?.['memory']) || given(resources?.limits?.['memory']);
  validateMemorySize(v, path, { ...memory, ...(guest && { guest }) }, anyGiven);
  validateCpu(v, fieldPath(path, 'cpu'), domain['cpu']);
  validateMachine(v, fieldPath(path, 'machine'), domain['machine']);
  validateFirmware(v, fieldPath(path, 'firmware'), domain['firmware']);
}

export { PULL_POLICIES, validatePath };
