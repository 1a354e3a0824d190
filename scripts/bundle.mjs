// Bundles the two processes every VMI's pod starts — podvirt-launcher-monitor (PID 1) and
// podvirt-launcher — each into one ES module file under the package's dist/bundle/, from the
// JavaScript tsc just wrote. A VMI's start waits for both to load: resolving and reading some
// hundred files of grpc-js, pino, yaml and our packages cost ~0.5 s on this 2-core machine, one
// file ~0.1 s. The package bins load these bundles, so the testbed and the images run them.
// Run by `pnpm run build` after `tsc -b`.
import { build } from 'esbuild';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

// CommonJS dependencies (grpc-js, pino) call require(); an ES module has none of its own.
const banner = "import { createRequire as __podvirtCreateRequire } from 'node:module'; const require = __podvirtCreateRequire(import.meta.url);";

// dist/bundle/ sits at the same depth as dist/src/, so paths the code resolves against its own
// location (the monitor's native addon, the launcher's package.json) stay valid.
const bundles = [
  { pkg: 'packages/launcher', out: 'podvirt-launcher.mjs' },
  { pkg: 'packages/launcher-monitor', out: 'podvirt-launcher-monitor.mjs' },
];

await Promise.all(bundles.map(({ pkg, out }) => build({
  entryPoints: [join(root, pkg, 'dist/src/main.js')],
  outfile: join(root, pkg, 'dist/bundle', out),
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
