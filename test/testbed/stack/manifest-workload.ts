// The podvirt components as the install manifests describe them: the DaemonSet / Deployment
// in `manifests/*.yaml` (top level only: crds/ and examples/ hold no workloads), reduced to
// what a testbed process needs — its ServiceAccount, the one container's command, args, env and
// volume mounts, and the pod's hostPath volumes.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';

export interface ManifestEnvVar {
  readonly name: string;
  readonly value?: string;
  /** The downward API field of `valueFrom.fieldRef`. */
  readonly fieldPath?: string;
}

export interface ManifestWorkload {
  readonly kind: string;
  readonly name: string;
  readonly namespace: string;
  readonly serviceAccountName: string;
  readonly command: readonly string[];
  readonly args: readonly string[];
  readonly env: readonly ManifestEnvVar[];
  /** Container path → the hostPath of the volume mounted there (only hostPath volumes). */
  readonly hostMounts: ReadonlyMap<string, string>;
}

export class ManifestError extends Error {
  readonly code = 'STACK_BAD_MANIFEST';
}

type Doc = Record<string, unknown>;

/** Every file of `<root>/manifests/*.yaml` with its documents, in file order. */
async function loadManifestFiles(root: string): Promise<Array<{ path: string; docs: Doc[] }>> {
  const dir = join(root, 'manifests');
  const files = (await readdir(dir)).filter((f) => f.endsWith('.yaml')).sort();
  const out: Array<{ path: string; docs: Doc[] }> = [];
  for (const file of files) {
    const docs: Doc[] = [];
    for (const doc of parseAllDocuments(await readFile(join(dir, file), 'utf8'))) {
      if (doc.errors.length > 0) throw new ManifestError(`${file}: ${doc.errors[0]?.message ?? 'invalid YAML'}`);
      const value: unknown = doc.toJS();
      if (isDoc(value)) docs.push(value);
    }
    out.push({ path: join(dir, file), docs });
  }
  return out;
}

/** Every document of `<root>/manifests/*.yaml`, in file order. */
export async function loadManifests(root: string): Promise<Doc[]> {
  return (await loadManifestFiles(root)).flatMap((f) => f.docs);
}

/** Kinds the real lane does not apply as written: the workloads it runs as processes, and the webhook configurations it points at them (podvirt-api-process.ts). */
const RUN_BY_THE_STACK = ['Deployment', 'DaemonSet', 'ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration', 'APIService'];

/** The files of `<root>/manifests/*.yaml` that hold none of RUN_BY_THE_STACK (what the real lane applies). */
export async function manifestFilesWithoutWorkloads(root: string): Promise<string[]> {
  return (await loadManifestFiles(root)).filter((f) => !f.docs.some((d) => RUN_BY_THE_STACK.includes(String(d['kind'])))).map((f) => f.path);
}

/** The workload `kind`/`name`; it must have exactly one container. */
export function findWorkload(docs: readonly Doc[], kind: string, name: string): ManifestWorkload {
  const doc = docs.find((d) => d['kind'] === kind && field(d, 'metadata', 'name') === name);
  if (doc === undefined) throw new ManifestError(`no ${kind} ${name} in manifests/`);
  const podSpec = field(doc, 'spec', 'template', 'spec');
  const containers = isDoc(podSpec) ? list(podSpec['containers']) : [];
  const [container, ...more] = containers;
  if (!isDoc(podSpec) || container === undefined || more.length > 0) throw new ManifestError(`${kind} ${name}: expected one container`);
  const volumes = new Map<string, string>();
  for (const v of list(podSpec['volumes'])) {
    const hostPath = field(v, 'hostPath', 'path');
    if (typeof hostPath === 'string') volumes.set(String(v['name']), hostPath);
  }
  const hostMounts = new Map<string, string>();
  for (const m of list(container['volumeMounts'])) {
    const hostPath = volumes.get(String(m['name']));
    if (hostPath !== undefined) hostMounts.set(String(m['mountPath']), hostPath);
  }
  return {
    kind,
    name,
    namespace: String(field(doc, 'metadata', 'namespace') ?? 'default'),
    serviceAccountName: String(podSpec['serviceAccountName'] ?? 'default'),
    command: strings(container['command']),
    args: strings(container['args']),
    env: list(container['env']).map((e): ManifestEnvVar => {
      const fieldPath = field(e, 'valueFrom', 'fieldRef', 'fieldPath');
      if (e['valueFrom'] !== undefined && typeof fieldPath !== 'string') {
        throw new ManifestError(`${kind} ${name}: env ${String(e['name'])} uses a source other than fieldRef`);
      }
      return {
        name: String(e['name']),
        ...(typeof e['value'] === 'string' ? { value: e['value'] } : {}),
        ...(typeof fieldPath === 'string' ? { fieldPath } : {}),
      };
    }),
    hostMounts,
  };
}

function isDoc(value: unknown): value is Doc {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function field(doc: unknown, ...path: string[]): unknown {
  let at = doc;
  for (const key of path) at = isDoc(at) ? at[key] : undefined;
  return at;
}

function list(value: unknown): Doc[] {
  return Array.isArray(value) ? value.filter(isDoc) : [];
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.map(String) : [];
}
