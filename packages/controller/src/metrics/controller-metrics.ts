// The controller's Prometheus metrics, in a Registry of its own: KubeVirt's VMI phase-transition
// histograms (from the VMI's own phaseTransitionTimestamps, observed when the informer sees the
// phase change), client-go's workqueue metrics of the three queues (VMIs, VMs, migrations), and the leading status. Names,
// types, labels and buckets follow virt-controller's.

import type { VirtualMachineInstance } from '@podvirt/api';
import type { InformerEventType } from '@podvirt/kube-runtime';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { QueueObserver } from '../reconcile/keyed-workers.js';

// virt-controller's phase-transition buckets: half a second to an hour.
export const PHASE_TRANSITION_BUCKETS = [0.5, 1, 2, 5, 10, 20, 30, 40, 50, 60, 90, 120, 180, 300, 600, 1200, 1800, 3600];
const WORK_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20];

/** The controller's queues, named as virt-controller names them in the workqueue metrics. */
export const QUEUE_NAMES = { vmi: 'virt-controller-vmi', vm: 'virt-controller-vm', migration: 'virt-controller-migration' } as const;

export interface ControllerMetricsOptions {
  /** process_* and nodejs_* metrics; off in unit tests, whose text must be exact. */
  readonly processMetrics?: boolean;
}

export class ControllerMetrics {
  readonly registry = new Registry();
  readonly #fromCreation: Histogram<'phase'>;
  readonly #between: Histogram<'phase' | 'last_phase'>;
  readonly #adds: Counter<'name'>;
  readonly #work: Histogram<'name'>;
  readonly #retries: Counter<'name'>;
  readonly #leading: Gauge;
  /** The last phase seen of each live VMI, by UID: a change is a transition. */
  readonly #phases = new Map<string, string>();
  readonly #depths = new Map<string, () => number>();

  constructor(options: ControllerMetricsOptions = {}) {
    const depths = this.#depths;
    const registers = [this.registry];
    this.#between = new Histogram({
      name: 'kubevirt_vmi_phase_transition_time_seconds',
      help: 'Seconds a VMI took from one phase to the next, by new and previous phase.',
      labelNames: ['phase', 'last_phase'],
      buckets: PHASE_TRANSITION_BUCKETS,
      registers,
    });
    this.#fromCreation = new Histogram({
      name: 'kubevirt_vmi_phase_transition_time_from_creation_seconds',
      help: 'Seconds from a VMI\'s creation to its entering each phase.',
      labelNames: ['phase'],
      buckets: PHASE_TRANSITION_BUCKETS,
      registers,
    });
    new Gauge({
      name: 'kubevirt_workqueue_depth',
      help: 'Keys waiting in the work queue.',
      labelNames: ['name'],
      registers,
      collect(this: Gauge<'name'>) {
        for (const [name, depth] of depths) this.set({ name }, depth());
      },
    });
    this.#adds = new Counter({ name: 'kubevirt_workqueue_adds_total', help: 'Keys added to the work queue.', labelNames: ['name'], registers });
    this.#work = new Histogram({
      name: 'kubevirt_workqueue_work_duration_seconds',
      help: 'Seconds one sync of a key took.',
      labelNames: ['name'],
      buckets: WORK_BUCKETS,
      registers,
    });
    this.#retries = new Counter({ name: 'kubevirt_workqueue_retries_total', help: 'Failed syncs the work queue retries.', labelNames: ['name'], registers });
    this.#leading = new Gauge({ name: 'kubevirt_virt_controller_leading_status', help: '1 while this controller reconciles (holds the Lease, or elects none), else 0.', registers });
    this.#leading.set(0);
    if (options.processMetrics === true) collectDefaultMetrics({ register: this.registry });
  }

  /** Exports one named queue: its depth read at scrape time, its adds and syncs through the observer. */
  watchQueue(name: string, depth: () => number): QueueObserver {
    this.#depths.set(name, depth);
    this.#adds.inc({ name }, 0);
    this.#retries.inc({ name }, 0);
    return {
      added: () => this.#adds.inc({ name }),
      synced: (seconds, ok) => {
        this.#work.observe({ name }, seconds);
        if (!ok) this.#retries.inc({ name });
      },
    };
  }

  setLeading(leading: boolean): void {
    this.#leading.set(leading ? 1 : 0);
  }

  /**
   * Every informer event of a VMI: a phase that differs from the last one seen is a transition,
   * timed by the VMI's phaseTransitionTimestamps (the first sight of a VMI only records its
   * phase, as a restarted controller cannot know what it missed).
   */
  observeVmi(vmi: VirtualMachineInstance, type: InformerEventType): void {
    const uid = vmi.metadata.uid ?? '';
    if (type === 'DELETED') {
      this.#phases.delete(uid);
      return;
    }
    const phase = vmi.status?.phase ?? '';
    const last = this.#phases.get(uid);
    this.#phases.set(uid, phase);
    if (last === undefined || last === phase || phase === '') return;
    const stamps = vmi.status?.phaseTransitionTimestamps ?? [];
    const at = (p: string): number | undefined => {
      const s = stamps.find((t) => t.phase === p)?.phaseTransitionTimestamp;
      return s === undefined ? undefined : Date.parse(s);
    };
    const entered = at(phase);
    if (entered === undefined || Number.isNaN(entered)) return;
    const created = vmi.metadata.creationTimestamp === undefined ? NaN : Date.parse(vmi.metadata.creationTimestamp);
    if (!Number.isNaN(created)) this.#fromCreation.observe({ phase }, Math.max(0, (entered - created) / 1000));
    const left = last === '' ? created : at(last);
    if (left !== undefined && !Number.isNaN(left)) this.#between.observe({ phase, last_phase: last }, Math.max(0, (entered - left) / 1000));
  }
}
