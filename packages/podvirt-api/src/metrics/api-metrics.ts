// podvirt-api's metrics, from a registry of its own: each admission decision by webhook and
// outcome, its duration, and when the serving certificate in force ends.

import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export class ApiMetrics {
  readonly registry = new Registry();
  readonly #requests: Counter<'webhook' | 'allowed'>;
  readonly #duration: Histogram<'webhook'>;
  readonly #certExpiry: Gauge;

  constructor(o: { processMetrics?: boolean } = {}) {
    if (o.processMetrics === true) collectDefaultMetrics({ register: this.registry });
    this.#requests = new Counter({ name: 'podvirt_api_admission_requests_total', help: 'Admission reviews answered, by webhook and outcome.', labelNames: ['webhook', 'allowed'], registers: [this.registry] });
    this.#duration = new Histogram({
      name: 'podvirt_api_admission_duration_seconds',
      help: 'Time from a review received to its answer.',
      labelNames: ['webhook'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
      registers: [this.registry],
    });
    this.#certExpiry = new Gauge({ name: 'podvirt_api_serving_certificate_expiry_timestamp_seconds', help: 'When the serving certificate in force ends (Unix time).', registers: [this.registry] });
  }

  admission(webhook: string, allowed: boolean, seconds: number): void {
    this.#requests.inc({ webhook, allowed: String(allowed) });
    this.#duration.observe({ webhook }, seconds);
  }

  servingCertificateEnds(at: Date): void {
    this.#certExpiry.set(at.getTime() / 1000);
  }
}
