// Identity of the VirtualMachineInstance resource, spelled exactly as KubeVirt serves it, so
// that manifests, REST paths and the CRD podvirt installs all agree.

export const VMI_GROUP = 'kubevirt.io';
export const VMI_VERSION = 'v1';
export const VMI_API_VERSION = `${VMI_GROUP}/${VMI_VERSION}`;
export const VMI_KIND = 'VirtualMachineInstance';
export const VMI_LIST_KIND = 'VirtualMachineInstanceList';
export const VMI_PLURAL = 'virtualmachineinstances';
export const VMI_SINGULAR = 'virtualmachineinstance';
export const VMI_SHORT_NAMES: readonly string[] = ['vmi', 'vmis'];

/**
 * API versions whose VMI schema is the one podvirt reads. KubeVirt still serves `v1alpha3` with
 * the same schema as `v1`, so objects written against it are accepted too.
 */
export const VMI_ACCEPTED_API_VERSIONS: readonly string[] = [VMI_API_VERSION, `${VMI_GROUP}/v1alpha3`];

/** Where VMIs live in the REST API, as `@podvirt/kube-runtime`'s ResourceClient takes it. */
export const VMI_RESOURCE = { group: VMI_GROUP, version: VMI_VERSION, plural: VMI_PLURAL, namespaced: true } as const;
