// The kubevirt_vmi_* domain stats of every running VMI of the node, read from the launchers
// when /metrics is scraped and never otherwise. One scrape asks all launchers at once and waits
// at most `timeoutMs`: a launcher that is slower, fails or has no connection is left out of that
// scrape and counted in podvirt_handler_domain_stats_skipped_total{reason}. Every metric of one
// scrape shares the same read (concurrent scrapes share it too).

import type { cmd } from '@podvirt/proto';
import { Counter, Gauge, type Registry } from 'prom-client';
import { DOMAIN_METRICS, domainStatsSamples, migrationSamples, type DomainSample } from './domain-stats.js';

export interface DomainStatsTarget {
  readonly namespace: string;
  readonly name: string;
  /** Absent when the handler has no connection to the VMI's launcher. */
  readonly read?: (signal: AbortSignal) => Promise<cmd.DomainStats>;
  /** The migration the launcher last reported (its progress while it runs). */
  readonly migration?: cmd.MigrationProgress | undefined;
}

export interface DomainStatsCollectorOptions {
  readonly nodeName: string;
  /** The running VMIs of the node, asked at each scrape. */
  readonly targets: () => readonly DomainStatsTarget[];
  /** The bound on one scrape's launcher reads. */
  readonly timeoutMs: number;
  readonly registry: Registry;
}

export const DEFAULT_DOMAIN_STATS_TIMEOUT_MS = 3_000;

export type SkipReason = 'timeout' | 'error' | 'unconnected';

const BASE_LABELS = ['node', 'namespace', 'name'] as const;

interface Snapshot {
  readonly samples: ReadonlyMap<string, ReadonlyArray<{ labels: Record<string, string>; value: number }>>;
  readonly seconds: number;
}

export class DomainStatsCollector {
  readonly #o: DomainStatsCollectorOptions;
  readonly #skipped: Counter<'reason'>;
  #inflight: Promise<Snapshot> | undefined;

  constructor(options: DomainStatsCollectorOptions) {
    this.#o = options;
    const registers = [options.registry];
    const snapshot = (): Promise<Snapshot> => this.#snapshot();
    for (const spec of DOMAIN_METRICS) {
      const labelNames = [...BASE_LABELS, ...spec.labels];
      // Counters and gauges alike are rebuilt from the launchers' totals at each scrape.
      const fill = async (m: { reset(): void }, put: (labels: Record<string, string>, v: number) => void): Promise<void> => {
        const snap = await snapshot();
        m.reset();
        for (const s of snap.samples.get(spec.name) ?? []) put(s.labels, s.value);
      };
      if (spec.type === 'counter') {
        new Counter({ name: spec.name, help: spec.help, labelNames, registers, async collect() { await fill(this, (l, v) => this.inc(l, v)); } });
      } else {
        new Gauge({ name: spec.name, help: spec.help, labelNames, registers, async collect() { await fill(this, (l, v) => this.set(l, v)); } });
      }
    }
    const skipped = new Counter({
      name: 'podvirt_handler_domain_stats_skipped_total',
      help: 'Running VMIs left out of a scrape: launcher too slow for the scrape bound (timeout), failed (error), or not connected (unconnected).',
      labelNames: ['reason'],
      registers,
      async collect() {
        await snapshot();
      },
    });
    for (const reason of ['timeout', 'error', 'unconnected'] as const) skipped.inc({ reason }, 0);
    this.#skipped = skipped;
    new Gauge({
      name: 'podvirt_handler_domain_stats_scrape_duration_seconds',
      help: 'How long the last scrape took to read the domain stats of all running VMIs.',
      registers,
      async collect() {
        this.set((await snapshot()).seconds);
      },
    });
  }

  #snapshot(): Promise<Snapshot> {
    this.#inflight ??= this.#read().finally(() => {
      this.#inflight = undefined;
    });
    return this.#inflight;
  }

  async #read(): Promise<Snapshot> {
    const started = performance.now();
    const targets = this.#o.targets();
    const samples = new Map<string, Array<{ labels: Record<string, string>; value: number }>>();
    const add = (t: DomainStatsTarget, list: readonly DomainSample[]): void => {
      for (const s of list) {
        const labels = { node: this.#o.nodeName, namespace: t.namespace, name: t.name, ...s.labels };
        const at = samples.get(s.metric);
        if (at === undefined) samples.set(s.metric, [{ labels, value: s.value }]);
        else at.push({ labels, value: s.value });
      }
    };
    if (targets.length > 0) {
      const abort = new AbortController();
      let timer: NodeJS.Timeout | undefined;
      const expired = new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => {
          abort.abort();
          resolve('timeout');
        }, this.#o.timeoutMs);
      });
      const outcomes = await Promise.all(targets.map(async (t): Promise<cmd.DomainStats | SkipReason> => {
        if (t.read === undefined) return 'unconnected';
        try {
          return await Promise.race([t.read(abort.signal), expired]);
        } catch {
          return abort.signal.aborted ? 'timeout' : 'error';
        }
      }));
      clearTimeout(timer);
      targets.forEach((t, i) => {
        const outcome = outcomes[i]!;
        if (typeof outcome === 'string') return this.#skipped.inc({ reason: outcome });
        add(t, domainStatsSamples(outcome));
        add(t, migrationSamples(t.migration));
      });
    }
    return { samples, seconds: (performance.now() - started) / 1000 };
  }
}
