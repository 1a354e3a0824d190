// The whole controller process minus `process`: informers, the VMI controller and, when asked,
// leader election, wired together with one lifetime. main.ts and the end-to-end tests both
// start it through here.

import { vmiReference, type VirtualMachineInstance } from '@podvirt/api';
import { EventRecorder, KubeEventSink, type KubeClient } from '@podvirt/kube-runtime';
import type { Logger } from 'pino';
import { ClusterInformers } from './cluster-informers.js';
import { KubeLeaseClient } from './kube-lease-client.js';
import { KubePodClient } from './kube-pod-client.js';
import { KubeVmiClient } from './kube-vmi-client.js';
import { LeaderElector, type LeadershipEnd } from './leader-elector.js';
import { PodExpectations } from './pod-expectations.js';
import { VmiController } from './vmi-controller.js';

export interface LeaderElectionConfig {
  readonly namespace: string;
  readonly name: string;
  readonly identity: string;
}

export interface ControllerAppOptions {
  readonly client: KubeClient;
  readonly log: Logger;
  readonly launcherImage: string;
  readonly allowEmulation: boolean;
  readonly workers: number;
  /** Watch one namespace only. */
  readonly namespace?: string | undefined;
  /** Reconcile only while holding this Lease; always when unset. */
  readonly leaderElection?: LeaderElectionConfig | undefined;
  readonly resyncMs?: number;
  readonly podDownGraceMs?: number;
  /** Identifies this replica in Events; the leader identity when electing. */
  readonly instance?: string;
}

export const DEFAULT_LEASE_NAME = 'podvirt-controller';
/** The component the controller's Events name as their source. */
export const EVENT_SOURCE_COMPONENT = 'podvirt-controller';

export class ControllerApp {
  readonly #informers: ClusterInformers;
  readonly #events: EventRecorder<VirtualMachineInstance>;
  readonly #lifetime: AbortController;
  /** Why the controller stopped: closed, or leadership lost (the process should exit). */
  readonly done: Promise<LeadershipEnd>;
  #closing: Promise<void> | undefined;

  private constructor(informers: ClusterInformers, events: EventRecorder<VirtualMachineInstance>, lifetime: AbortController, done: Promise<LeadershipEnd>) {
    this.#informers = informers;
    this.#events = events;
    this.#lifetime = lifetime;
    this.done = done;
  }

  /** Resolves once the caches are filled and reconciling (or competing for the Lease) began. */
  static async start(options: ControllerAppOptions): Promise<ControllerApp> {
    const { client, log } = options;
    const lifetime = new AbortController();
    const instance = options.instance ?? options.leaderElection?.identity ?? 'podvirt-controller';
    const expectations = new PodExpectations();
    const events = new EventRecorder<VirtualMachineInstance>({
      sink: new KubeEventSink(client),
      reference: vmiReference,
      component: EVENT_SOURCE_COMPONENT,
      instance,
      log: log.child({ subcomponent: 'events' }),
      now: Date.now,
    });
    const informers = new ClusterInformers({
      client,
      log,
      namespace: options.namespace,
      // Events flow only after informers.start(), by which time the controller exists.
      onVmi: (vmi) => controller.vmiChanged(vmi),
      onPod: (pod, change) => controller.podChanged(pod, change),
      onClaim: (claim) => controller.claimChanged(claim),
      onMountFailure: (pod) => controller.podChanged(pod, 'update'),
      ...(options.resyncMs === undefined ? {} : { resyncMs: options.resyncMs }),
    });
    const controller: VmiController = new VmiController({
      log,
      workers: options.workers,
      deps: {
        vmis: informers,
        pods: informers,
        claims: informers,
        mountEvents: informers,
        vmiClient: new KubeVmiClient(client),
        podClient: new KubePodClient(client),
        events,
        expectations,
        podConfig: { image: options.launcherImage, allowEmulation: options.allowEmulation, random: Math.random },
        now: () => new Date(),
        log,
        ...(options.podDownGraceMs === undefined ? {} : { podDownGraceMs: options.podDownGraceMs }),
      },
    });
    try {
      await informers.start(lifetime.signal);
    } catch (err) {
      await informers.close();
      await events.close();
      throw err;
    }
    log.info({ namespace: options.namespace ?? '(all)' }, 'caches synced');
    const election = options.leaderElection;
    const done: Promise<LeadershipEnd> = election
      ? new LeaderElector({
          client: new KubeLeaseClient(client, election.namespace, election.name),
          identity: election.identity,
          log,
        }).run(lifetime.signal, (leading) => controller.run(leading))
      : controller.run(lifetime.signal).then(() => 'stopped' as const);
    return new ControllerApp(informers, events, lifetime, done);
  }

  /** Stops reconciling (releasing the Lease), then the informers, then flushes pending Events. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#lifetime.abort();
      await this.done;
      await this.#informers.close();
      await this.#events.close();
    })();
    return this.#closing;
  }
}
