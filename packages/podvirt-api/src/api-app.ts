// podvirt-api wired: the certificates ensured first (the Secret, the webhook configurations'
// CA bundle; the node API's CA and the handlers' Secret when podvirt-api makes them), then the HTTPS port kube-apiserver calls, then the renewal loop. close() stops the
// loop and the port, bounded.

import { DEFAULT_EVICTION_STRATEGY, type EvictionStrategy } from '@podvirt/api';
import type { KubeClient } from '@podvirt/kube-runtime';
import type { Logger } from 'pino';
import { handleAdmission, isAdmissionPath, type AdmissionPaths } from './admission/admission-handler.js';
import { ADMISSION_PATHS, POD_EVICTION_PATH } from './admission/admitters.js';
import { kubeEvictionDeps, type KubeEvictionDeps } from './admission/kube-eviction-deps.js';
import { podEvictionAdmitter } from './admission/pod-eviction-admitter.js';
import type { ApiMetrics } from './metrics/api-metrics.js';
import type { SubresourceApi } from './subresources/subresource-api.js';
import { SecureServer } from './server/secure-server.js';
import { validityOf } from './tls/certificate-authority.js';
import type { RotationPolicy } from './tls/rotation-plan.js';
import type { NodeApiCertificates } from './tls/node-api-certificates.js';
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
  /** APIServices whose caBundle is kept (the subresource API's). */
  readonly apiServices?: readonly string[];
  readonly bindAddress: string;
  readonly securePort: number;
  /** The eviction webhook's default for a VMI without `spec.evictionStrategy`; None when unset. */
  readonly evictionStrategy?: EvictionStrategy;
  /** Names this replica in the Events it records. */
  readonly instance?: string;
  /** The aggregated subresource API on the same port; undefined serves admission only. */
  readonly subresources?: SubresourceApi;
  /** The node API's certificates, made and renewed here (`--node-api-ca-secret`); undefined: none, or files. */
  readonly nodeApi?: NodeApiCertificates;
}

export class ApiApp {
  readonly #server: SecureServer;
  readonly #stop: AbortController;
  readonly #loop: Promise<void>;
  readonly #eviction: KubeEvictionDeps;
  readonly #subresources: SubresourceApi | undefined;
  #closing: Promise<void> | undefined;

  private constructor(server: SecureServer, stop: AbortController, loop: Promise<void>, eviction: KubeEvictionDeps, subresources: SubresourceApi | undefined) {
    this.#server = server;
    this.#stop = stop;
    this.#loop = loop;
    this.#eviction = eviction;
    this.#subresources = subresources;
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
      ...(o.apiServices === undefined ? {} : { apiServices: o.apiServices }),
      log,
      onCertificates: (set) => {
        const ends = validityOf(set.serving.cert)?.notAfter;
        if (ends !== undefined) o.metrics.servingCertificateEnds(ends);
        serving.server?.setCertificate(set.serving);
        log.info({ notAfter: ends?.toISOString(), names: o.servingNames }, 'serving certificate in force');
      },
    });
    const first = await certs.ensure();
    await o.nodeApi?.ensure();
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
        if (o.subresources?.handles(path) === true) return o.subresources.serve(req, res);
        res.writeHead(404, { 'content-type': 'text/plain' });
        res.end(`nothing at ${path}\n`);
      },
      ...(o.subresources === undefined ? {} : { upgrade: o.subresources.upgrade.bind(o.subresources) }),
    });
    serving.server = server;
    const stop = new AbortController();
    const loop = Promise.all([certs.run(stop.signal), o.nodeApi?.run(stop.signal)]).then(() => undefined);
    return new ApiApp(server, stop, loop, eviction, o.subresources);
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#stop.abort();
      await this.#loop;
      // Streams first: an upgraded socket is not the server's to close.
      await this.#subresources?.close();
      await this.#server.close();
      await this.#eviction.close();
    })();
    return this.#closing;
  }
}
