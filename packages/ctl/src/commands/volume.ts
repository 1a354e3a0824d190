// `podvirtctl addvolume vmi NAME --volume-name=V [--claim=C] [--serial=S] [--cache=M] [--persist]`
// and `podvirtctl removevolume vmi NAME --volume-name=V [--persist]`: KubeVirt's hotplug request,
// applied as the one spec edit of `@podvirt/api` (withVolumeAdded / withVolumeRemoved) to the
// running VMI and, with --persist, to its VirtualMachine's template, so the volume stays across
// a restart. The controller and the handler do the rest; `kubectl get vmi NAME -o
// jsonpath='{.status.volumeStatus}'` follows the volume's phase.
import {
  formatFieldErrors,
  withVolumeAdded,
  withVolumeRemoved,
  type FieldError,
  type HotplugSpec,
} from '@podvirt/api';
import { isKubeApiError } from '@podvirt/kube-runtime';
import type { node } from '@podvirt/proto';
import type { VolumeApi, VolumeRequest } from '../volume-api.js';
import type { CommandResult } from './command-result.js';

export class VolumeError extends Error {
  override readonly name = 'VolumeError';
  constructor(
    readonly code: 'CTL_ERR_VMI_NOT_FOUND' | 'CTL_ERR_VMI_NOT_RUNNING' | 'CTL_ERR_VM_NOT_FOUND' | 'CTL_ERR_VOLUME_REFUSED' | 'CTL_ERR_VOLUME_CONFLICT',
    message: string,
  ) {
    super(message);
  }
}

/** Attempts before an object that keeps changing under us is reported. */
const ATTEMPTS = 3;

// The request's fields as the user typed them: the flags.
const FLAG_OF: Readonly<Record<string, string>> = {
  'name': '--volume-name',
  'volumeSource.persistentVolumeClaim.claimName': '--claim',
  'disk.serial': '--serial',
  'disk.cache': '--cache',
};

function refused(errors: readonly FieldError[], what: string): VolumeError {
  const named = errors.map((e) => ({ ...e, field: FLAG_OF[e.field] ?? e.field }));
  return new VolumeError('CTL_ERR_VOLUME_REFUSED', `${what}: ${formatFieldErrors(named)}`);
}

function edit(spec: HotplugSpec, request: VolumeRequest): HotplugSpec | readonly FieldError[] {
  const result = request.command === 'addvolume' ? withVolumeAdded(spec, request.options) : withVolumeRemoved(spec, request.options);
  return 'spec' in result ? result.spec : result.errors;
}

/** Reads, edits and writes one object until its resourceVersion holds. */
async function retrying(ref: string, attempt: () => Promise<void>): Promise<void> {
  for (let i = 1; ; i += 1) {
    try {
      await attempt();
      return;
    } catch (err) {
      if (!isKubeApiError(err) || err.status !== 409) throw err;
      if (i >= ATTEMPTS) throw new VolumeError('CTL_ERR_VOLUME_CONFLICT', `${ref} kept changing; try again`);
    }
  }
}

async function editVm(api: VolumeApi, target: node.VmiRef, request: VolumeRequest, signal: AbortSignal): Promise<void> {
  const ref = `VM ${target.namespace}/${target.name}`;
  await retrying(ref, async () => {
    const vm = await api.readVm(target.namespace, target.name, signal);
    if (vm === undefined) throw new VolumeError('CTL_ERR_VM_NOT_FOUND', `${ref} not found: --persist writes the volume into the template of the VirtualMachine of the same name`);
    const spec = edit(vm.spec.template.spec, request);
    if (Array.isArray(spec)) throw refused(spec, `${ref}'s template refuses the change`);
    await api.patchVmVolumes(target.namespace, target.name, spec as HotplugSpec, vm.metadata.resourceVersion, signal);
  });
}

export async function runVolume(api: VolumeApi, target: node.VmiRef, request: VolumeRequest, persist: boolean, signal: AbortSignal): Promise<CommandResult> {
  const ref = `VMI ${target.namespace}/${target.name}`;
  await retrying(ref, async () => {
    const vmi = await api.readVmi(target.namespace, target.name, signal);
    if (vmi === undefined) throw new VolumeError('CTL_ERR_VMI_NOT_FOUND', `${ref} not found`);
    const phase = vmi.status?.phase ?? '';
    if (phase !== 'Running') {
      throw new VolumeError('CTL_ERR_VMI_NOT_RUNNING', `${ref} is ${phase === '' ? 'not started' : phase}, not Running: a volume is hot-plugged into a running VMI only${persist ? '' : ' (edit the VM\'s template for the next start)'}`);
    }
    const spec = edit(vmi.spec, request);
    if (Array.isArray(spec)) throw refused(spec, `${ref} refuses the change`);
    await api.patchVmiVolumes(target.namespace, target.name, spec as HotplugSpec, vmi.metadata.resourceVersion, signal);
  });
  if (persist) await editVm(api, target, request, signal);
  const name = request.options.name;
  const verb = request.command === 'addvolume' ? 'added to' : 'removed from';
  return {
    data: { volume: name, namespace: target.namespace, vmiName: target.name, request: request.command, persisted: persist },
    text: `volume ${name} ${verb} ${ref}${persist ? ' and its VM' : ''}\n`,
    note: `follow it with: kubectl get vmi ${target.name} -n ${target.namespace} -o jsonpath='{.status.volumeStatus}'\n`,
  };
}
