// The Dockerfiles, checked without a container engine (there is none here): every file they
// COPY exists after scripts/setup, each image carries every workspace package its programs
// import (or, for a bundled program, its bundle), the commands the manifests and the controller's rendered launcher pod run are the
// files the images provide, and the test guest image's entrypoint keeps the testbed's contract.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { describe, test } from 'node:test';
import { promisify } from 'node:util';
import { controllerVersion, defaultLauncherImage, LAUNCHER_IMAGE_REPOSITORY, LAUNCHER_MONITOR_COMMAND, renderLauncherPod } from '@podvirt/controller';
import type { VirtualMachineInstance } from '@podvirt/api';
import { containerArgv, defaultImageTable, guestImage, imageMapFrom, launcherDaemon } from '../testbed/index.js';
import { readDockerfile, type Dockerfile } from './ship-dockerfile.js';
import { allManifests, at, container, find, ROOT } from './ship-manifests-helpers.js';

const run = promisify(execFile);
const IMAGES = join(ROOT, 'images');
const OPT = '/opt/podvirt/';

interface WorkspacePackage {
  readonly dir: string;
  readonly workspaceDeps: readonly string[];
  readonly hasDeps: boolean;
}

async function workspacePackages(): Promise<Map<string, WorkspacePackage>> {
  const dirs = ['proto', ...(await readdir(join(ROOT, 'packages'))).map((d) => `packages/${d}`)];
  const byName = new Map<string, WorkspacePackage>();
  for (const dir of dirs) {
    const pkg = JSON.parse(await readFile(join(ROOT, dir, 'package.json'), 'utf8')) as { name: string; dependencies?: Record<string, string> };
    const deps = Object.entries(pkg.dependencies ?? {});
    byName.set(pkg.name, { dir, workspaceDeps: deps.filter(([, v]) => v.startsWith('workspace:')).map(([k]) => k), hasDeps: deps.length > 0 });
  }
  return byName;
}

/** The package dirs a program in `dir` loads: itself and its workspace dependencies, transitively. */
function closure(packages: Map<string, WorkspacePackage>, dir: string): Set<string> {
  const start = [...packages.values()].find((p) => p.dir === dir);
  assert.ok(start !== undefined, `${dir} is a workspace package`);
  const seen = new Set<string>();
  const visit = (p: WorkspacePackage): void => {
    if (seen.has(p.dir)) return;
    seen.add(p.dir);
    for (const dep of p.workspaceDeps) {
      const next = packages.get(dep);
      assert.ok(next !== undefined, `workspace dependency ${dep}`);
      visit(next);
    }
  };
  visit(start);
  return seen;
}

/** Every COPY from the build context lands at the same relative path under /opt/podvirt. */
function copiedPaths(file: Dockerfile): Set<string> {
  const copied = new Set<string>();
  for (const c of file.copies.filter((c) => c.from === undefined)) {
    for (const source of c.sources) copied.add(source);
  }
  return copied;
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(() => true, () => false);
}

describe('container images', () => {
  test('every image is Debian bookworm based', async () => {
    for (const name of ['podvirt', 'launcher', 'test-guest']) {
      const file = await readDockerfile(join(IMAGES, name, 'Dockerfile'));
      assert.ok(file.from.length > 0 && file.from.every((f) => /bookworm/.test(f)), `${name}: ${file.from.join(', ')}`);
    }
  });

  test('every file the podvirt and launcher images COPY exists after the build, at the same relative path', async () => {
    for (const name of ['podvirt', 'launcher']) {
      const file = await readDockerfile(join(IMAGES, name, 'Dockerfile'));
      assert.ok(file.copies.length > 0);
      for (const c of file.copies) {
        if (name === 'launcher' && c.from === 'virtqemud') {
          // tools/build-virtqemud's build, at the directory it was built for (scripts/images passes both).
          const built = launcherDaemon(ROOT, {});
          assert.ok(built.kind === 'virtqemud');
          for (const source of c.sources) {
            assert.ok(await exists(join(dirname(dirname(built.binary)), source)), `launcher: COPY --from=virtqemud ${source} exists in the build`);
            assert.equal(c.dest, `\${VIRTQEMUD_DIR}/${source.endsWith('/') ? source : ''}`, `launcher: ${source} at the build's own directory`);
          }
          continue;
        }
        assert.equal(c.from, undefined, `${name}: copies only from the repository`);
        for (const source of c.sources) {
          assert.ok(await exists(join(ROOT, source)), `${name}: COPY ${source} exists (run scripts/setup)`);
          const expected = source.endsWith('/') ? source : `${dirname(source)}/`.replace(/^\.\//, './');
          assert.ok(c.dest === expected || (c.dest === './' && !source.includes('/')), `${name}: COPY ${source} → ${c.dest}`);
        }
      }
    }
  });

  test('each image holds every workspace package its programs import, with their dependency links', async () => {
    const packages = await workspacePackages();
    for (const name of ['podvirt', 'launcher']) {
      const file = await readDockerfile(join(IMAGES, name, 'Dockerfile'));
      const copied = copiedPaths(file);
      let unbundled = 0;
      for (const [bin, target] of file.links) {
        assert.ok(target.startsWith(OPT), `${bin} → ${target}`);
        const script = target.slice(OPT.length);
        assert.ok(await exists(join(ROOT, script)), `${bin}: ${script} exists`);
        const pkgDir = dirname(dirname(script));
        assert.ok(copied.has(`${pkgDir}/bin/`), `${name}: ${pkgDir}/bin/ for ${bin}`);
        // A bin that loads its bundle (scripts/bundle.mjs) needs that file and nothing of the workspace.
        const bundle = /from '\.\.\/(dist\/bundle\/)[^']+'|import '\.\.\/(dist\/bundle\/)[^']+'/.exec(await readFile(join(ROOT, script), 'utf8'));
        if (bundle !== null) {
          assert.ok(copied.has(`${pkgDir}/dist/bundle/`) && copied.has(`${pkgDir}/package.json`), `${name}: ${bin} needs ${pkgDir}/dist/bundle/ and package.json`);
          continue;
        }
        unbundled++;
        assert.ok(copied.has('node_modules/'), `${name}: the root package store for ${bin}`);
        for (const dir of closure(packages, pkgDir)) {
          const pkg = [...packages.values()].find((p) => p.dir === dir);
          for (const needed of ['package.json', 'dist/src/', ...(pkg?.hasDeps === true ? ['node_modules/'] : [])]) {
            assert.ok(copied.has(`${dir}/${needed}`), `${name}: ${bin} needs ${dir}/${needed}`);
          }
        }
      }
      // The launcher image holds bundles only; the podvirt image runs the workspace as built.
      assert.equal(unbundled > 0, name === 'podvirt', `${name}: programs run from the package store`);
    }
  });

  test('the podvirt image provides the commands the handler DaemonSet and the controller and podvirt-api Deployments run, at the manifests\' version', async () => {
    const file = await readDockerfile(join(IMAGES, 'podvirt', 'Dockerfile'));
    const manifests = await allManifests();
    const version = controllerVersion();
    for (const [kind, name] of [['DaemonSet', 'podvirt-handler'], ['Deployment', 'podvirt-controller'], ['Deployment', 'podvirt-api']] as const) {
      const c = container(find(manifests, kind, name));
      const [command] = at(c, 'command') as string[];
      assert.ok(file.links.has(command ?? ''), `${name} runs ${String(command)}, which the image links`);
      assert.equal(at(c, 'image'), `podvirt/podvirt:${version}`);
    }
    assert.ok(file.links.has('/usr/bin/podvirtctl'), 'podvirtctl for kubectl exec');
  });

  test('the launcher image: the monitor is the ENTRYPOINT the rendered pod runs, the launcher beside it, qemu and libvirt installed', async () => {
    const file = await readDockerfile(join(IMAGES, 'launcher', 'Dockerfile'));
    assert.deepEqual(file.entrypoint, [LAUNCHER_MONITOR_COMMAND]);
    assert.ok(file.links.has(LAUNCHER_MONITOR_COMMAND));
    assert.ok(file.links.has('/usr/bin/podvirt-launcher'));
    assert.ok(file.links.has('/usr/bin/podvirt-tail'), 'the guest-console-log container');
    assert.equal(file.env.get('PODVIRT_LAUNCHER_BIN'), '/usr/bin/podvirt-launcher');
    assert.ok(copiedPaths(file).has('packages/launcher-monitor/build/Release/podvirt_monitor.node'), 'the monitor\'s native addon');
    for (const p of ['qemu-system-x86', 'libvirt-daemon', 'libvirt-daemon-driver-qemu', 'genisoimage', 'qemu-utils']) {
      assert.match(file.runText, new RegExp(`\\s${p}(\\s|$)`), `apt package ${p}`);
    }
    assert.match(file.runText, /useradd .*libvirt-qemu/);
    // The launcher runs the image's virtqemud, with the capabilities cache probed in the image; libvirtd is not asked for.
    assert.deepEqual(['sbin/', 'lib/', 'libexec/', 'share/', 'VERSION'].filter((s) => !file.copies.some((c) => c.from === 'virtqemud' && c.sources.includes(s))), []);
    assert.equal(file.env.get('PODVIRT_VIRTQEMUD'), '${VIRTQEMUD_DIR}/sbin/virtqemud');
    assert.equal(file.env.get('PODVIRT_LIBVIRT_CAPS_CACHE'), '${VIRTQEMUD_DIR}/caps');
    assert.match(file.runText, /tools\/virtqemud-caps "\$\{VIRTQEMUD_DIR\}\/sbin\/virtqemud" "\$\{VIRTQEMUD_DIR\}\/caps"/);
    assert.equal(file.env.get('PODVIRT_LIBVIRT_DAEMON'), undefined);

    const vmi = (await allManifests()).find((m) => at(m.doc, 'metadata', 'name') === 'testvm')?.doc as unknown as VirtualMachineInstance;
    const pod = renderLauncherPod({ ...vmi, metadata: { ...vmi.metadata, uid: '00000000-0000-4000-8000-000000000001' } }, {
      image: defaultLauncherImage(),
      allowEmulation: false,
      random: () => 0,
    });
    const compute = pod.spec?.containers.find((c) => c.name === 'compute');
    assert.equal(compute?.image, `${LAUNCHER_IMAGE_REPOSITORY}:${controllerVersion()}`);
    assert.equal(compute?.command?.[0], file.entrypoint?.[0], 'the pod runs the image\'s entrypoint');
    const images = imageMapFrom(defaultImageTable({ repoRoot: ROOT, node: process.execPath }));
    assert.deepEqual(images(compute?.image ?? '')?.files?.[LAUNCHER_MONITOR_COMMAND]?.slice(-1), [join(ROOT, 'packages/launcher-monitor/bin/podvirt-launcher-monitor.js')]);
    const sidecars = (pod.spec?.initContainers ?? []).filter((c) => c.restartPolicy === 'Always');
    assert.deepEqual(sidecars.map((c) => [c.name, c.image, c.command?.[0]]), [['guest-console-log', compute?.image, '/usr/bin/podvirt-tail']],
      'the console log sidecar runs the launcher image\'s podvirt-tail');
    for (const init of (pod.spec?.initContainers ?? []).filter((c) => c.restartPolicy !== 'Always')) {
      assert.equal(init.image, 'podvirt/test-guest:latest');
      assert.equal(init.command, undefined, 'the guest image runs its own entrypoint');
      assert.equal(init.args?.length, 1, 'with the slot directory as its only argument');
    }
  });

  test('the test guest image: its files are the built guest, its entrypoint fills a slot exactly as the testbed\'s image does', async (t) => {
    const file = await readDockerfile(join(IMAGES, 'test-guest', 'Dockerfile'));
    const guest = guestImage();
    const guestDir = dirname(guest.kernel);
    const [fromGuest] = file.copies.filter((c) => c.from === 'guest');
    assert.deepEqual(fromGuest?.sources, ['vmlinuz', 'initrd.img', 'data.ext4']);
    for (const source of fromGuest?.sources ?? []) assert.ok(await exists(join(guestDir, source)), `${source} in the guest build`);
    const entry = file.copies.find((c) => c.dest === file.entrypoint?.[0]);
    assert.ok(entry !== undefined, 'the entrypoint is a copied script');
    const script = join(IMAGES, 'test-guest', entry.sources[0] ?? '');

    const dir = await mkdtemp(join(tmpdir(), 'podvirt-guest-image-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
    await run(script, [join(dir, 'image')], { env: { ...process.env, PODVIRT_GUEST_DIR: guestDir } });
    const testbed = imageMapFrom(defaultImageTable({ repoRoot: ROOT, node: process.execPath }))('podvirt/test-guest:latest');
    assert.ok(testbed !== undefined);
    const [cmd = '', ...args] = containerArgv(testbed, undefined, [join(dir, 'testbed')]);
    await run(cmd, args, { env: { ...process.env, ...testbed.env } });
    assert.deepEqual(await tree(join(dir, 'image')), await tree(join(dir, 'testbed')));
    assert.deepEqual(Object.keys(await tree(join(dir, 'image'))).sort(), ['boot/initrd.img', 'boot/vmlinuz', 'disk.img']);
  });
});

/** Relative path → sha256 of every file below `dir`. */
async function tree(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    out[relative(dir, path)] = createHash('sha256').update(await readFile(path)).digest('hex');
  }
  return out;
}
