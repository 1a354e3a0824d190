// Annotations KubeVirt acts on to change the VM. podvirt does not implement them, and a VM
// that silently lacks its hook sidecar or its SMBIOS strings is worse than one refused by name.

import { keyPath } from './unsupported-fields.js';
import { isRawObject, type Validation } from './validate-context.js';

interface Refused {
  readonly matches: (key: string) => boolean;
  readonly what: string;
}

const REFUSED: readonly Refused[] = [
  { matches: (key) => key === 'hooks.kubevirt.io/hookSidecars', what: 'hook sidecars (which rewrite the domain before it starts)' },
  { matches: (key) => key.startsWith('smbios.vm.kubevirt.io/'), what: 'SMBIOS strings set by the smbios hook sidecar' },
  { matches: (key) => key === 'kubevirt.io/ignitiondata', what: 'Ignition data passed to the guest' },
];

export function validateAnnotations(v: Validation, metadata: Record<string, unknown>): void {
  const annotations = metadata['annotations'];
  if (!isRawObject(annotations)) return;
  for (const key of Object.keys(annotations)) {
    const refused = REFUSED.find((entry) => entry.matches(key));
    if (refused === undefined) continue;
    v.add(keyPath('metadata.annotations', key), 'NotSupported', `podvirt does not implement ${refused.what}; remove the annotation to run this VMI here`);
  }
}
