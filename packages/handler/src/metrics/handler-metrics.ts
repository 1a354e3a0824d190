// The handler's Prometheus metrics, in a Registry of its own (never prom-client's global one, so
// two handlers in one test process cannot collide). Names follow KubeVirt where it has one:
// kubevirt_vmi_phase_count, the kubevirt_vmi_* domain stats (domain-stats-collector.ts) and
// client-go's workqueue metrics as virt-handler exports them; the rest carry podvirt's prefix. Gauges are computed at scrape time from live state.

import type { VirtualMachineInstance } from '@podvirt/api';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { DEFAULT_DOMAIN_STATS_TIMEOUT_MS, DomainStatsCollector, type DomainStatsTarget } from './domain-stats-collector.js';
import { PHASE_COUNT_LABELS, phaseCountLabels } from './vmi-phase-labels.js';

// virt-handler's VMI queue is named so in client-go's workqueue metrics.
export const QUEUE_NAME = 'virt-handler-vm';

export interface HandlerMetricsOptions {
  readonly nodeName: string;
  /** The VMIs the handler holds for this node (the informer's cache). */
  readonly vmis: () => Iterable<VirtualMachineInstance>;
  readonly queueDepth: () => number;
  /** The running VMIs whose launchers /metrics reads kubevirt_vmi_* domain stats from. */
  readonly domainStats?: () => readonly DomainStatsTarget[];
  /** The bound on those reads in one scrape. */
  readonly domainStatsTimeoutMs?: number;
  /** process_* and nodejs_* metrics; off in unit tests, whose text must be exact. */
  readonly processMetrics?: boolean;
}

// Reconciles are mostly launcher round trips (ms) but a Sync may take the 20 s long timeout.
const RECONCILE_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20];
const CALL_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5, 20, 60];

export class HandlerMetrics {
  readonly registry = new Registry();
  readonly #workDuration: Histogram<'name'>;
  readonly #retries: Counter<'name'>;
  readonly #reconciles: Counter<'result'>;
  readonly #launcherCalls: Histogram<'method' | 'code'>;
  readonly #nodeApiCalls: Counter<'method' | 'code'>;

  constructor(options: HandlerMetricsOptions) {
    const registers = [this.registry];
    new Gauge({
      name: 'kubevirt_vmi_phase_count',
      help: 'Sum of VMIs per phase and node.',
      labelNames: PHASE_COUNT_LABELS,
      registers,
      collect(this: Gauge<(typeof PHASE_COUNT_LABELS)[number]>) {
        this.reset();
        for (const vmi of options.vmis()) this.inc(phaseCountLabels(vmi, options.nodeName));
      },
    });
    new Gauge({
      name: 'kubevirt_workqueue_depth',
      help: 'Current depth of workqueue.',
      labelNames: ['name'],
      registers,
      collect(this: Gauge<'name'>) {
        this.set({ name: QUEUE_NAME }, options.queueDepth());
      },
    });
    this.#workDuration = new Histogram({
      name: 'kubevirt_workqueue_work_duration_seconds',
      help: 'How long in seconds processing an item from workqueue takes.',
      labelNames: ['name'],
      buckets: RECONCILE_BUCKETS,
      registers,
    });
    this.#retries = new Counter({ name: 'kubevirt_workqueue_retries_total', help: 'Total number of retries handled by workqueue.', labelNames: ['name'], registers });
    this.#reconciles = new Counter({ name: 'podvirt_handler_reconciles_total', help: 'VMI reconciles by result (ok or error).', labelNames: ['result'], registers });
    this.#launcherCalls = new Histogram({
      name: 'podvirt_handler_launcher_call_duration_seconds',
      help: 'Latency of calls from the handler to launchers, by Cmd method and gRPC status.',
      labelNames: ['method', 'code'],
      buckets: CALL_BUCKETS,
      registers,
    });
    this.#nodeApiCalls = new Counter({
      name: 'podvirt_handler_node_api_requests_total',
      help: 'Node API requests by method and gRPC status.',
      labelNames: ['method', 'code'],
      registers,
    });
    const targets = options.domainStats;
    if (targets !== undefined) {
      new DomainStatsCollector({ nodeName: options.nodeName, targets, timeoutMs: options.domainStatsTimeoutMs ?? DEFAULT_DOMAIN_STATS_TIMEOUT_MS, registry: this.registry });
    }
    if (options.processMetrics === true) collectDefaultMetrics({ register: this.registry });
  }

  /** One reconcile of one key finished; a failed one is retried by the queue. */
  observeReconcile(seconds: number, ok: boolean): void {
    this.#workDuration.observe({ name: QUEUE_NAME }, seconds);
    this.#reconciles.inc({ result: ok ? 'ok' : 'error' });
    if (!ok) this.#retries.inc({ name: QUEUE_NAME });
  }

  observeLauncherCall(method: string, code: string, seconds: number): void {
    this.#launcherCalls.observe({ method, code }, seconds);
  }

  observeNodeApiCall(method: string, code: string): void {
    this.#nodeApiCalls.inc({ method, code });
  }

  /** The exposition text for /metrics. */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
