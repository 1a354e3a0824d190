// What happens to a VMI when its launcher pod is evicted (a node drain): KubeVirt's four
// strategies. The VMI's own `spec.evictionStrategy` wins; a VMI without one takes the cluster
// default (podvirt-controller's and podvirt-api's `--eviction-strategy`).

export const EvictionStrategy = {
  /** The eviction goes through: the pod's graceful stop shuts the guest down. */
  None: 'None',
  /** The eviction is refused and the VMI migrates away; a VMI that cannot migrate blocks the drain. */
  LiveMigrate: 'LiveMigrate',
  /** Migrate when the VMI is LiveMigratable, else let the eviction shut it down. */
  LiveMigrateIfPossible: 'LiveMigrateIfPossible',
  /** The eviction is refused and the VMI marked for an actor outside podvirt. */
  External: 'External',
} as const;

export type EvictionStrategy = (typeof EvictionStrategy)[keyof typeof EvictionStrategy];

export const EVICTION_STRATEGIES: readonly EvictionStrategy[] = Object.values(EvictionStrategy);

/** KubeVirt's cluster default when its configuration names none. */
export const DEFAULT_EVICTION_STRATEGY: EvictionStrategy = EvictionStrategy.None;

export function isEvictionStrategy(value: unknown): value is EvictionStrategy {
  return typeof value === 'string' && (EVICTION_STRATEGIES as readonly string[]).includes(value);
}

/** The strategy in force for `vmi`: its own, else the cluster's. */
export function effectiveEvictionStrategy(vmi: { spec?: { evictionStrategy?: EvictionStrategy | undefined } | undefined }, clusterDefault: EvictionStrategy): EvictionStrategy {
  return vmi.spec?.evictionStrategy ?? clusterDefault;
}
