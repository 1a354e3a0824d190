// The whole controller process minus `process`: informers, the VMI controller and, when asked,
// leader election, wired together with one lifetime. main.ts and the end-to-end tests both
// start it through here.

import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { ClusterInformers } from './cluster-informers.js';
import { KubeEventRecorder } from './kube-event-recorder.js';
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
  readonly kubeConfig: KubeConfig;
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

export class ControllerApp {
  readonly #informers: ClusterInformers;
  readonly #lifetime: AbortController;
  /** Why the controller stopped: closed, or leadership lost (the process should exit). */
  readonly done: Promise<LeadershipEnd>;
  #closing: Promise<void> | undefined;

  private constructor(informers: ClusterInformers, lifetime: AbortController, done: Promise<LeadershipEnd>) {
    this.#informers = informers;
    this.#lifetime = lifetime;
    this.done = done;
  }

  /** Resolves once the caches are filled and reconciling (or competing for the Lease) began. */
  static async start(options: ControllerAppOptions): Promise<ControllerApp> {
    const { kubeConfig, log } = options;
    const lifetime = new AbortController();
    const instance = options.instance ?? options.leaderElection?.identity ?? 'podvirt-controller';
    const expectations = new PodExpectations();
    const informers = new ClusterInformers({
      kubeConfig,
      log,
      namespace: options.namespace,
      // Events flow only after informers.start(), by which time the controller exists.
      onVmi: (vmi) => controller.vmiChanged(vmi),
      onPod: (pod, change) => controller.podChanged(pod, change),
      onClaim: (claim) => controller.claimChanged(claim),
      ...(options.resyncMs === undefined ? {} : { resyncMs: options.resyncMs }),
    });
    const controller: VmiController = new VmiController({
      log,
      workers: options.workers,
      deps: {
        vmis: informers,
        pods: informers,
        claims: informers,
        vmiClient: new KubeVmiClient(kubeConfig),
        podClient: new KubePodClient(kubeConfig),
        events: new KubeEventRecorder(kubeConfig, log, instance),
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
      throw err;
    }
    log.info({ namespace: options.namespace ?? '(all)' }, 'caches synced');
    const election = options.leaderElection;
    const done: Promise<LeadershipEnd> = election
      ? new LeaderElector({
          client: new KubeLeaseClient(kubeConfig, election.namespace, election.name),
          identity: election.identity,
          log,
        }).run(lifetime.signal, (leading) => controller.run(leading))
      : controller.run(lifetime.signal).then(() => 'stopped' as const);
    return new ControllerApp(informers, lifetime, done);
  }

  /** Stops reconciling (releasing the Lease), then the informers. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#lifetime.abort();
      await this.done;
      await this.#informers.close();
    })();
    return this.#closing;
  }
}
