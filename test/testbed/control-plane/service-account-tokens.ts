// Service-account tokens for podvirt-controller and podvirt-handler run from the source tree
// against the real control plane, kept as a kubelet keeps a pod's projected token: asked from
// the TokenRequest API, short-lived, written to a file the client re-reads, and replaced at 80 %
// of their lifetime. A handler's token is bound to its Node, so the API server puts the node's
// name into the request's user info (`authentication.kubernetes.io/node-name`), which the
// node-restriction policies of manifests/ check, as for a DaemonSet pod's token.

import { rename, writeFile } from 'node:fs/promises';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { ControlPlaneError } from './control-plane-binaries.js';

/** The shortest lifetime the TokenRequest API grants (10 minutes). */
export const TOKEN_TTL_SECONDS = 600;
/** A token is replaced once this share of its lifetime has passed, as the kubelet does. */
export const REFRESH_AT = 0.8;
/** A failed refresh is tried again after this long. */
export const RETRY_MS = 5_000;

/** The two calls made: what a unit test fakes. */
export type TokenRequestApi = Pick<CoreV1Api, 'readNode' | 'createNamespacedServiceAccountToken'>;

export interface TokenSpec {
  readonly namespace: string;
  readonly serviceAccount: string;
  /** Bind the token to this Node (its name and uid go into the token). */
  readonly boundNode?: string;
  /** Where the token is kept (written whole: a temp file renamed over it). */
  readonly file: string;
}

export class ServiceAccountTokens {
  readonly #core: TokenRequestApi;
  readonly #log: Logger;
  readonly #timers = new Set<NodeJS.Timeout>();
  #closed = false;

  constructor(admin: KubeConfig | TokenRequestApi, logger: Logger) {
    this.#core = admin instanceof KubeConfig ? admin.makeApiClient(CoreV1Api) : admin;
    this.#log = logger.child({ component: 'service-account-tokens' });
  }

  /** Writes a first token to `spec.file` and keeps it fresh until close(). */
  async keep(spec: TokenSpec): Promise<void> {
    const expiresAt = await this.#write(spec);
    this.#schedule(spec, expiresAt);
  }

  #schedule(spec: TokenSpec, expiresAt: number): void {
    if (this.#closed) return;
    const now = Date.now();
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      this.#write(spec).then(
        (next) => this.#schedule(spec, next),
        (err: unknown) => {
          this.#log.warn({ err, serviceAccount: spec.serviceAccount }, 'token refresh failed, retrying');
          this.#schedule(spec, Date.now() + RETRY_MS / REFRESH_AT);
        },
      );
    }, Math.max(0, (expiresAt - now) * REFRESH_AT));
    timer.unref();
    this.#timers.add(timer);
  }

  async #write(spec: TokenSpec): Promise<number> {
    let boundObjectRef;
    if (spec.boundNode !== undefined) {
      const node = await this.#core.readNode({ name: spec.boundNode });
      boundObjectRef = { apiVersion: 'v1', kind: 'Node', name: spec.boundNode, uid: node.metadata?.uid ?? '' };
    }
    let status;
    try {
      const res = await this.#core.createNamespacedServiceAccountToken({
        name: spec.serviceAccount,
        namespace: spec.namespace,
        body: { spec: { audiences: [], expirationSeconds: TOKEN_TTL_SECONDS, ...(boundObjectRef === undefined ? {} : { boundObjectRef }) } },
      });
      status = res.status;
    } catch (err) {
      throw new ControlPlaneError('CONTROL_PLANE_TOKEN_FAILED', `TokenRequest for ${spec.namespace}/${spec.serviceAccount} failed: ${(err as Error).message}`, { cause: err });
    }
    if (status?.token === undefined) throw new ControlPlaneError('CONTROL_PLANE_TOKEN_FAILED', `TokenRequest for ${spec.namespace}/${spec.serviceAccount} returned no token`);
    const tmp = `${spec.file}.tmp`;
    await writeFile(tmp, status.token, { mode: 0o600 });
    await rename(tmp, spec.file);
    this.#log.info({ serviceAccount: `${spec.namespace}/${spec.serviceAccount}`, boundNode: spec.boundNode, expires: status.expirationTimestamp }, 'service-account token written');
    return new Date(status.expirationTimestamp).getTime();
  }

  close(): void {
    this.#closed = true;
    for (const t of this.#timers) clearTimeout(t);
    this.#timers.clear();
  }
}
