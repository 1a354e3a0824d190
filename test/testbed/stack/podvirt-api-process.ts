// podvirt-api on both lanes, as the install manifests start it (its Deployment, through the
// testbed mapping), with the departures the testbed needs. It listens on the host's address on
// the pod network (the testbed's bridge, `Testbed.hostAddress`), not on a pod IP. The manifests'
// webhook configurations name the Service podvirt/podvirt-api; here each webhook's clientConfig
// becomes a `url` on that address, which both API servers call the same way. Both API servers
// aggregate, and an APIService can only name a Service: the stack makes podvirt-api a Service
// without selector whose Endpoints is that address (Endpoints refuse loopback), which
// kube-apiserver (--enable-aggregator-routing) and the in-repo aggregator dial; podvirt-api then reaches each node's
// handler on its TLS node API port (127.0.0.1) with a client certificate of the cluster CA,
// CN=podvirt-api, which the handlers allow, given as files (the Deployment's
// --node-api-ca-secret and --handler-tls-secret are dropped: no handler here mounts a Secret). All of it is applied before podvirt-api starts, which
// then writes the caBundles as in a cluster.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { NODE_API_SECRET_FLAGS } from '@podvirt/podvirt-api';
import { freePort } from '../free-port.js';
import { findWorkload, ManifestError, type ManifestWorkload } from './manifest-workload.js';
import { StackProcess } from './stack-process.js';
import { testbedCommand, type TestbedCommand, type TestbedMapping } from './testbed-command.js';

type Doc = Record<string, unknown>;

/** The kinds the stack applies itself, rewritten, instead of the manifests' form. */
export const WEBHOOK_KINDS: readonly string[] = ['ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration'];

/** The webhook configurations of `manifests`, each webhook's Service reference turned into a URL on `host`:`port`. */
export function webhooksAt(manifests: readonly Doc[], host: string, port: number): Doc[] {
  return manifests.filter((d) => WEBHOOK_KINDS.includes(String(d['kind']))).map((doc) => {
    const copy = structuredClone(doc);
    for (const hook of (copy['webhooks'] as Doc[] | undefined) ?? []) {
      const config = hook['clientConfig'] as { service?: { path?: string } } | undefined;
      if (config?.service === undefined) throw new ManifestError(`${String(hook['name'])}: expected a service clientConfig`);
      hook['clientConfig'] = { url: `https://${host}:${port}${config.service.path ?? '/'}` };
    }
    return copy;
  });
}

export interface PodvirtApiProcess {
  readonly process: StackProcess;
  /** A new process of the same command (same port), for a restart once `process` has exited. */
  respawn(): StackProcess;
  readonly command: TestbedCommand;
  readonly securePort: number;
}

/**
 * The APIService of `manifests` and, for the Service it names, a Service without selector and its
 * Endpoints at `host`:`port`: kube-apiserver resolves the Service to that endpoint.
 */
export function aggregatedApiAt(manifests: readonly Doc[], host: string, port: number): Doc[] {
  const apiServices = manifests.filter((d) => d['kind'] === 'APIService');
  return apiServices.flatMap((doc) => {
    const service = (doc['spec'] as { service?: { namespace?: string; name?: string; port?: number } } | undefined)?.service;
    if (service?.name === undefined || service.namespace === undefined) throw new ManifestError(`APIService ${String((doc['metadata'] as Doc | undefined)?.['name'])}: expected a service`);
    const metadata = { name: service.name, namespace: service.namespace };
    return [
      { apiVersion: 'v1', kind: 'Service', metadata, spec: { ports: [{ name: 'https', port: service.port ?? 443, targetPort: port, protocol: 'TCP' }] } },
      { apiVersion: 'v1', kind: 'Endpoints', metadata, subsets: [{ addresses: [{ ip: host }], ports: [{ name: 'https', port, protocol: 'TCP' }] }] },
      doc,
    ];
  });
}

/** What podvirt-api needs to call the handlers' node API: the CA, its client pair, each node's address. */
export interface HandlerApiAccess {
  readonly ca: string;
  readonly client: { readonly cert: string; readonly key: string };
  readonly addresses: ReadonlyMap<string, string>;
}

/** Applies the webhook configurations and the APIService, and starts podvirt-api (the caller waits for its start line and stops it). */
export async function startPodvirtApi(o: {
  /** `kubectl apply -f FILE` as the cluster's admin (the lane's own kubectl). */
  readonly apply: (file: string) => Promise<unknown>;
  /** Where the API server reaches podvirt-api (the host's address on the pod network). */
  readonly host: string;
  /** The handlers' node API, for the aggregated subresource API; absent: no APIService is applied (podvirt-api serves admission only). */
  readonly handlers?: HandlerApiAccess;
  readonly manifests: readonly Doc[];
  readonly stateDir: string;
  readonly mapping: (workload: ManifestWorkload) => Promise<TestbedMapping>;
  readonly env: (command: TestbedCommand) => Record<string, string | undefined>;
  readonly onLine?: (line: string) => void;
}): Promise<PodvirtApiProcess> {
  const securePort = await freePort();
  const file = join(o.stateDir, 'podvirt-api-webhooks.json');
  const items = [...webhooksAt(o.manifests, o.host, securePort), ...(o.handlers === undefined ? [] : aggregatedApiAt(o.manifests, o.host, securePort))];
  await writeFile(file, JSON.stringify({ apiVersion: 'v1', kind: 'List', items }));
  await o.apply(file);
  const workload = findWorkload(o.manifests, 'Deployment', 'podvirt-api');
  const mapping = await o.mapping(workload);
  const handlers = o.handlers;
  const handlerArgs = handlers === undefined ? [] : [
    `--handler-ca=${handlers.ca}`, `--handler-client-cert=${handlers.client.cert}`, `--handler-client-key=${handlers.client.key}`,
    ...[...handlers.addresses].map(([node, address]) => `--handler-address=${node}=${address}`),
  ];
  const command = testbedCommand(workload, {
    ...mapping,
    flagValues: { ...mapping.flagValues, '--secure-port': String(securePort) },
    extraArgs: [...mapping.extraArgs, `--bind-address=${o.host}`, `--tls-san=${o.host}`, ...handlerArgs],
  });
  // The handlers here are processes without the Secret volume the DaemonSet mounts: podvirt-api
  // gets its node API identity as files, in place of the Secrets it makes on a cluster.
  const argv = handlers === undefined ? command.argv : command.argv.filter((a) => !NODE_API_SECRET_FLAGS.some((f) => a.startsWith(`${f}=`)));
  const spawn = (): StackProcess => new StackProcess({ name: 'podvirt-api', argv, env: o.env(command), ...(o.onLine === undefined ? {} : { onLine: o.onLine }) });
  return { process: spawn(), respawn: spawn, command: { ...command, argv }, securePort };
}
