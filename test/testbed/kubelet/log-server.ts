import { existsSync } from 'node:fs';
import { readFileSync } from 'node:fs';
import { createServer, type RequestListener, type Server } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { readContainerLog } from './container-log.js';
import type { PodWorker } from './pod-worker.js';

/** Finds the worker running `namespace/name`. */
export type WorkerLookup = (namespace: string, name: string) => PodWorker | undefined;

/**
 * The kubelet's `/containerLogs/<namespace>/<pod>/<container>` endpoint, which the API
 * server proxies pods/log to (with follow, tailLines, timestamps, limitBytes, sinceSeconds).
 */
export class LogServer {
  readonly #server: Server;
  readonly #requests = new Set<AbortController>();

  /** With `tls`, it serves HTTPS as a real kubelet does (kube-apiserver only speaks HTTPS to kubelets). */
  constructor(lookup: WorkerLookup, tls?: { readonly cert: string; readonly key: string }) {
    const handle: RequestListener = (req, res) => {
      const url = new URL(req.url ?? '/', 'http://kubelet');
      const parts = url.pathname.split('/').filter((p) => p !== '').map((p) => decodeURIComponent(p));
      const fail = (code: number, message: string): void => {
        res.writeHead(code, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason: code === 404 ? 'NotFound' : 'BadRequest', code }));
      };
      if (parts.length !== 4 || parts[0] !== 'containerLogs') return fail(404, 'not found');
      const [, namespace = '', name = '', container = ''] = parts;
      const worker = lookup(namespace, name);
      const record = worker?.records.get(container) ?? worker?.initRecords.get(container);
      if (worker === undefined || record === undefined) return fail(404, `container "${container}" in pod "${name}" not found`);
      const path = worker.paths.log(container);
      if (!existsSync(path)) {
        const reason = record.current.state === 'waiting' ? record.current.reason : 'ContainerCreating';
        return fail(400, `container "${container}" in pod "${name}" is waiting to start: ${reason}`);
      }
      const q = url.searchParams;
      const abort = new AbortController();
      this.#requests.add(abort);
      res.once('close', () => abort.abort());
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      res.flushHeaders();
      const number = (key: string): number | undefined => (q.get(key) === null ? undefined : Number(q.get(key)));
      const follow = q.get('follow') === 'true';
      void readContainerLog(path, res, {
        timestamps: q.get('timestamps') === 'true',
        tailLines: number('tailLines'),
        limitBytes: number('limitBytes'),
        sinceSeconds: number('sinceSeconds'),
        ...(follow ? { follow: { finished: () => record.current.state !== 'running', signal: abort.signal } } : {}),
      })
        .catch(() => undefined)
        .finally(() => {
          this.#requests.delete(abort);
          res.end();
        });
    };
    this.#server = tls === undefined ? createServer(handle) : createTlsServer({ cert: readFileSync(tls.cert), key: readFileSync(tls.key) }, handle);
  }

  async listen(host: string): Promise<number> {
    await new Promise<void>((resolve) => this.#server.listen(0, host, resolve));
    return (this.#server.address() as AddressInfo).port;
  }

  async close(): Promise<void> {
    for (const r of this.#requests) r.abort();
    const closed = new Promise<void>((resolve) => this.#server.close(() => resolve()));
    this.#server.closeAllConnections();
    await closed;
  }
}
