// Bundles the processes every VMI's pod starts — podvirt-launcher-monitor (PID 1),
// podvirt-launcher and podvirt-tail (the console log container) — each into one ES module file
// under the package's dist/bundle/, from the JavaScript tsc just wrote. A VMI's start waits for
// the monitor and the launcher to load: resolving and reading some
// hundred files of grpc-js, pino, yaml and our packages cost ~0.5 s on this 2-core machine, one
// file ~0.1 s. The package bins load these bundles, so the testbed and the images run them.
// Run by `pnpm run build` after `tsc -b`.
import { rm } from 'node:fs/promises';
import { build } from 'esbuild';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

// CommonJS dependencies (grpc-js, pino) call require(); an ES module has none of its own.
const banner = "import { createRequire as __podvirtCreateRequire } from 'node:module'; const require = __podvirtCreateRequire(import.meta.url);";

// dist/bundle/ sits at the same depth as dist/src/, so paths the code resolves against its own
// location (the monitor's native addon, the launcher's package.json) stay valid.
// The launcher's main.ts starts the libvirt daemon before it imports the rest, so its bundle is
// split: the entry holds what starting the daemon needs, a chunk the rest.
const bundles = [
  { pkg: 'packages/launcher', name: 'podvirt-launcher', entry: 'dist/src/main.js', splitting: true },
  // The launcher image's guest-console-log container.
  { pkg: 'packages/launcher', name: 'podvirt-tail', entry: 'dist/src/console-log/tail-main.js', splitting: false },
  { pkg: 'packages/launcher-monitor', name: 'podvirt-launcher-monitor', entry: 'dist/src/main.js', splitting: false },
];

// Chunk names carry a content hash: start from an empty directory, so no stale chunk is left.
await Promise.all([...new Set(bundles.map(({ pkg }) => pkg))].map((pkg) => rm(join(root, pkg, 'dist/bundle'), { recursive: true, force: true })));
await Promise.all(bundles.map(({ pkg, name, entry, splitting }) => build({
  entryPoints: { [name]: join(root, pkg, entry) },
  outdir: join(root, pkg, 'dist/bundle'),
  outExtension: { '.js': '.mjs' },
  // Beside the entry, at the same depth as dist/src/ (see above).
  chunkNames: '[name]-[hash]',
  splitting,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  banner: { js: banner },
  minifySyntax: true,
  minifyWhitespace: true,
  sourcemap: 'linked',
  legalComments: 'linked',
  logLevel: 'warning',
})));
