// A client-go exec credential plugin (users[].user.exec): the command is run without a terminal
// and prints an ExecCredential whose status carries a bearer token and, usually, when it
// expires. The token is reused until shortly before that, or until the server answers 401;
// then the plugin runs again. Plugins that hand out client certificates instead are refused
// with a clear error: the TLS identity is fixed when the client is made.

import { execFile } from 'node:child_process';
import { KubeClientError } from './kube-client-error.js';
import type { ExecConfig } from './kube-config.js';

// A plugin that talks to a cloud's token service answers within seconds; a stuck one must not
// hold every request forever.
const EXEC_TIMEOUT_MS = 60_000;
// Run again this long before the stated expiry, so that a request in flight does not carry a
// token that lapses on the way.
const EXPIRY_MARGIN_MS = 10_000;
const MAX_OUTPUT_BYTES = 1024 * 1024;

interface Cached {
  readonly token: string;
  /** ms since the epoch; Infinity when the plugin gave no expiry. */
  readonly expiresAtMs: number;
}

export class ExecCredential {
  readonly #config: ExecConfig;
  readonly #now: () => number;
  #cached: Cached | undefined;
  #running: Promise<string> | undefined;

  constructor(config: ExecConfig, now: () => number = Date.now) {
    this.#config = config;
    this.#now = now;
  }

  token(): Promise<string> {
    const cached = this.#cached;
    if (cached !== undefined && this.#now() < cached.expiresAtMs - EXPIRY_MARGIN_MS) return Promise.resolve(cached.token);
    this.#running ??= this.#run().finally(() => (this.#running = undefined));
    return this.#running;
  }

  /** The server refused the token: the next request runs the plugin again. */
  invalidate(): void {
    this.#cached = undefined;
  }

  async #run(): Promise<string> {
    const c = this.#config;
    const info = { apiVersion: c.apiVersion, kind: 'ExecCredential', spec: { interactive: false, ...(c.cluster === undefined ? {} : { cluster: c.cluster }) } };
    const env = { ...c.env, KUBERNETES_EXEC_INFO: JSON.stringify(info) };
    const stdout = await new Promise<string>((resolve, reject) => {
      execFile(c.command, [...c.args], { env, timeout: EXEC_TIMEOUT_MS, maxBuffer: MAX_OUTPUT_BYTES, encoding: 'utf8' }, (err, out, stderr) => {
        if (err === null) return resolve(out);
        const missing = (err as NodeJS.ErrnoException).code === 'ENOENT';
        const hint = missing && c.installHint !== undefined ? `: ${c.installHint.trim()}` : '';
        const detail = missing ? 'not found' : `${err.message.split('\n')[0] ?? ''}${stderr.trim() === '' ? '' : `: ${stderr.trim().slice(0, 300)}`}`;
        reject(new KubeClientError('KUBE_ERR_EXEC_PLUGIN', `exec credential plugin ${c.command}: ${detail}${hint}`, { cause: err }));
      });
    });
    this.#cached = this.#parse(stdout);
    return this.#cached.token;
  }

  #parse(stdout: string): Cached {
    const c = this.#config;
    const fail = (why: string): KubeClientError => new KubeClientError('KUBE_ERR_EXEC_PLUGIN', `exec credential plugin ${c.command}: ${why}`);
    let cred: { apiVersion?: unknown; kind?: unknown; status?: { token?: unknown; expirationTimestamp?: unknown; clientCertificateData?: unknown } };
    try {
      cred = JSON.parse(stdout) as typeof cred;
    } catch {
      throw fail(`printed something that is not JSON: ${stdout.trim().slice(0, 120)}`);
    }
    if (cred.kind !== 'ExecCredential' || cred.apiVersion !== c.apiVersion) {
      throw fail(`printed ${String(cred.kind)} ${String(cred.apiVersion)}, not an ExecCredential of ${c.apiVersion}`);
    }
    const token = cred.status?.token;
    if (typeof token !== 'string' || token === '') {
      if (cred.status?.clientCertificateData !== undefined) {
        throw fail('hands out a client certificate, which podvirt does not take from exec plugins; use a plugin that prints a token, or a client certificate in the kubeconfig');
      }
      throw fail('printed no status.token');
    }
    const expiry = cred.status?.expirationTimestamp;
    const expiresAtMs = typeof expiry === 'string' ? Date.parse(expiry) : Infinity;
    if (Number.isNaN(expiresAtMs)) throw fail(`printed an expirationTimestamp that is not a time: ${String(expiry)}`);
    return { token, expiresAtMs };
  }
}
