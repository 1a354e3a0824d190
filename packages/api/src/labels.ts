// Labels, annotations and finalizers shared by the controller, the handler and the launcher
// pod, spelled as KubeVirt spells them so the same selectors work against either.

/** Marks every object that belongs to the VM machinery; the value names the component. */
export const APP_LABEL = 'kubevirt.io';
/** On the launcher pod: the UID of the VMI it serves. */
export const CREATED_BY_LABEL = 'kubevirt.io/created-by';
/** On the VMI: the node it runs on (custom resources have no field selector on status). */
export const NODE_NAME_LABEL = 'kubevirt.io/nodeName';
/** On the Node: whether new VMIs may be scheduled there; kept fresh by the handler heartbeat. */
export const NODE_SCHEDULABLE_LABEL = 'kubevirt.io/schedulable';
/** On the Node: RFC 3339 time of the last handler heartbeat. */
export const HEARTBEAT_ANNOTATION = 'kubevirt.io/heartbeat';
/** On the launcher pod: the VMI name, used to match a domain to the pod it runs in. */
export const DOMAIN_ANNOTATION = 'kubevirt.io/domain';
/** Added at creation so the VMI object outlives its launcher pod until the VM is gone. */
export const VMI_FINALIZER = 'foregroundDeleteVirtualMachine';
/** Value of APP_LABEL on launcher pods. */
export const LAUNCHER_APP_LABEL_VALUE = 'virt-launcher';
/** Value of APP_LABEL on a hotplugged volume's attachment pod (KubeVirt's `hp-volume-*` pods). */
export const HOTPLUG_DISK_APP_LABEL_VALUE = 'hotplug-disk';
/** On an attachment pod: the name of the VMI volume it attaches. */
export const HOTPLUG_VOLUME_LABEL = 'podvirt.io/hotplug-volume';
/** On a migration's target launcher pod: the UID of the VirtualMachineInstanceMigration it serves. */
export const MIGRATION_JOB_LABEL = 'kubevirt.io/migrationJobUID';
/** On the VMI while a migration prepares its target: the node it moves to. */
export const MIGRATION_TARGET_NODE_LABEL = 'kubevirt.io/migrationTargetNodeName';
/** On a migration while it runs: deleting it then cancels it before the object goes. */
export const MIGRATION_FINALIZER = 'kubevirt.io/migrationJobFinalize';
/**
 * On a VirtualMachine and on the VMI made from it (KubeVirt's name): the VM stops its VMI before
 * it goes, and a VMI's end is seen by the VM controller before the VMI goes.
 */
export const VM_CONTROLLER_FINALIZER = 'kubevirt.io/virtualMachineControllerFinalize';
/** Put on an object by kube-apiserver when it is deleted with its dependents orphaned. */
export const ORPHAN_FINALIZER = 'orphan';
/** On a VMI made from a VirtualMachine's template: the VM's name. */
export const VM_LABEL = 'kubevirt.io/vm';
