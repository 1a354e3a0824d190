// The bearer token sent with every request. A token file is re-read once its copy is older than
// the refresh period (client-go re-reads after a minute too): the kubelet rotates projected
// service account tokens well before they expire, and a long-running agent must follow. An exec
// credential plugin, when the kubeconfig names one, supplies the token instead.

import { readFile } from 'node:fs/promises';
import { ExecCredential } from './exec-credential.js';
import { KubeClientError } from './kube-client-error.js';
import type { ExecConfig } from './kube-config.js';

export const TOKEN_REFRESH_MS = 60_000;

export interface BearerTokenOptions {
  readonly token?: string;
  readonly tokenFile?: string;
  /** An exec credential plugin; wins over a token and a token file, as in client-go. */
  readonly exec?: ExecConfig;
  readonly refreshMs?: number;
  /** The clock deciding when the file is stale; a parameter so tests need not wait a minute. */
  readonly now?: () => number;
}

export class BearerToken {
  readonly #o: BearerTokenOptions;
  #cached: string | undefined;
  #readAtMs = -Infinity;
  #reading: Promise<string | undefined> | undefined;
  readonly #exec: ExecCredential | undefined;

  constructor(options: BearerTokenOptions) {
    this.#o = options;
    this.#exec = options.exec === undefined ? undefined : new ExecCredential(options.exec, options.now);
  }

  /** The token to send now, or undefined when the config has none. */
  value(): Promise<string | undefined> {
    if (this.#exec !== undefined) return this.#exec.token();
    const file = this.#o.tokenFile;
    if (file === undefined) return Promise.resolve(this.#o.token);
    const now = this.#o.now ?? Date.now;
    if (this.#cached !== undefined && now() - this.#readAtMs < (this.#o.refreshMs ?? TOKEN_REFRESH_MS)) return Promise.resolve(this.#cached);
    this.#reading ??= this.#read(file).finally(() => (this.#reading = undefined));
    return this.#reading;
  }

  /** Forces a re-read before the next request: the server just said 401, the token may have rotated. */
  invalidate(): void {
    this.#readAtMs = -Infinity;
    this.#exec?.invalidate();
  }

  async #read(file: string): Promise<string | undefined> {
    try {
      const token = (await readFile(file, 'utf8')).trim();
      if (token === '') throw new KubeClientError('KUBE_ERR_CONFIG', 'the file is empty');
      this.#cached = token;
      this.#readAtMs = (this.#o.now ?? Date.now)();
      return token;
    } catch (err) {
      // A rotation replaces the file through a symlink swap; a failed read in that window keeps
      // the token we had rather than failing the request.
      const fallback = this.#cached ?? this.#o.token;
      if (fallback !== undefined) return fallback;
      throw new KubeClientError('KUBE_ERR_CONFIG', `cannot read the bearer token file ${file}: ${(err as Error).message}`, { cause: err });
    }
  }
}
