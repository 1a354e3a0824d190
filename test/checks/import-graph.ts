// The import graph of the packages' sources, type-only imports included (a circle of types is
// still a circle to a reader, and the compiled JavaScript no longer shows it), and its cycles.

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

/** File (repository-relative) → the files it imports by relative path. */
export type ImportGraph = ReadonlyMap<string, readonly string[]>;

// `import … from './x.js'`, `import type …`, `export … from`, across lines; relative paths only.
const IMPORT = /(?:^|\n)[ \t]*(?:import|export)\s[^;]*?\sfrom\s+'(\.{1,2}\/[^']+)'/g;

function* sources(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* sources(path);
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) yield path;
  }
}

/** The `src/` folders whose imports are checked: every package's, and proto's (its generated code aside). */
export function sourceRoots(root: string): string[] {
  const packages = readdirSync(join(root, 'packages')).map((p) => join('packages', p, 'src'));
  return [...packages, join('proto', 'src')].filter((dir) => existsSync(join(root, dir)));
}

export function importGraph(root: string, srcDirs: readonly string[], skip: (file: string) => boolean = () => false): ImportGraph {
  const graph = new Map<string, string[]>();
  for (const dir of srcDirs) {
    for (const abs of sources(join(root, dir))) {
      const file = relative(root, abs);
      if (skip(file)) continue;
      const deps: string[] = [];
      for (const match of readFileSync(abs, 'utf8').matchAll(IMPORT)) {
        const target = resolve(dirname(abs), (match[1] ?? '').replace(/\.js$/, '.ts'));
        if (existsSync(target)) deps.push(relative(root, target));
      }
      graph.set(file, deps);
    }
  }
  return graph;
}

/** The strongly connected parts with more than one node, or a node importing itself (Tarjan's algorithm). */
export function cycles(graph: ImportGraph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let next = 0;
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) ?? 0, low.get(w) ?? 0));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v) ?? 0, index.get(w) ?? 0));
      }
    }
    if (low.get(v) !== index.get(v)) return;
    const part: string[] = [];
    let w: string | undefined;
    do {
      w = stack.pop();
      if (w === undefined) break;
      onStack.delete(w);
      part.push(w);
    } while (w !== v);
    if (part.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(part.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

/**
 * The graph between the folders of each package: a file in `<src>/<folder>/…` stands for its
 * folder, a file directly in `<src>/` for itself (an entry point or a package-wide piece such as
 * its error class, which every folder may use and which may use every folder).
 */
export function folderGraph(graph: ImportGraph, srcDirs: readonly string[]): ImportGraph {
  const unit = (file: string): string => {
    const src = srcDirs.find((dir) => file.startsWith(dir + sep));
    if (src === undefined) return file;
    const rest = file.slice(src.length + 1).split(sep);
    return rest.length > 1 ? join(src, rest[0] ?? '') + sep : file;
  };
  const folders = new Map<string, Set<string>>();
  for (const [file, deps] of graph) {
    const from = unit(file);
    const edges = folders.get(from) ?? new Set<string>();
    folders.set(from, edges);
    for (const dep of deps) if (unit(dep) !== from) edges.add(unit(dep));
  }
  return new Map([...folders].map(([k, v]) => [k, [...v]]));
}
