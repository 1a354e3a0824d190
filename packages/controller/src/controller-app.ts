// The whole controller process minus `process`: informers, the VMI controller and, when asked,
// leader election, wired together with one lifetime. main.ts and the end-to-end tests both
// start it through here.

import { DEFAULT_EVICTION_STRATEGY, migrationReference, vmiReference, vmReference, type EvictionStrategy, type ObjectReference, type VirtualMachine, type VirtualMachineInstance, type VirtualMachineInstanceMigration } from '@podvirt/api';
import { EventRecorder, KubeEventSink, type KubeClient } from '@podvirt/kube-runtime';
import type { Logger } from 'pino';
import { ClusterInformers } from './kube/cluster-informers.js';
import { HOST_DISK_OFF, type HostDiskPolicy } from './decide/host-disk-policy.js';
import { KubeLeaseClient } from './leader/kube-lease-client.js';
import { kubeEvacuationClient, kubeMigrationClient, kubePodClient, kubeVmiClient } from './kube/kube-clients.js';
import { LeaderElector, type LeaderElectionTimings, type LeadershipEnd } from './leader/leader-elector.js';
import { QUEUE_NAMES, type ControllerMetrics } from './metrics/controller-metrics.js';
import { EvacuationController } from './reconcile/evacuation-controller.js';
import { MigrationController } from './reconcile/migration-controller.js';
import { PodExpectations } from './reconcile/pod-expectations.js';
import { VmiController } from './reconcile/vmi-controller.js';
import { VmController } from './reconcile/vm-controller.js';
import { VmInformer } from './kube/vm-informer.js';
import { kubeVmClient } from './kube/kube-vm-client.js';
import { kubeNodeClient, NodeInformer, type KubeNodeClient } from './kube/node-informer.js';
import { DEFAULT_NODE_HEARTBEAT_TIMEOUT_MS } from './decide/node-heartbeat.js';
import { NodeController } from './reconcile/node-controller.js';

export interface LeaderElectionConfig {
  readonly namespace: string;
  readonly name: string;
  readonly identity: string;
  /** The `--leader-elect-*` durations; KubeVirt's defaults (15 s, 10 s, 2 s) when unset. */
  readonly timings?: LeaderElectionTimings | undefined;
}

export interface ControllerAppOptions {
  readonly client: KubeClient;
  readonly log: Logger;
  readonly launcherImage: string;
  readonly allowEmulation: boolean;
  /** The HostDisk gate and allowed directories; every hostDisk is refused when unset. */
  readonly hostDisk?: HostDiskPolicy;
  readonly workers: number;
  /** Watch one namespace only. */
  readonly namespace?: string | undefined;
  /** Reconcile only while holding this Lease; always when unset. */
  readonly leaderElection?: LeaderElectionConfig | undefined;
  readonly resyncMs?: number;
  readonly podDownGraceMs?: number;
  /** Identifies this replica in Events; the leader identity when electing. */
  readonly instance?: string;
  /** How long a migration's target pod that no node takes is waited for. */
  readonly unschedulableTimeoutMs?: number;
  /** Told about phase transitions, both queues and leadership (/metrics). */
  readonly metrics?: ControllerMetrics;
  /** The eviction strategy of a VMI that names none; None when unset. */
  readonly evictionStrategy?: EvictionStrategy;
  /** How long a handler may be silent before its node is unresponsive; KubeVirt's 5 minutes when unset. */
  readonly nodeHeartbeatTimeoutMs?: number;
}

export const DEFAULT_LEASE_NAME = 'podvirt-controller';
/** The component the controller's Events name as their source. */
export const EVENT_SOURCE_COMPONENT = 'podvirt-controller';

export class ControllerApp {
  readonly #informers: ClusterInformers;
  readonly #events: EventRecorder<VirtualMachineInstance>;
  readonly #migrationEvents: EventRecorder<VirtualMachineInstanceMigration>;
  readonly #vmInformer: VmInformer;
  readonly #vmEvents: EventRecorder<VirtualMachine>;
  readonly #node: { informer: NodeInformer; client: KubeNodeClient };
  readonly #lifetime: AbortController;
  /** Why the controller stopped: closed, or leadership lost (the process should exit). */
  readonly done: Promise<LeadershipEnd>;
  #closing: Promise<void> | undefined;

  private constructor(
    informers: ClusterInformers,
    events: EventRecorder<VirtualMachineInstance>,
    migrationEvents: EventRecorder<VirtualMachineInstanceMigration>,
    vm: { informer: VmInformer; events: EventRecorder<VirtualMachine> },
    node: { informer: NodeInformer; client: KubeNodeClient },
    lifetime: AbortController,
    done: Promise<LeadershipEnd>,
  ) {
    this.#informers = informers;
    this.#events = events;
    this.#migrationEvents = migrationEvents;
    this.#vmInformer = vm.informer;
    this.#vmEvents = vm.events;
    this.#node = node;
    this.#lifetime = lifetime;
    this.done = done;
  }

  /** Resolves once the caches are filled and reconciling (or competing for the Lease) began. */
  static async start(options: ControllerAppOptions): Promise<ControllerApp> {
    const { client, log } = options;
    const lifetime = new AbortController();
    const instance = options.instance ?? options.leaderElection?.identity ?? 'podvirt-controller';
    const expectations = new PodExpectations();
    // One recorder per kind an Event names, all writing as this replica.
    const recorder = <T>(reference: (obj: T) => ObjectReference): EventRecorder<T> =>
      new EventRecorder<T>({ sink: new KubeEventSink(client), reference, component: EVENT_SOURCE_COMPONENT, instance, log: log.child({ subcomponent: 'events' }), now: Date.now });
    const events = recorder<VirtualMachineInstance>(vmiReference);
    const migrationEvents = recorder<VirtualMachineInstanceMigration>(migrationReference);
    const vmEvents = recorder<VirtualMachine>(vmReference);
    const informers = new ClusterInformers({
      client,
      log,
      namespace: options.namespace,
      // Events flow only after informers.start(), by which time the controller exists.
      onVmi: (vmi, type) => {
        metrics?.observeVmi(vmi, type);
        controller.vmiChanged(vmi);
        migrations.vmiChanged(vmi);
        vms.vmiChanged(vmi);
        evacuations.vmiChanged(vmi);
      },
      onPod: (pod, change) => {
        controller.podChanged(pod, change);
        migrations.podChanged(pod, change);
      },
      onMigration: (vmim) => {
        migrations.migrationChanged(vmim);
        evacuations.migrationChanged(vmim);
      },
      onClaim: (claim) => controller.claimChanged(claim),
      onMountFailure: (pod) => {
        controller.podChanged(pod, 'update');
        migrations.podChanged(pod, 'update');
      },
      ...(options.resyncMs === undefined ? {} : { resyncMs: options.resyncMs }),
    });
    const metrics = options.metrics;
    const heartbeatTimeoutMs = options.nodeHeartbeatTimeoutMs ?? DEFAULT_NODE_HEARTBEAT_TIMEOUT_MS;
    const nodeInformer = new NodeInformer({
      client,
      log,
      heartbeatTimeoutMs,
      onNode: (node) => nodes.nodeChanged(node),
      ...(options.resyncMs === undefined ? {} : { resyncMs: options.resyncMs }),
    });
    const nodeClient = kubeNodeClient(client, log, EVENT_SOURCE_COMPONENT, instance);
    const nodes: NodeController = new NodeController({
      log: log.child({ subcomponent: 'nodes' }),
      deps: {
        nodes: nodeInformer,
        client: nodeClient,
        heartbeatTimeoutMs,
        now: () => new Date(),
        healthChanged: (nodeName) => {
          for (const vmi of informers.list()) if (vmi.status?.nodeName === nodeName) controller.vmiChanged(vmi);
        },
      },
    });
    const podConfig = { image: options.launcherImage, allowEmulation: options.allowEmulation, hostDisk: options.hostDisk ?? HOST_DISK_OFF, random: Math.random };
    const controller: VmiController = new VmiController({
      log,
      workers: options.workers,
      ...(metrics === undefined ? {} : { queueObserver: metrics.watchQueue(QUEUE_NAMES.vmi, () => controller.queueDepth) }),
      deps: {
        vmis: informers,
        pods: informers,
        claims: informers,
        mountEvents: informers,
        nodeHealth: nodeInformer,
        vmiClient: kubeVmiClient(client),
        podClient: kubePodClient(client),
        events,
        expectations,
        podConfig,
        now: () => new Date(),
        log,
        ...(options.podDownGraceMs === undefined ? {} : { podDownGraceMs: options.podDownGraceMs }),
      },
    });
    const vmiClient = kubeVmiClient(client);
    const podClient = kubePodClient(client);
    const migrations: MigrationController = new MigrationController({
      log: log.child({ subcomponent: 'migrations' }),
      workers: options.workers,
      ...(metrics === undefined ? {} : { queueObserver: metrics.watchQueue(QUEUE_NAMES.migration, () => migrations.queueDepth) }),
      deps: {
        migrations: informers,
        migrationClient: kubeMigrationClient(client),
        vmis: informers,
        vmiClient,
        pods: informers,
        podClient,
        events,
        migrationEvents: { recordMigration: (vmim, type, reason, message) => migrationEvents.record(vmim, type, reason, message) },
        expectations: new PodExpectations(),
        podConfig,
        claims: informers,
        mountEvents: informers,
        now: () => new Date(),
        log,
        ...(options.unschedulableTimeoutMs === undefined ? {} : { unschedulableTimeoutMs: options.unschedulableTimeoutMs }),
      },
    });
    const evacuations: EvacuationController = new EvacuationController({
      log: log.child({ subcomponent: 'evacuation' }),
      workers: 1,
      deps: {
        vmis: informers,
        migrations: informers,
        client: kubeEvacuationClient(client),
        events,
        clusterDefault: options.evictionStrategy ?? DEFAULT_EVICTION_STRATEGY,
        now: () => new Date(),
      },
    });
    const vmInformer = new VmInformer({
      client,
      log,
      namespace: options.namespace,
      onVm: (vm) => vms.vmChanged(vm),
      ...(options.resyncMs === undefined ? {} : { resyncMs: options.resyncMs }),
    });
    const vms: VmController = new VmController({
      log: log.child({ subcomponent: 'vms' }),
      workers: options.workers,
      ...(metrics === undefined ? {} : { queueObserver: metrics.watchQueue(QUEUE_NAMES.vm, () => vms.queueDepth) }),
      deps: {
        vms: vmInformer,
        vmis: informers,
        vmClient: kubeVmClient(client),
        events: { recordVm: (vm, type, reason, message) => vmEvents.record(vm, type, reason, message) },
        expectations: new PodExpectations(),
        now: () => new Date(),
        random: Math.random,
      },
    });
    try {
      await Promise.all([informers.start(lifetime.signal), vmInformer.start(lifetime.signal), nodeInformer.start(lifetime.signal)]);
    } catch (err) {
      await informers.close();
      await vmInformer.close();
      await nodeInformer.close();
      await nodeClient.close();
      await events.close();
      await migrationEvents.close();
      await vmEvents.close();
      throw err;
    }
    log.info({ namespace: options.namespace ?? '(all)' }, 'caches synced');
    const runBoth = async (signal: AbortSignal): Promise<void> => {
      metrics?.setLeading(true);
      try {
        await Promise.all([controller.run(signal), migrations.run(signal), vms.run(signal), evacuations.run(signal), nodes.run(signal)]);
      } finally {
        metrics?.setLeading(false);
      }
    };
    const election = options.leaderElection;
    const done: Promise<LeadershipEnd> = election
      ? new LeaderElector({
          client: new KubeLeaseClient(client, election.namespace, election.name),
          identity: election.identity,
          log,
          ...(election.timings && {
            leaseDurationMs: election.timings.leaseDurationMs,
            renewDeadlineMs: election.timings.renewDeadlineMs,
            renewIntervalMs: election.timings.retryPeriodMs,
            retryIntervalMs: election.timings.retryPeriodMs,
          }),
        }).run(lifetime.signal, (leading) => runBoth(leading))
      : runBoth(lifetime.signal).then(() => 'stopped' as const);
    return new ControllerApp(informers, events, migrationEvents, { informer: vmInformer, events: vmEvents }, { informer: nodeInformer, client: nodeClient }, lifetime, done);
  }

  /** Stops reconciling (releasing the Lease), then the informers, then flushes pending Events. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#lifetime.abort();
      await this.done;
      await this.#informers.close();
      await this.#vmInformer.close();
      await this.#node.informer.close();
      await this.#events.close();
      await this.#node.client.close();
      await this.#migrationEvents.close();
      await this.#vmEvents.close();
    })();
    return this.#closing;
  }
}
