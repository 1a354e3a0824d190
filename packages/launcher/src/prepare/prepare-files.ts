import { randomBytes } from 'node:crypto';
import { chmod, mkdir, mkdtemp, open, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { DataSource, PrepareStep } from '../convert/prepare-step.js';
import { LauncherError } from '../errors.js';
import { fileExists } from './container-disk-layout.js';
import { runTool } from './run-tool.js';

export interface PrepareOptions {
  /**
   * Where secret volumes are mounted, as KubeVirt lays them out: the user-data secret of
   * cloud-init volume `<vol>` as files `userdata`/`userData` in `<dir>/<vol>/`, its network-data
   * secret's as `networkdata`/`networkData` in the same directory (KubeVirt's subPath mounts).
   */
  readonly secretsDir: string;
  readonly qemuImg?: string;
  readonly genisoimage?: string;
  readonly signal?: AbortSignal;
}

/**
 * Creates the files the converter asked for. Idempotent: existing files are kept (a re-sync must
 * not wipe a disk). Each file is made under a temporary name and renamed into place only when
 * complete, so a step that fails (a disk larger than the filesystem allows, a tool that dies)
 * leaves nothing a later pass could take for a finished file; the error fails the Sync.
 */
export async function prepareFiles(steps: readonly PrepareStep[], o: PrepareOptions): Promise<void> {
  for (const step of steps) {
    if (await fileExists(step.path)) continue;
    // Owner-only: cloud-init data may hold passwords and keys; disks hold the guest's data.
    await mkdir(dirname(step.path), { recursive: true, mode: 0o700 });
    const temp = join(dirname(step.path), `.${basename(step.path)}.partial-${randomBytes(4).toString('hex')}`);
    try {
      await makeFile(step, temp, o);
      await chmod(temp, 0o600);
      await rename(temp, step.path);
    } catch (err) {
      await rm(temp, { force: true });
      throw err;
    }
  }
}

async function makeFile(step: PrepareStep, path: string, o: PrepareOptions): Promise<void> {
  switch (step.kind) {
    case 'overlay':
      await runTool(o.qemuImg ?? 'qemu-img', ['create', '-q', '-f', 'qcow2', '-b', step.backingFile, '-F', step.backingFormat, path], o.signal);
      break;
    case 'emptyDisk':
      await sparseFile(path, step);
      break;
    case 'cloudInitNoCloud':
      await cloudInitIso(step, path, o);
      break;
  }
}

async function sparseFile(path: string, step: Extract<PrepareStep, { kind: 'emptyDisk' }>): Promise<void> {
  const fh = await open(path, 'wx', 0o600);
  try {
    // Beyond 2^53 bytes a Number loses precision; no filesystem takes such a file anyway.
    if (step.sizeBytes > BigInt(Number.MAX_SAFE_INTEGER)) throw tooLarge(step);
    await fh.truncate(Number(step.sizeBytes));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EFBIG' || err instanceof RangeError) throw tooLarge(step);
    throw err;
  } finally {
    await fh.close();
  }
}

// A volume that cannot be created: retrying cannot cure it, so it is LAUNCHER_ERR_VOLUME and the VMI fails.
function tooLarge(step: Extract<PrepareStep, { kind: 'emptyDisk' }>): LauncherError {
  return new LauncherError('LAUNCHER_ERR_VOLUME', `${step.field ?? 'emptyDisk.capacity'}: ${step.sizeBytes} bytes is larger than the pod's filesystem can hold`);
}

async function readSource(src: DataSource | undefined, dir: string, o: PrepareOptions): Promise<string | undefined> {
  if (src === undefined) return undefined;
  if ('inline' in src) return src.inline;
  if ('base64' in src) return Buffer.from(src.base64, 'base64').toString('utf8');
  for (const key of src.keys) {
    const text = await readFile(join(o.secretsDir, dir, key), 'utf8').catch(() => undefined);
    if (text !== undefined) return text;
  }
  throw new LauncherError('LAUNCHER_ERR_VOLUME', `secret ${src.secret} has no key ${src.keys.join(' or ')} (looked in ${join(o.secretsDir, dir)})`);
}

/** The NoCloud seed: user-data, meta-data and network-config on an ISO labelled `cidata`. */
async function cloudInitIso(step: Extract<PrepareStep, { kind: 'cloudInitNoCloud' }>, output: string, o: PrepareOptions): Promise<void> {
  const userData = await readSource(step.userData, step.volume, o);
  const networkData = await readSource(step.networkData, step.volume, o);
  const work = await mkdtemp(join(dirname(step.path), '.seed-'));
  try {
    const files = ['user-data', 'meta-data'];
    await writeFile(join(work, 'user-data'), userData ?? '');
    await writeFile(join(work, 'meta-data'), `instance-id: ${step.instanceId}\nlocal-hostname: ${step.hostname}\n`);
    if (networkData !== undefined) {
      await writeFile(join(work, 'network-config'), networkData);
      files.push('network-config');
    }
    await runTool(o.genisoimage ?? 'genisoimage', ['-quiet', '-output', output, '-volid', 'cidata', '-joliet', '-rock', ...files.map((f) => join(work, f))], o.signal);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
