// Keeps podvirt-api's certificates: in the Secret (shared by every replica, so all serve the same
// certificate), renewed before they end (rotation-plan.ts), and the CA bundle written into each
// webhook configuration and APIService that point at podvirt-api. A replica that loses a write
// race (409) takes the winner's Secret. run() re-checks at the next renewal time, at least every
// `maxRecheckMs` (another replica may have renewed, or someone re-applied a configuration without
// its bundle). The node API's CA (node-api-certificates.ts) is kept by the same code, with what
// it publishes in place of bundles.

import { abortableSleep, isKubeApiError, ResourceClient, type KubeClient } from '@podvirt/kube-runtime';
import type { Logger } from 'pino';
import { PodvirtApiError } from '../api-error.js';
import { issueServingCert, makeCa, splitPemBundle, type PemPair } from './certificate-authority.js';
import { API_SERVICES, MUTATING_WEBHOOK_CONFIGURATIONS, SECRETS, VALIDATING_WEBHOOK_CONFIGURATIONS, type ApiService, type Secret, type WebhookConfiguration } from './kube-objects.js';
import { planRotation, type CertificateSet, type RotationPolicy } from './rotation-plan.js';

export interface ServingCertificatesOptions {
  readonly client: KubeClient;
  readonly namespace: string;
  readonly secretName: string;
  /** DNS names and IPs the serving certificate covers; the first is its CN. */
  readonly names: readonly string[];
  readonly policy: RotationPolicy;
  /** ValidatingWebhookConfigurations / MutatingWebhookConfigurations that get the CA bundle. */
  readonly validatingWebhooks: readonly string[];
  readonly mutatingWebhooks: readonly string[];
  /** APIServices served by podvirt-api (the subresource API): kube-apiserver checks its certificate against their caBundle. */
  readonly apiServices?: readonly string[];
  readonly log: Logger;
  /** The CA's common name; `podvirt-api CA` when unset. */
  readonly caName?: string;
  /**
   * Called at every round with the set in force, after the bundle is injected: what else is kept
   * from it (the node API's handler Secret and client certificate). False: look again soon.
   */
  readonly publish?: (set: CertificateSet, signal?: AbortSignal) => Promise<boolean>;
  readonly now?: () => Date;
  /** Upper bound between two checks. */
  readonly maxRecheckMs?: number;
  /** Called with every set in force (the first one, then each renewal seen). */
  readonly onCertificates: (set: CertificateSet) => void;
}

const DEFAULT_MAX_RECHECK_MS = 10 * 60_000;
const RETRY_MS = 10_000;

const b64 = (s: string): string => Buffer.from(s).toString('base64');
const unb64 = (s: string | undefined): string => Buffer.from(s ?? '', 'base64').toString('utf8');

function fromSecret(secret: Secret | undefined): CertificateSet | undefined {
  const d = secret?.data;
  if (d === undefined || d['ca.key'] === undefined || d['tls.crt'] === undefined) return undefined;
  const caBundle = unb64(d['ca.crt']);
  return { ca: { cert: splitPemBundle(caBundle)[0] ?? '', key: unb64(d['ca.key']) }, caBundle, serving: { cert: unb64(d['tls.crt']), key: unb64(d['tls.key']) } };
}

export class ServingCertificates {
  readonly #o: ServingCertificatesOptions;
  readonly #secrets: ResourceClient<Secret>;
  readonly #validating: ResourceClient<WebhookConfiguration>;
  readonly #mutating: ResourceClient<WebhookConfiguration>;
  readonly #apiServices: ResourceClient<ApiService>;
  #current: CertificateSet | undefined;
  #recheckAt = 0;

  constructor(o: ServingCertificatesOptions) {
    this.#o = o;
    this.#secrets = new ResourceClient(o.client, SECRETS);
    this.#validating = new ResourceClient(o.client, VALIDATING_WEBHOOK_CONFIGURATIONS);
    this.#mutating = new ResourceClient(o.client, MUTATING_WEBHOOK_CONFIGURATIONS);
    this.#apiServices = new ResourceClient(o.client, API_SERVICES);
  }

  get current(): CertificateSet | undefined {
    return this.#current;
  }

  /** When run() checks next. */
  get recheckAt(): Date {
    return new Date(this.#recheckAt);
  }

  /** One round: the Secret read, renewed if due, the bundle injected. Returns the set in force. */
  async ensure(signal?: AbortSignal): Promise<CertificateSet> {
    const now = this.#now();
    const secret = await this.#secrets.get(this.#o.namespace, this.#o.secretName, signal);
    const stored = fromSecret(secret);
    const step = planRotation(stored, this.#o.names, now, this.#o.policy);
    let set: CertificateSet;
    if (step.kind === 'keep' && stored !== undefined) {
      set = stored;
      this.#recheckAt = step.recheckAt.getTime();
    } else if (step.kind !== 'keep') {
      this.#o.log.info({ secret: this.#o.secretName, step: step.kind, reason: step.reason }, 'renewing certificates');
      const next = await this.#renew(stored, step, now);
      try {
        await this.#write(secret, next, signal);
        set = next;
      } catch (err) {
        if (!isKubeApiError(err, 'KUBE_ERR_CONFLICT') && !isKubeApiError(err, 'KUBE_ERR_ALREADY_EXISTS')) throw err;
        // Another replica renewed first: serve what it wrote.
        const theirs = fromSecret(await this.#secrets.get(this.#o.namespace, this.#o.secretName, signal));
        if (theirs === undefined) throw new PodvirtApiError('PODVIRT_API_ERR_CERTIFICATE', `secret ${this.#o.secretName} lost a write race and holds no certificates`, { cause: err });
        set = theirs;
      }
      const again = planRotation(set, this.#o.names, now, this.#o.policy);
      this.#recheckAt = again.kind === 'keep' ? again.recheckAt.getTime() : now.getTime() + RETRY_MS;
    } else {
      throw new PodvirtApiError('PODVIRT_API_ERR_CERTIFICATE', 'no certificates to keep');
    }
    if (this.#current?.serving.cert !== set.serving.cert || this.#current.caBundle !== set.caBundle) {
      this.#current = set;
      this.#o.onCertificates(set);
    }
    // A configuration not there yet (applied after the Deployment) is looked for again soon:
    // until it has the bundle, kube-apiserver cannot call its webhooks.
    const injected = await this.#inject(set.caBundle, signal);
    const published = (await this.#o.publish?.(set, signal)) ?? true;
    if (!injected || !published) this.#recheckAt = Math.min(this.#recheckAt, now.getTime() + RETRY_MS);
    return set;
  }

  /** Re-checks until `signal` aborts; a failed round is logged and retried. */
  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      const wait = Math.max(1_000, Math.min(this.#recheckAt - this.#now().getTime(), this.#o.maxRecheckMs ?? DEFAULT_MAX_RECHECK_MS));
      await abortableSleep(wait, signal);
      if (signal.aborted) return;
      try {
        await this.ensure(signal);
      } catch (err) {
        this.#o.log.warn({ err }, 'certificate check failed, retrying');
        this.#recheckAt = this.#now().getTime() + RETRY_MS;
      }
    }
  }

  #now(): Date {
    return this.#o.now?.() ?? new Date();
  }

  async #renew(set: CertificateSet | undefined, step: Exclude<ReturnType<typeof planRotation>, { kind: 'keep' }>, now: Date): Promise<CertificateSet> {
    const p = this.#o.policy;
    let ca: PemPair;
    let caBundle: string;
    if (step.kind === 'new-ca' || set === undefined) {
      ca = await makeCa(this.#o.caName ?? 'podvirt-api CA', now, p.caDurationMs);
      caBundle = [ca.cert, ...(step.kind === 'new-ca' ? step.keepInBundle : [])].join('');
    } else {
      ca = set.ca;
      caBundle = set.caBundle;
    }
    const serving = await issueServingCert(ca, this.#o.names, now, p.certDurationMs);
    return { ca, caBundle, serving };
  }

  async #write(existing: Secret | undefined, set: CertificateSet, signal?: AbortSignal): Promise<Secret> {
    const data = { 'ca.crt': b64(set.caBundle), 'ca.key': b64(set.ca.key), 'tls.crt': b64(set.serving.cert), 'tls.key': b64(set.serving.key) };
    if (existing === undefined) {
      return this.#secrets.create(this.#o.namespace, {
        apiVersion: 'v1', kind: 'Secret', type: 'Opaque',
        metadata: { namespace: this.#o.namespace, name: this.#o.secretName },
        data,
      }, signal);
    }
    return this.#secrets.replace({ ...existing, data }, signal);
  }

  /** False when a configuration is missing. */
  async #inject(bundle: string, signal?: AbortSignal): Promise<boolean> {
    const encoded = b64(bundle);
    const targets = [
      ...this.#o.validatingWebhooks.map((name) => ({ client: this.#validating, name })),
      ...this.#o.mutatingWebhooks.map((name) => ({ client: this.#mutating, name })),
    ];
    let found = true;
    for (const { client, name } of targets) {
      const config = await client.get(undefined, name, signal);
      if (config === undefined) {
        this.#o.log.warn({ configuration: name }, 'webhook configuration not found; its CA bundle is not set');
        found = false;
        continue;
      }
      const webhooks = config.webhooks ?? [];
      if (webhooks.every((w) => w.clientConfig?.caBundle === encoded)) continue;
      await client.replace({ ...config, webhooks: webhooks.map((w) => ({ ...w, clientConfig: { ...w.clientConfig, caBundle: encoded } })) }, signal);
      this.#o.log.info({ configuration: name }, 'CA bundle written into the webhook configuration');
    }
    for (const name of this.#o.apiServices ?? []) {
      // An API server without the aggregation layer has no apiservices: its 404 reads as missing.
      const service = await this.#apiServices.get(undefined, name, signal);
      if (service === undefined) {
        this.#o.log.warn({ apiService: name }, 'APIService not found; its CA bundle is not set');
        found = false;
        continue;
      }
      if (service.spec?.caBundle === encoded) continue;
      await this.#apiServices.replace({ ...service, spec: { ...service.spec, caBundle: encoded } }, signal);
      this.#o.log.info({ apiService: name }, 'CA bundle written into the APIService');
    }
    return found;
  }
}
