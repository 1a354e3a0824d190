// Reading podvirt's install manifests and Dockerfiles the way the ship-* suites check them.
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { repoRoot } from '../testbed/guest/repo-root.js';

export const ROOT = repoRoot(import.meta.url);

export type Doc = Record<string, unknown>;

export interface ManifestDoc {
  /** Relative to the repository root. */
  readonly file: string;
  readonly doc: Doc;
}

/** Every YAML document under `manifests/` (recursively), as `kubectl apply -R` reads them. */
export async function allManifests(dir = join(ROOT, 'manifests')): Promise<ManifestDoc[]> {
  const out: ManifestDoc[] = [];
  for (const entry of (await readdir(dir, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name))) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await allManifests(path)));
    else if (entry.name.endsWith('.yaml')) {
      for (const d of parseAllDocuments(await readFile(path, 'utf8'))) {
        const doc: unknown = d.toJS();
        if (isDoc(doc)) out.push({ file: relative(ROOT, path), doc });
      }
    }
  }
  return out;
}

export function find(docs: readonly ManifestDoc[], kind: string, name: string): Doc {
  const hit = docs.find((d) => d.doc['kind'] === kind && at(d.doc, 'metadata', 'name') === name);
  if (hit === undefined) throw new Error(`no ${kind} ${name} in manifests/`);
  return hit.doc;
}

export function isDoc(value: unknown): value is Doc {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The value at a path of keys and array indexes, undefined where it breaks off. */
export function at(value: unknown, ...path: Array<string | number>): unknown {
  let v = value;
  for (const key of path) {
    if (typeof key === 'number') v = Array.isArray(v) ? v[key] : undefined;
    else v = isDoc(v) ? v[key] : undefined;
  }
  return v;
}

export function docs(value: unknown): Doc[] {
  return Array.isArray(value) ? value.filter(isDoc) : [];
}

/** The single container of a workload's pod template. */
export function container(workload: Doc): Doc {
  const [c] = docs(at(workload, 'spec', 'template', 'spec', 'containers'));
  if (c === undefined) throw new Error('workload without a container');
  return c;
}
