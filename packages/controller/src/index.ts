export type { EventRecorder, MetadataPatch, MigrationClient, MigrationEventRecorder, MigrationStore, PodClient, PodStore, VmiClient, VmiStore } from './kube/cluster-roles.js';
export { ClusterInformers, LAUNCHER_POD_SELECTOR, type ClusterInformersOptions, type PodChange } from './kube/cluster-informers.js';
export { ControllerApp, DEFAULT_LEASE_NAME, EVENT_SOURCE_COMPONENT, type ControllerAppOptions, type LeaderElectionConfig } from './controller-app.js';
export { ControllerError, isConflict, isNotFound, type ControllerErrorCode } from './controller-error.js';
export { CONTROLLER_OPTIONS, DEFAULT_WORKERS, parseControllerFlags, type ControllerFlags } from './controller-flags.js';
export { DEFAULT_POD_DOWN_GRACE_MS, FAILED_CREATE_REASON, decideVmi, type DecideInput } from './decide/decide-vmi.js';
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
export { LeaderElector, type LeaderElectionTimings, type LeaderElectorOptions, type LeadershipEnd } from './leader/leader-elector.js';
export type { LeaseClient, LeaseRecord } from './leader/lease-client.js';
export { FIXED_OVERHEAD_BYTES, memoryOverheadBytes, OVERHEAD_MI, type OverheadInput } from './render/memory-overhead.js';
export { PodExpectations } from './reconcile/pod-expectations.js';
export { COMPUTE_CAPABILITIES, DEFAULT_CPU_REQUEST, launcherPodPrefix, renderLauncherPod, VM_NAME_LABEL, type LauncherPodConfig } from './render/render-launcher-pod.js';
export { PodEventReason, syncVmi, type SyncDeps, type SyncResult } from './reconcile/sync-vmi.js';
export { FailureReason, type DecisionEvent, type VmiDecision } from './decide/vmi-decision.js';
export { ownerKey, VmiController, type VmiControllerOptions } from './reconcile/vmi-controller.js';
export { DEVICE_RESOURCE_PREFIX, KVM_RESOURCE, TUN_RESOURCE, VHOST_NET_RESOURCE, deviceResources } from './render/device-resources.js';
export { decideMigration, DEFAULT_UNSCHEDULABLE_TIMEOUT_MS, type DecideMigrationInput } from './decide/decide-migration.js';
export { MigrationConditionType, MigrationFailureReason, type MigrationDecision, type MigrationEvent } from './decide/migration-decision.js';
export { MigrationController, type MigrationControllerOptions } from './reconcile/migration-controller.js';
export { blockingMigration, migrationKey, syncMigration, type MigrationSyncDeps } from './reconcile/sync-migration.js';
export { HOSTNAME_TOPOLOGY_KEY, renderTargetPod } from './render/render-target-pod.js';
export { isMigrationTargetPod, vmiPod } from './decide/vmi-pod.js';
