// The handlers' node API TLS, made and renewed by podvirt-api so that nobody makes it by hand: a
// CA of its own (the Secret `--node-api-ca-secret`, read by podvirt-api only), kept by the same
// code as the serving certificate (ServingCertificates: CA and leaf lifetimes, renewal, the 409
// race), whose leaf is the handlers' serving certificate for the one fixed name
// NODE_API_SERVER_NAME (every node shares it: podvirt-api checks that name against the CA, not the
// pod IP it dials, which no certificate made before the pod could name). Each round copies the
// bundle and that leaf, without the CA key, into the Secret the handler DaemonSet mounts
// (`--handler-tls-secret`), and keeps this replica's client certificate CN=podvirt-api (in
// memory, signed by the current CA) fresh.
//
// The client certificate is renewed when it is due, or when the CA that signed it has left the
// bundle, and not from a CA younger than NODE_API_CA_PROPAGATION_MS while the one in force is
// still valid: the handlers learn a new bundle only when the kubelet refreshes their Secret volume
// (about a minute) and they re-read it (30 s); until then they trust the previous CA only, which
// stays in the bundle until it ends (two days after the renewal with the defaults). A replica that
// starts in that window has no previous certificate and takes one of the new CA at once.

import { isKubeApiError, ResourceClient, type KubeClient } from '@podvirt/kube-runtime';
import type { Logger } from 'pino';
import { BACKDATE_MS, issueClientCert, splitPemBundle, validityOf, type PemPair } from './certificate-authority.js';
import { SECRETS, type Secret } from './kube-objects.js';
import type { CertificateSet, RotationPolicy } from './rotation-plan.js';
import { ServingCertificates } from './serving-certificates.js';

/** The name every handler's node API certificate carries and podvirt-api checks. */
export const NODE_API_SERVER_NAME = 'podvirt-handler';
/** podvirt-api's identity on the node API (the handlers' `--tls-allowed-client CN=podvirt-api`). */
export const NODE_API_CLIENT_NAME = 'podvirt-api';

/** How long a new CA waits before it signs the client certificate in use (see above). */
export const NODE_API_CA_PROPAGATION_MS = 5 * 60_000;

/** What podvirt-api dials the handlers with. */
export interface NodeApiClientTls {
  /** PEM: the CAs a handler's certificate may be signed by. */
  readonly ca: string;
  readonly cert: string;
  readonly key: string;
}

export interface NodeApiCertificatesOptions {
  readonly client: KubeClient;
  readonly namespace: string;
  /** The CA and the handlers' leaf, with the CA key: podvirt-api's only. */
  readonly caSecretName: string;
  /** What the handler DaemonSet mounts: `ca.crt` (the bundle), `tls.crt`, `tls.key`. */
  readonly handlerSecretName: string;
  readonly policy: RotationPolicy;
  readonly log: Logger;
  readonly now?: () => Date;
  readonly maxRecheckMs?: number;
  /** Called with every client identity in force (the first, then each renewal or new bundle). */
  readonly onClientTls: (tls: NodeApiClientTls) => void;
}

const b64 = (s: string): string => Buffer.from(s).toString('base64');

export class NodeApiCertificates {
  readonly #o: NodeApiCertificatesOptions;
  readonly #keeper: ServingCertificates;
  readonly #secrets: ResourceClient<Secret>;
  #client: { pair: PemPair; signedBy: string } | undefined;
  #bundle = '';

  constructor(o: NodeApiCertificatesOptions) {
    this.#o = o;
    this.#secrets = new ResourceClient(o.client, SECRETS);
    this.#keeper = new ServingCertificates({
      client: o.client,
      namespace: o.namespace,
      secretName: o.caSecretName,
      names: [NODE_API_SERVER_NAME],
      policy: o.policy,
      validatingWebhooks: [],
      mutatingWebhooks: [],
      caName: 'podvirt node API CA',
      log: o.log,
      ...(o.now === undefined ? {} : { now: o.now }),
      ...(o.maxRecheckMs === undefined ? {} : { maxRecheckMs: o.maxRecheckMs }),
      onCertificates: () => undefined,
      publish: (set, signal) => this.#publish(set, signal),
    });
  }

  /** This replica's client certificate now (undefined before the first round). */
  get clientTls(): NodeApiClientTls | undefined {
    return this.#client === undefined ? undefined : { ca: this.#bundle, ...this.#client.pair };
  }

  /** When run() checks next. */
  get recheckAt(): Date {
    return this.#keeper.recheckAt;
  }

  /** One round: the CA Secret renewed if due, the handlers' Secret written, the client certificate kept. */
  async ensure(signal?: AbortSignal): Promise<void> {
    await this.#keeper.ensure(signal);
  }

  /** Re-checks until `signal` aborts (ServingCertificates.run). */
  run(signal: AbortSignal): Promise<void> {
    return this.#keeper.run(signal);
  }

  async #publish(set: CertificateSet, signal?: AbortSignal): Promise<boolean> {
    const settled = await this.#keepClient(set);
    return (await this.#writeHandlerSecret(set, signal)) && settled;
  }

  /** False while a renewal waits for the handlers to learn a new CA. */
  async #keepClient(set: CertificateSet): Promise<boolean> {
    const now = this.#o.now?.() ?? new Date();
    const t = now.getTime();
    const current = this.#client;
    const ends = current === undefined ? undefined : validityOf(current.pair.cert)?.notAfter.getTime();
    const trusted = current !== undefined && splitPemBundle(set.caBundle).includes(current.signedBy);
    let due = current === undefined || ends === undefined || t >= ends - this.#o.policy.certRenewBeforeMs || !trusted;
    let settled = true;
    const caMadeAt = (validityOf(set.ca.cert)?.notBefore.getTime() ?? 0) + BACKDATE_MS;
    if (due && current !== undefined && trusted && ends !== undefined && t < ends && current.signedBy !== set.ca.cert && t < caMadeAt + NODE_API_CA_PROPAGATION_MS) {
      due = false;
      settled = false;
    }
    if (due) {
      this.#client = { pair: await issueClientCert(set.ca, NODE_API_CLIENT_NAME, now, this.#o.policy.certDurationMs), signedBy: set.ca.cert };
      this.#o.log.info({ notAfter: validityOf(this.#client.pair.cert)?.notAfter.toISOString() }, 'node API client certificate in force');
    } else if (set.caBundle === this.#bundle) {
      return settled;
    }
    this.#bundle = set.caBundle;
    const tls = this.clientTls;
    if (tls !== undefined) this.#o.onClientTls(tls);
    return settled;
  }

  async #writeHandlerSecret(set: CertificateSet, signal?: AbortSignal): Promise<boolean> {
    const data = { 'ca.crt': b64(set.caBundle), 'tls.crt': b64(set.serving.cert), 'tls.key': b64(set.serving.key) };
    const { namespace, handlerSecretName: name } = this.#o;
    const existing = await this.#secrets.get(namespace, name, signal);
    const same = existing?.data !== undefined && Object.entries(data).every(([k, v]) => existing.data?.[k] === v);
    if (same) return true;
    try {
      if (existing === undefined) {
        await this.#secrets.create(namespace, { apiVersion: 'v1', kind: 'Secret', type: 'kubernetes.io/tls', metadata: { namespace, name }, data }, signal);
      } else {
        await this.#secrets.replace({ ...existing, data }, signal);
      }
    } catch (err) {
      // Another replica wrote it meanwhile: the next round (soon) compares again.
      if (isKubeApiError(err, 'KUBE_ERR_CONFLICT') || isKubeApiError(err, 'KUBE_ERR_ALREADY_EXISTS')) return false;
      throw err;
    }
    this.#o.log.info({ secret: name }, 'node API certificate written for the handlers');
    return true;
  }
}
