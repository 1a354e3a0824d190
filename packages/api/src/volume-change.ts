// A volume added to or removed from a running VMI: what KubeVirt's `virtualmachineinstances/
// {addvolume,removevolume}` subresources do, and so `podvirtctl addvolume|removevolume` too. One
// implementation for both: the edit is `withVolumeAdded` / `withVolumeRemoved`, the reads and the
// writes (guarded by the object's resourceVersion) go through the small VolumeApi each caller
// gives over its own client. With `persist`, the VM of the same name gets the edit in its
// template too, so the volume stays across a restart.

import type { FieldError } from './field-error.js';
import { formatFieldErrors } from './field-error.js';
import { withVolumeAdded, withVolumeRemoved, type AddVolumeOptions, type HotplugSpec, type RemoveVolumeOptions } from './hotplug-volume.js';
import type { VirtualMachine } from './types/vm.js';
import type { VirtualMachineInstance } from './types/vmi.js';

/** A hotplug request as KubeVirt's subresources take it. */
export type VolumeRequest = { readonly command: 'addvolume'; readonly options: AddVolumeOptions } | { readonly command: 'removevolume'; readonly options: RemoveVolumeOptions };

/** The reads and guarded writes a hotplug request needs, over the caller's Kubernetes client. */
export interface VolumeApi {
  readVmi(namespace: string, name: string, signal: AbortSignal): Promise<VirtualMachineInstance | undefined>;
  readVm(namespace: string, name: string, signal: AbortSignal): Promise<VirtualMachine | undefined>;
  /** Writes the VMI's volumes and disks, guarded by `resourceVersion`: 'stale' when it changed (409). */
  patchVmiVolumes(namespace: string, name: string, spec: HotplugSpec, resourceVersion: string | undefined, signal: AbortSignal): Promise<'written' | 'stale'>;
  /** The same on the VM's template. */
  patchVmVolumes(namespace: string, name: string, spec: HotplugSpec, resourceVersion: string | undefined, signal: AbortSignal): Promise<'written' | 'stale'>;
}

export type VolumeChangeErrorCode = 'API_ERR_VMI_NOT_FOUND' | 'API_ERR_VMI_NOT_RUNNING' | 'API_ERR_VM_NOT_FOUND' | 'API_ERR_VOLUME_REFUSED' | 'API_ERR_VOLUME_CONFLICT';

/** A refusal of the request; REFUSED carries the field errors of the edit (fields as in the request's JSON). */
export class VolumeChangeError extends Error {
  override readonly name = 'VolumeChangeError';
  constructor(
    readonly code: VolumeChangeErrorCode,
    message: string,
    /** REFUSED: what refused (`VMI ns/name`, `VM ns/name's template`) and why. */
    readonly refusal?: { readonly subject: string; readonly errors: readonly FieldError[] },
  ) {
    super(message);
  }
}

export interface VolumeChangeOptions {
  /** Edit the VM's template too. */
  readonly persist?: boolean | undefined;
  /** Decide (and refuse) as for real, write nothing. */
  readonly dryRun?: boolean | undefined;
}

/** Attempts before an object that keeps changing under us is reported. */
const ATTEMPTS = 3;

function edited(spec: HotplugSpec, request: VolumeRequest, subject: string): HotplugSpec {
  const result = request.command === 'addvolume' ? withVolumeAdded(spec, request.options) : withVolumeRemoved(spec, request.options);
  if ('spec' in result) return result.spec;
  throw new VolumeChangeError('API_ERR_VOLUME_REFUSED', `${subject} refuses the change: ${formatFieldErrors(result.errors)}`, { subject, errors: result.errors });
}

/** Reads, edits and writes one object until its resourceVersion holds. */
async function retrying(ref: string, attempt: () => Promise<'written' | 'stale'>): Promise<void> {
  for (let i = 0; i < ATTEMPTS; i++) if ((await attempt()) === 'written') return;
  throw new VolumeChangeError('API_ERR_VOLUME_CONFLICT', `${ref} kept changing; try again`);
}

/** Reads the VMI (and with `persist` its VM), edits, writes; an object that changed in between is read again. */
export async function changeVolume(api: VolumeApi, request: VolumeRequest, target: { readonly namespace: string; readonly name: string }, o: VolumeChangeOptions, signal: AbortSignal): Promise<void> {
  const { namespace, name } = target;
  const vmiRef = `VMI ${namespace}/${name}`;
  const vmRef = `VM ${namespace}/${name}`;
  await retrying(vmiRef, async () => {
    const vmi = await api.readVmi(namespace, name, signal);
    if (vmi === undefined) throw new VolumeChangeError('API_ERR_VMI_NOT_FOUND', `${vmiRef} not found`);
    const phase = vmi.status?.phase ?? '';
    if (phase !== 'Running') throw new VolumeChangeError('API_ERR_VMI_NOT_RUNNING', `${vmiRef} is ${phase === '' ? 'not started' : phase}, not Running: a volume is hot-plugged into a running VMI only`);
    const spec = edited(vmi.spec, request, vmiRef);
    if (o.persist === true) {
      // Checked before anything is written: a VM that is missing or refuses writes nothing.
      const vm = await api.readVm(namespace, name, signal);
      if (vm === undefined) throw new VolumeChangeError('API_ERR_VM_NOT_FOUND', `${vmRef} not found: persist writes the volume into the template of the VirtualMachine of the same name`);
      edited(vm.spec.template.spec, request, `${vmRef}'s template`);
    }
    return o.dryRun === true ? 'written' : api.patchVmiVolumes(namespace, name, spec, vmi.metadata.resourceVersion, signal);
  });
  if (o.persist !== true || o.dryRun === true) return;
  await retrying(vmRef, async () => {
    const vm = await api.readVm(namespace, name, signal);
    if (vm === undefined) throw new VolumeChangeError('API_ERR_VM_NOT_FOUND', `${vmRef} not found: persist writes the volume into the template of the VirtualMachine of the same name`);
    const spec = edited(vm.spec.template.spec, request, `${vmRef}'s template`);
    return api.patchVmVolumes(namespace, name, spec, vm.metadata.resourceVersion, signal);
  });
}
