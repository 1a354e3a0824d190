// `podvirtctl addvolume vmi NAME --volume-name=V [--claim=C] [--serial=S] [--cache=M] [--persist]`
// and `podvirtctl removevolume vmi NAME --volume-name=V [--persist]`: KubeVirt's hotplug request,
// applied by `@podvirt/api`'s changeVolume (the one implementation podvirt-api's addvolume and
// removevolume subresources use too) to the running VMI and, with --persist, to its
// VirtualMachine's template, so the volume stays across a restart. The controller and the
// handler do the rest; `kubectl get vmi NAME -o jsonpath='{.status.volumeStatus}'` follows the
// volume's phase.
import { changeVolume, FIELD_ERROR_LABELS, formatFieldErrors, VolumeChangeError, type VolumeApi, type VolumeRequest } from '@podvirt/api';
import type { node } from '@podvirt/proto';
import { isKubeApiError } from '@podvirt/kube-runtime';
import type { SubresourceClient } from '../subresource-client.js';
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

// The request's fields as the user typed them: the flags.
const FLAG_OF: Readonly<Record<string, string>> = {
  'name': '--volume-name',
  'volumeSource.persistentVolumeClaim.claimName': '--claim',
  'disk.serial': '--serial',
  'disk.cache': '--cache',
};

const CODE_OF = {
  API_ERR_VMI_NOT_FOUND: 'CTL_ERR_VMI_NOT_FOUND',
  API_ERR_VMI_NOT_RUNNING: 'CTL_ERR_VMI_NOT_RUNNING',
  API_ERR_VM_NOT_FOUND: 'CTL_ERR_VM_NOT_FOUND',
  API_ERR_VOLUME_REFUSED: 'CTL_ERR_VOLUME_REFUSED',
  API_ERR_VOLUME_CONFLICT: 'CTL_ERR_VOLUME_CONFLICT',
} as const;

/** The shared refusal in the command's words: fields named by their flags. */
function inFlags(err: VolumeChangeError, persist: boolean): VolumeError {
  const code = CODE_OF[err.code];
  if (err.refusal !== undefined) {
    const named = err.refusal.errors.map((e) => ({ ...e, field: FLAG_OF[e.field] ?? e.field }));
    return new VolumeError(code, `${err.refusal.subject} refuses the change: ${formatFieldErrors(named)}`);
  }
  if (err.code === 'API_ERR_VMI_NOT_RUNNING' && !persist) return new VolumeError(code, `${err.message} (edit the VM's template for the next start)`);
  return new VolumeError(code, err.message.replace(': persist writes', ': --persist writes'));
}

export async function runVolume(api: VolumeApi, target: node.VmiRef, request: VolumeRequest, persist: boolean, signal: AbortSignal): Promise<CommandResult> {
  try {
    await changeVolume(api, request, target, { persist }, signal);
  } catch (err) {
    if (err instanceof VolumeChangeError) throw inFlags(err, persist);
    throw err;
  }
  return volumeResult(target, request, persist);
}

/**
 * The same through KubeVirt's subresources (a kubeconfig: authorised as the user):
 * `virtualmachineinstances/NAME/{addvolume,removevolume}`, or with --persist
 * `virtualmachines/NAME/{addvolume,removevolume}` (the VMI and the VM's template). The 400's
 * fields (the request's JSON) are named by their flags.
 */
export async function runVolumeViaApi(api: SubresourceClient, target: node.VmiRef, request: VolumeRequest, persist: boolean, signal: AbortSignal): Promise<CommandResult> {
  try {
    await api.change(persist ? 'virtualmachines' : 'virtualmachineinstances', target, request.command, request.options, signal);
  } catch (err) {
    if (isKubeApiError(err) && err.status === 400) throw new VolumeError('CTL_ERR_VOLUME_REFUSED', namedByFlags(err.message));
    throw err;
  }
  return volumeResult(target, request, persist);
}

const LABELS = FIELD_ERROR_LABELS.join('|');

/** A message of formatted field errors (`field: Label: detail; …`) with each request field named by its flag. */
function namedByFlags(message: string): string {
  let out = message;
  for (const [field, flag] of Object.entries(FLAG_OF)) {
    out = out.replace(new RegExp(`(^|; |: )${field.replace(/\./g, '\\.')}: (${LABELS}):`, 'g'), `$1${flag}: $2:`);
  }
  return out;
}

function volumeResult(target: node.VmiRef, request: VolumeRequest, persist: boolean): CommandResult {
  const ref = `VMI ${target.namespace}/${target.name}`;
  const name = request.options.name;
  const verb = request.command === 'addvolume' ? 'added to' : 'removed from';
  return {
    data: { volume: name, namespace: target.namespace, vmiName: target.name, request: request.command, persisted: persist },
    text: `volume ${name} ${verb} ${ref}${persist ? ' and its VM' : ''}\n`,
    note: `follow it with: kubectl get vmi ${target.name} -n ${target.namespace} -o jsonpath='{.status.volumeStatus}'\n`,
  };
}
