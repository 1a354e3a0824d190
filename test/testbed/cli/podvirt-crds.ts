// The CustomResourceDefinitions podvirt installs (manifests/crds), which every testbed API
// server serves: VMIs, VMI migrations and VirtualMachines.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'yaml';
import type { JsonObject } from '../apiserver/json.js';
import { repoRoot } from '../guest/repo-root.js';

const CRD_FILES = ['virtualmachineinstances.yaml', 'virtualmachineinstancemigrations.yaml', 'virtualmachines.yaml'] as const;

/** Absolute paths of podvirt's CRD manifests. */
export function podvirtCrdFiles(): string[] {
  return CRD_FILES.map((f) => join(repoRoot(import.meta.url), 'manifests/crds', f));
}

export async function readPodvirtCrds(): Promise<JsonObject[]> {
  return Promise.all(podvirtCrdFiles().map(async (f) => parse(await readFile(f, 'utf8')) as JsonObject));
}
