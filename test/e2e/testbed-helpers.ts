// Shared by the testbed conformance suites: an API server per test file, kubectl runs and
// clients against it, and polling with a deadline.
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { startApiServer, writeKubeconfig, type ApiServer, type ApiServerOptions, type JsonObject } from '../testbed/apiserver/index.js';
import { readPodvirtCrds } from '../testbed/cli/podvirt-crds.js';

export interface TestApiServer {
  server: ApiServer;
  kubeconfigPath: string;
  kubeConfig: KubeConfig;
  dir: string;
  close(): Promise<void>;
}

/** An API server serving podvirt's CRDs, with a kubeconfig in a fresh temp dir. */
export async function startTestApiServer(options: ApiServerOptions = {}): Promise<TestApiServer> {
  const dir = await mkdtemp(join(tmpdir(), 'podvirt-apiserver-'));
  const server = await startApiServer({ crds: await readPodvirtCrds(), ...options });
  const kubeconfigPath = join(dir, 'kubeconfig');
  await writeKubeconfig(kubeconfigPath, server.url);
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(kubeconfigPath);
  return {
    server,
    kubeconfigPath,
    kubeConfig,
    dir,
    async close() {
      await server.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs the real kubectl against `kubeconfig`; never throws on a non-zero exit. `binary`: another
 * kubectl (the real control plane's own release, within the supported version skew).
 */
export function kubectl(kubeconfig: string, args: string[], input?: string, binary = 'kubectl'): Promise<KubectlResult> {
  return new Promise((resolve) => {
    // kube-apiserver's /metrics alone is several MB: far above execFile's default 1 MB buffer.
    const child = execFile(binary, ['--kubeconfig', kubeconfig, ...args], { timeout: 60_000, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof err.code === 'number' ? err.code : 1;
      // Not kubectl's own exit (a timeout, a buffer overrun): say so where a test shows stderr.
      resolve({ code, stdout, stderr: err !== null && typeof err.code !== 'number' ? `${stderr}${err.message}` : stderr });
    });
    if (input !== undefined) child.stdin?.end(input);
  });
}

/** A plain HTTP request to the server, returning status and parsed JSON (or text). */
export async function http(base: string, method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<{ status: number; body: JsonObject }> {
  const init: RequestInit = { method, headers: { 'Content-Type': contentType, Accept: 'application/json' } };
  if (body !== undefined) init.body = typeof body === 'string' ? body : JSON.stringify(body);
  const res = await fetch(`${base}${path}`, init);
  const text = await res.text();
  let parsed: JsonObject;
  try {
    parsed = JSON.parse(text) as JsonObject;
  } catch {
    parsed = { text };
  }
  return { status: res.status, body: parsed };
}

export function podManifest(name: string, extra: JsonObject = {}): JsonObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels: { app: 'demo' } },
    spec: { containers: [{ name: 'main', image: 'busybox', command: ['sh', '-c', 'sleep 1000'] }] },
    ...extra,
  };
}
