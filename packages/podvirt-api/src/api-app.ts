// podvirt-api wired: the certificates ensured first (the Secret, the webhook configurations'
// CA bundle), then the HTTPS port kube-apiserver calls, then the renewal loop. close() stops the
// loop and the port, bounded.

import { DEFAULT_EVICTION_STRATEGY, type EvictionStrategy } from '@podvirt/api';
import type { KubeClient } from '@podvirt/kube-runtime';
import type { Logger } from 'pino';
import { handleAdmission, isAdmissionPath, type AdmissionPaths } from './admission/admission-handler.js';
import { ADMISSION_PATHS, POD_EVICTION_PATH } from './admission/admitters.js';
import { kubeEvictionDeps, type KubeEvictionDeps } from './admission/kube-eviction-deps.js';
import { podEvictionAdmitter } from './admission/pod-eviction-admitter.js';
import type { ApiMetrics } from './metrics/api-metrics.js';
import { SecureServer } from './server/secure-server.js';
import { validityOf } from './tls/certificate-authority.js';
import type { RotationPolicy } from './tls/rotation-plan.js';
import { ServingCertificates } from './tls/serving-certificates.js';

export interface ApiAppOptions {
  readonly client: KubeClient;
  readonly log: Logger;
  readonly metrics: ApiMetrics;
  readonly namespace: string;
  readonly secretName: string;
  readonly servingNames: readonly string[];
  readonly rotation: RotationPolicy;
  readonly validatingWebhooks: readonly string[];
  readonly mutatingWebhooks: readonly string[];
  readonly bindAddress: string;
  readonly securePort: number;
  /** The eviction webhook's default for a VMI without `spec.evictionStrategy`; None when unset. */
  readonly evictionStrategy?: EvictionStrategy;
  /** Names this replica in the Events it records. */
  readonly instance?: string;
}

export class ApiApp {
  readonly #server: SecureServer;
  readonly #stop: AbortController;
  readonly #loop: Promise<void>;
  readonly #eviction: KubeEvictionDeps;
  #closing: Promise<void> | undefined;

  private constructor(server: SecureServer, stop: AbortController, loop: Promise<void>, eviction: KubeEvictionDeps) {
    this.#server = server;
    this.#stop = stop;
    this.#loop = loop;
    this.#eviction = eviction;
  }

  get securePort(): number {
    return this.#server.port;
  }

  static async start(o: ApiAppOptions): Promise<ApiApp> {
    // The first certificates come before the server exists; renewals go to the server.
    const serving: { server?: SecureServer } = {};
    const log = o.log.child({ subcomponent: 'certificates' });
    const certs = new ServingCertificates({
      client: o.client,
      namespace: o.namespace,
      secretName: o.secretName,
      names: o.servingNames,
      policy: o.rotation,
      validatingWebhooks: o.validatingWebhooks,
      mutatingWebhooks: o.mutatingWebhooks,
      log,
      onCertificates: (set) => {
        const ends = validityOf(set.serving.cert)?.notAfter;
        if (ends !== undefined) o.metrics.servingCertificateEnds(ends);
        serving.server?.setCertificate(set.serving);
        log.info({ notAfter: ends?.toISOString(), names: o.servingNames }, 'serving certificate in force');
      },
    });
    const first = await certs.ensure();
    const webhookLog = o.log.child({ subcomponent: 'admission' });
    const eviction = kubeEvictionDeps(o.client, webhookLog, o.evictionStrategy ?? DEFAULT_EVICTION_STRATEGY, o.instance ?? 'podvirt-api');
    const admitters: AdmissionPaths = { ...ADMISSION_PATHS, [POD_EVICTION_PATH]: podEvictionAdmitter(eviction.deps) };
    // Nothing is recorded before the server listens, so a failed listen leaves no Event pending.
    const server = await SecureServer.listen({
      host: o.bindAddress,
      port: o.securePort,
      serving: first.serving,
      handler: async (req, res) => {
        const path = new URL(req.url ?? '/', 'https://localhost').pathname;
        if (isAdmissionPath(path, admitters)) return handleAdmission(path, req, res, { log: webhookLog, metrics: o.metrics, admitters });
        res.writeHead(404, { 'content-type': 'text/plain' });
        res.end(`nothing at ${path}\n`);
      },
    });
    serving.server = server;
    const stop = new AbortController();
    return new ApiApp(server, stop, certs.run(stop.signal), eviction);
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#stop.abort();
      await this.#loop;
      await this.#server.close();
      await this.#eviction.close();
    })();
    return this.#closing;
  }
}
