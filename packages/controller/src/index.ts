export type { EventRecorder, MetadataPatch, MigrationClient, MigrationEventRecorder, MigrationStore, PodClient, PodStore, VmiClient, VmiStore } from './cluster-roles.js';
export { ClusterInformers, LAUNCHER_POD_SELECTOR, type ClusterInformersOptions, type PodChange } from './cluster-informers.js';
export { ControllerApp, DEFAULT_LEASE_NAME, EVENT_SOURCE_COMPONENT, type ControllerAppOptions, type LeaderElectionConfig } from './controller-app.js';
export { ControllerError, isConflict, isNotFound, type ControllerErrorCode } from './controller-error.js';
export { DEFAULT_WORKERS, parseControllerFlags, type ControllerFlags } from './controller-flags.js';
export { DEFAULT_POD_DOWN_GRACE_MS, FAILED_CREATE_REASON, decideVmi, type DecideInput } from './decide-vmi.js';
export { controllerVersion, defaultLauncherImage } from './default-launcher-image.js';
export {
  COMPUTE_CONTAINER_NAME,
  CONTAINER_DISK_DIR,
  EPHEMERAL_DISK_DIR,
  HOOK_SIDECARS,
  HOTPLUG_DISK_DIR,
  KEEP_LAUNCHER_ALIVE_ANNOTATION,
  KUBEVIRT_PRIVATE_DIR,
  KUBEVIRT_SHARE_DIR,
  LAUNCHER_FLAGS,
  LAUNCHER_GRACE_EXTRA_SECONDS,
  LAUNCHER_IMAGE_REPOSITORY,
  LAUNCHER_MONITOR_COMMAND,
  LAUNCHER_VOLUMES,
  LIBVIRT_RUNTIME_DIR,
  POD_GRACE_EXTRA_SECONDS,
  QEMU_TIMEOUT_BASE_SECONDS,
  QEMU_TIMEOUT_JITTER_SECONDS,
  SOCKETS_DIR,
  type LauncherVolume,
} from './launcher-layout.js';
export { LeaderElector, type LeaderElectorOptions, type LeadershipEnd } from './leader-elector.js';
export type { LeaseClient, LeaseRecord } from './lease-client.js';
export { FIXED_OVERHEAD_BYTES, memoryOverheadBytes, OVERHEAD_MI, type OverheadInput } from './memory-overhead.js';
export { PodExpectations } from './pod-expectations.js';
export { COMPUTE_CAPABILITIES, DEFAULT_CPU_REQUEST, launcherPodPrefix, renderLauncherPod, VM_NAME_LABEL, type LauncherPodConfig } from './render-launcher-pod.js';
export { PodEventReason, syncVmi, type SyncDeps, type SyncResult } from './sync-vmi.js';
export { FailureReason, type DecisionEvent, type VmiDecision } from './vmi-decision.js';
export { ownerKey, VmiController, type VmiControllerOptions } from './vmi-controller.js';
export { DEVICE_RESOURCE_PREFIX, KVM_RESOURCE, TUN_RESOURCE, VHOST_NET_RESOURCE, deviceResources } from './device-resources.js';
export { decideMigration, DEFAULT_UNSCHEDULABLE_TIMEOUT_MS, type DecideMigrationInput } from './decide-migration.js';
export { MigrationConditionType, MigrationFailureReason, type MigrationDecision, type MigrationEvent } from './migration-decision.js';
export { MigrationController, type MigrationControllerOptions } from './migration-controller.js';
export { blockingMigration, migrationKey, syncMigration, type MigrationSyncDeps } from './sync-migration.js';
export { HOSTNAME_TOPOLOGY_KEY, renderTargetPod } from './render-target-pod.js';
export { isMigrationTargetPod, vmiPod } from './vmi-pod.js';
