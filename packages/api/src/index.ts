export { applyDefaults } from './defaults.js';
export { defaultVolumeDisks } from './defaults-devices.js';
export { showInteger, unsafeIntegerLiterals, type ExactIntegers } from './exact-integers.js';
export { decodeVmiJson, type DecodeJsonOptions } from './decode-vmi-json.js';
export { textProblem } from './validate-text.js';
export {
  DEFAULT_DISK_BUS,
  DEFAULT_MACHINE_TYPE,
  DEFAULT_NETWORK_INTERFACE,
  DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS,
  type DefaultsOptions,
  type InterfaceBinding,
} from './defaults-options.js';
export { DEFAULT_POD_NETWORK_NAME } from './defaults-network.js';
export { ConditionStatus, notLiveMigratableReason, VmiConditionReason, VmiConditionType } from './conditions.js';
export { removeCondition, upsertCondition, type ConditionUpdate } from './condition-list.js';
export { kubeTime } from './kube-time.js';
export { checkVmi, decodeVmi, MAX_VMI_DEPTH, type DecodeOptions } from './decode-vmi.js';
export { jsonDepthExcess, type DepthExcess } from './json-depth.js';
export { jsonClone, jsonEqual } from './json-value.js';
export { EventReason, EventType } from './event-reasons.js';
export {
  DEFAULT_EVICTION_STRATEGY,
  effectiveEvictionStrategy,
  EVICTION_STRATEGIES,
  EvictionStrategy,
  isEvictionStrategy,
} from './eviction-strategy.js';
export { FIELD_ERROR_LABELS, formatFieldError, formatFieldErrors, type FieldError, type FieldErrorType } from './field-error.js';
export { deriveFirmwareUuid, FIRMWARE_UUID_NAMESPACE, nameBasedUuid } from './firmware-uuid.js';
export {
  VMI_ACCEPTED_API_VERSIONS,
  VMI_API_VERSION,
  VMI_GROUP,
  VMI_KIND,
  VMI_LIST_KIND,
  VMI_PLURAL,
  VMI_RESOURCE,
  VMI_SHORT_NAMES,
  VMI_SINGULAR,
  VMI_VERSION,
} from './group-version.js';
export {
  APP_LABEL,
  CREATED_BY_LABEL,
  DOMAIN_ANNOTATION,
  HEARTBEAT_ANNOTATION,
  HOTPLUG_DISK_APP_LABEL_VALUE,
  HOTPLUG_VOLUME_LABEL,
  LAUNCHER_APP_LABEL_VALUE,
  MIGRATION_FINALIZER,
  MIGRATION_JOB_LABEL,
  MIGRATION_TARGET_NODE_LABEL,
  NODE_NAME_LABEL,
  NODE_SCHEDULABLE_LABEL,
  ORPHAN_FINALIZER,
  VM_CONTROLLER_FINALIZER,
  VMI_FINALIZER,
  VM_LABEL,
} from './labels.js';
export { isFinalPhase, isVmiPhase, VMI_PHASES, VmiPhase } from './phases.js';
export { isFinalMigrationPhase, MigrationPhase } from './migration-phases.js';
export { EVACUATION_ANNOTATION, EVACUATION_BACKOFF_MAX_MS, EVACUATION_BACKOFF_MS, EVACUATION_NAME_PREFIX, evacuationBackoff, migrationFailedAt, type EvacuationBackoff } from './evacuation.js';
export { MIGRATION_API_VERSION, MIGRATION_KIND, MIGRATION_LIST_KIND, MIGRATION_NAME_PREFIX, MIGRATION_PLURAL, MIGRATION_RESOURCE, MIGRATION_SHORT_NAMES, migrationFor } from './migration-kind.js';
export { asMigration, validateMigration } from './validate-migration.js';
export { migrationReference } from './migration-reference.js';
export type * from './types/migration.js';
export { NANOS_PER_UNIT, parseQuantity, parseQuantityValue, type Quantity, type QuantityFormat } from './quantity.js';
export { QuantityError } from './quantity-error.js';
export { formatQuantity } from './quantity-format.js';
export { compareQuantities, isZeroQuantity, toBytes, toMillis } from './quantity-math.js';
export { podQosClass, type PodQosShape } from './pod-qos.js';
export { SUPPORTED_VMI_FIELDS, type FieldTree } from './supported-fields.js';
export { findUnsupportedFields } from './unsupported-fields.js';
export { DEFAULT_MIN_GUEST_MEMORY_BYTES, type ValidateOptions } from './validate-options.js';
export { isDnsLabel, isDnsSubdomain } from './validate-context.js';
export { validateVmi } from './validate-vmi.js';
export { VmiInvalidError } from './vmi-invalid-error.js';
export { claimDiskSize } from './claim-disk-size.js';
export type * from './types/condition.js';
export type * from './types/defaulted.js';
export type * from './types/devices.js';
export type * from './types/domain.js';
export type * from './types/object-meta.js';
export type * from './types/status.js';
export type * from './types/vmi.js';
export type * from './types/volumes.js';
export { VOLUME_SOURCE_KEYS } from './types/volumes.js';
export { vmiLogBindings, type VmiLogBindings } from './vmi-log-bindings.js';
export { vmiReference, type ObjectReference } from './vmi-reference.js';
export { NON_ROOT_UID, SERIAL_LOG_FILE } from './console-log.js';
export {
  parsePodNetworkHandoff,
  PodNetworkHandoffError,
  POD_NETWORK_HANDOFF_FILE,
  type DhcpLease,
  type DhcpV6Lease,
  type NicAttachment,
  type WiredNic,
} from './pod-network-handoff.js';
export { VM_API_VERSION, VM_KIND, VM_LIST_KIND, VM_PLURAL, VM_RESOURCE, VM_SHORT_NAMES, VM_SINGULAR } from './vm-kind.js';
export { RUN_STRATEGIES, runStrategyOf, validateVm } from './validate-vm.js';
export { templateVmi } from './vm-template-vmi.js';
export {
  changeVmState, planVmStateChange, VmStateError,
  type VmStateApi, type VmStateCommand, type VmStateErrorCode, type VmStateOptions, type VmStatePlan, type VmStateWrite,
} from './vm-state-change.js';
export type * from './types/vm.js';
export { vmReference } from './vm-reference.js';
export {
  hotplugVolumeNames,
  isHotplugEdit,
  isHotplugVolume,
  validateAddVolumeOptions,
  withVolumeAdded,
  withVolumeRemoved,
  type AddVolumeOptions,
  type HotplugSpec,
  type HotplugVolumeSource,
  type RemoveVolumeOptions,
} from './hotplug-volume.js';
export {
  changeVolume, VolumeChangeError,
  type VolumeApi, type VolumeChangeErrorCode, type VolumeChangeOptions, type VolumeRequest,
} from './volume-change.js';
export { VOLUME_PHASES, VolumePhase } from './volume-phases.js';
