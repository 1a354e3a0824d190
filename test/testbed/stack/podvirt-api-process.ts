// podvirt-api on both lanes, as the install manifests start it (its Deployment, through the
// testbed mapping), with the one departure the testbed needs: the API server (kube-apiserver or
// the in-repo one, which calls webhooks the same way) reaches it on 127.0.0.1. The manifests' webhook configurations name the Service podvirt/podvirt-api, whose
// endpoints would be a pod IP; here each webhook's clientConfig becomes a `url` on the port
// podvirt-api listens on (webhooks may call loopback, unlike an APIService), applied before
// podvirt-api starts, which then writes their caBundle as in a cluster.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { freePort } from '../control-plane/real-control-plane.js';
import { findWorkload, ManifestError, type ManifestWorkload } from './manifest-workload.js';
import { StackProcess } from './stack-process.js';
import { testbedCommand, type TestbedCommand, type TestbedMapping } from './testbed-command.js';

type Doc = Record<string, unknown>;

/** The kinds the stack applies itself, rewritten, instead of the manifests' form. */
export const WEBHOOK_KINDS: readonly string[] = ['ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration'];

/** The webhook configurations of `manifests`, each webhook's Service reference turned into a URL on `port`. */
export function webhooksOnLoopback(manifests: readonly Doc[], port: number): Doc[] {
  return manifests.filter((d) => WEBHOOK_KINDS.includes(String(d['kind']))).map((doc) => {
    const copy = structuredClone(doc);
    for (const hook of (copy['webhooks'] as Doc[] | undefined) ?? []) {
      const config = hook['clientConfig'] as { service?: { path?: string } } | undefined;
      if (config?.service === undefined) throw new ManifestError(`${String(hook['name'])}: expected a service clientConfig`);
      hook['clientConfig'] = { url: `https://127.0.0.1:${port}${config.service.path ?? '/'}` };
    }
    return copy;
  });
}

export interface PodvirtApiProcess {
  readonly process: StackProcess;
  readonly command: TestbedCommand;
  readonly securePort: number;
}

/** Applies the webhook configurations and starts podvirt-api (the caller waits for its start line and stops it). */
export async function startPodvirtApi(o: {
  /** `kubectl apply -f FILE` as the cluster's admin (the lane's own kubectl). */
  readonly apply: (file: string) => Promise<unknown>;
  readonly manifests: readonly Doc[];
  readonly stateDir: string;
  readonly mapping: (workload: ManifestWorkload) => Promise<TestbedMapping>;
  readonly env: (command: TestbedCommand) => Record<string, string | undefined>;
  readonly onLine?: (line: string) => void;
}): Promise<PodvirtApiProcess> {
  const securePort = await freePort();
  const file = join(o.stateDir, 'podvirt-api-webhooks.json');
  await writeFile(file, JSON.stringify({ apiVersion: 'v1', kind: 'List', items: webhooksOnLoopback(o.manifests, securePort) }));
  await o.apply(file);
  const workload = findWorkload(o.manifests, 'Deployment', 'podvirt-api');
  const mapping = await o.mapping(workload);
  const command = testbedCommand(workload, { ...mapping, flagValues: { ...mapping.flagValues, '--secure-port': String(securePort) }, extraArgs: [...mapping.extraArgs, '--bind-address=127.0.0.1', '--tls-san=127.0.0.1'] });
  const proc = new StackProcess({ name: 'podvirt-api', argv: command.argv, env: o.env(command), ...(o.onLine === undefined ? {} : { onLine: o.onLine }) });
  return { process: proc, command, securePort };
}
