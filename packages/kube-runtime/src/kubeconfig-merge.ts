// Several kubeconfig files ($KUBECONFIG=a:b:c) merged as kubectl merges them: the first file that
// sets current-context wins, and for clusters, users and contexts the first entry of a name wins
// (a later file cannot override it). File references are resolved against the directory of the
// file that holds them before merging, so each keeps its meaning.

import { isAbsolute, resolve } from 'node:path';
import { KubeClientError } from './kube-client-error.js';

type Entry = Record<string, unknown>;

export interface KubeconfigDocument {
  /** The parsed file. */
  readonly doc: unknown;
  /** Its directory. */
  readonly baseDir: string;
  /** For messages. */
  readonly path: string;
}

const FILE_FIELDS: Readonly<Record<string, readonly string[]>> = {
  clusters: ['certificate-authority'],
  users: ['client-certificate', 'client-key', 'tokenFile'],
};
const NAMED_LISTS = [['clusters', 'cluster'], ['users', 'user'], ['contexts', 'context']] as const;

export function mergeKubeconfigs(files: readonly KubeconfigDocument[]): Entry {
  const merged: Entry = {};
  const lists: Record<string, Entry[]> = { clusters: [], users: [], contexts: [] };
  for (const { doc, baseDir, path } of files) {
    if (doc === null || doc === undefined) continue;
    if (!isEntry(doc)) throw new KubeClientError('KUBE_ERR_CONFIG', `${path}: kubeconfig is not a mapping`);
    const context = doc['current-context'];
    if ((merged['current-context'] ?? '') === '' && typeof context === 'string' && context !== '') merged['current-context'] = context;
    for (const [list, inner] of NAMED_LISTS) {
      const target = lists[list] ?? [];
      for (const entry of Array.isArray(doc[list]) ? (doc[list] as unknown[]) : []) {
        if (!isEntry(entry) || target.some((e) => e['name'] === entry['name'])) continue;
        target.push({ ...entry, [inner]: absolutePaths(entry[inner], FILE_FIELDS[list] ?? [], baseDir) });
      }
    }
  }
  return { ...merged, ...lists };
}

function absolutePaths(value: unknown, fields: readonly string[], baseDir: string): unknown {
  if (!isEntry(value)) return value;
  const out: Entry = { ...value };
  for (const field of fields) {
    const path = out[field];
    if (typeof path === 'string' && path !== '' && !isAbsolute(path)) out[field] = resolve(baseDir, path);
  }
  // An exec plugin's relative command is relative to its kubeconfig too (as client-go resolves it).
  const exec = out['exec'];
  if (isEntry(exec) && typeof exec['command'] === 'string' && (exec['command'].startsWith('./') || exec['command'].startsWith('../'))) {
    out['exec'] = { ...exec, command: resolve(baseDir, exec['command']) };
  }
  return out;
}

function isEntry(value: unknown): value is Entry {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
