// The node API's TLS files, re-read while the server runs: the kubelet updates a Secret volume in
// place (an atomic swap of its `..data` link), so a renewed certificate or CA bundle reaches the
// TLS port without a restart. A grpc-js certificate provider: every `intervalMs` the three files
// are read; a set that differs from the one in force and makes a TLS context (the key is the
// certificate's, the PEM parses) is handed to the server for new handshakes; one that does not is
// logged and the set in force kept, so a half-written or broken update never takes the port down.
// The first read is load(), before the port binds, and fails as a bad file at start does.

import { createSecureContext } from 'node:tls';
import { readFile } from 'node:fs/promises';
import type { experimental } from '@grpc/grpc-js';
import { HandlerError } from '../handler-error.js';

type CertificateProvider = experimental.CertificateProvider;
type CaListener = experimental.CaCertificateUpdateListener;
type IdentityListener = experimental.IdentityCertificateUpdateListener;

export interface TlsFiles {
  readonly certFile: string;
  readonly keyFile: string;
  readonly clientCaFile: string;
}

interface TlsSet {
  readonly cert: Buffer;
  readonly key: Buffer;
  readonly ca: Buffer;
}

/** How often the files are looked at; the kubelet's own refresh of a Secret volume takes about a minute. */
export const DEFAULT_TLS_RELOAD_MS = 30_000;

export class ReloadingTlsFiles implements CertificateProvider {
  readonly #files: TlsFiles;
  readonly #intervalMs: number;
  readonly #onChange: (event: { readonly reloaded: boolean; readonly reason?: string }) => void;
  readonly #caListeners = new Set<CaListener>();
  readonly #identityListeners = new Set<IdentityListener>();
  #set: TlsSet | undefined;
  #timer: NodeJS.Timeout | undefined;
  #reading = false;
  /** The last refusal told, so that a file broken for an hour is said once. */
  #refused: string | undefined;

  constructor(files: TlsFiles, intervalMs: number, onChange: (event: { readonly reloaded: boolean; readonly reason?: string }) => void) {
    this.#files = files;
    this.#intervalMs = intervalMs;
    this.#onChange = onChange;
  }

  /** The first read: HANDLER_ERR_LISTEN naming the flag of a file that cannot be read or used. */
  async load(): Promise<void> {
    this.#set = await this.#read();
  }

  addCaCertificateListener(listener: CaListener): void {
    this.#caListeners.add(listener);
    this.#start();
    const set = this.#set;
    if (set !== undefined) process.nextTick(listener, { caCertificate: set.ca });
  }

  removeCaCertificateListener(listener: CaListener): void {
    this.#caListeners.delete(listener);
    this.#stopWhenUnused();
  }

  addIdentityCertificateListener(listener: IdentityListener): void {
    this.#identityListeners.add(listener);
    this.#start();
    const set = this.#set;
    if (set !== undefined) process.nextTick(listener, { certificate: set.cert, privateKey: set.key });
  }

  removeIdentityCertificateListener(listener: IdentityListener): void {
    this.#identityListeners.delete(listener);
    this.#stopWhenUnused();
  }

  /** One look at the files now (the timer's tick); resolves once the listeners have the result. */
  async reload(): Promise<void> {
    if (this.#reading) return;
    this.#reading = true;
    try {
      const next = await this.#read();
      const now = this.#set;
      this.#refused = undefined;
      if (now !== undefined && next.cert.equals(now.cert) && next.key.equals(now.key) && next.ca.equals(now.ca)) return;
      this.#set = next;
      for (const l of this.#identityListeners) l({ certificate: next.cert, privateKey: next.key });
      for (const l of this.#caListeners) l({ caCertificate: next.ca });
      this.#onChange({ reloaded: true });
    } catch (err) {
      const reason = (err as Error).message;
      if (reason !== this.#refused) this.#onChange({ reloaded: false, reason });
      this.#refused = reason;
    } finally {
      this.#reading = false;
    }
  }

  #start(): void {
    if (this.#timer !== undefined) return;
    this.#timer = setInterval(() => void this.reload(), this.#intervalMs);
    this.#timer.unref();
  }

  #stopWhenUnused(): void {
    if (this.#caListeners.size > 0 || this.#identityListeners.size > 0 || this.#timer === undefined) return;
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  async #read(): Promise<TlsSet> {
    const read = async (flag: string, path: string): Promise<Buffer> => {
      try {
        return await readFile(path);
      } catch (err) {
        throw new HandlerError('HANDLER_ERR_LISTEN', `cannot read ${flag} ${path}: ${(err as Error).message}`, { cause: err });
      }
    };
    const f = this.#files;
    // Settled in the flags' order, so a run with several unreadable files names the same one every time.
    const reads = await Promise.allSettled([read('--tls-client-ca', f.clientCaFile), read('--tls-cert', f.certFile), read('--tls-key', f.keyFile)]);
    const failed = reads.find((r) => r.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
    const [ca, cert, key] = reads.map((r) => (r as PromiseFulfilledResult<Buffer>).value) as [Buffer, Buffer, Buffer];
    try {
      // Throws when a PEM does not parse or the key is not the certificate's.
      createSecureContext({ ca, cert, key });
    } catch (err) {
      throw new HandlerError('HANDLER_ERR_LISTEN', `--tls-cert ${f.certFile}, --tls-key ${f.keyFile}, --tls-client-ca ${f.clientCaFile}: ${(err as Error).message}`, { cause: err });
    }
    return { ca, cert, key };
  }
}
