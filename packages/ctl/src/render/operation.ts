import type { node } from '@podvirt/proto';
import type { OperationCommand } from '../command-table.js';
import { formatDuration } from '@podvirt/api/duration';

const DONE: Readonly<Record<OperationCommand, string>> = {
  'pause': 'paused',
  'unpause': 'unpaused',
  'freeze': 'frozen',
  'unfreeze': 'unfrozen',
  'soft-reboot': 'soft rebooted',
  'reset': 'reset',
};

// The one line an operation prints: "VMI prod/db was paused". A freeze also says when the
// guest thaws, since a forgotten freeze blocks every write in the guest.
export function renderOperation(command: OperationCommand, vmi: node.VmiRef, unfreezeTimeoutSeconds = 0): string {
  const ref = `${vmi.namespace}/${vmi.name}`;
  const line = `VMI ${ref} was ${DONE[command]}`;
  if (command !== 'freeze') return `${line}\n`;
  if (unfreezeTimeoutSeconds === 0) return `${line}; it stays frozen until "podvirtctl unfreeze ${ref}"\n`;
  return `${line}; it thaws by itself in ${formatDuration(unfreezeTimeoutSeconds * 1000)}\n`;
}
