import { mkdir, mkdtemp, open, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { DataSource, PrepareStep } from '../convert/prepare-step.js';
import { LauncherError } from '../errors.js';
import { fileExists } from './container-disk-layout.js';
import { runTool } from './run-tool.js';

export interface PrepareOptions {
  /**
   * Where secret volumes are mounted, as KubeVirt lays them out: the user-data secret of
   * cloud-init volume `<vol>` at `<dir>/<vol>/`, its network-data secret at `<dir>/<vol>-ndata/`.
   */
  readonly secretsDir: string;
  readonly qemuImg?: string;
  readonly genisoimage?: string;
  readonly signal?: AbortSignal;
}

/** Creates the files the converter asked for. Idempotent: existing files are kept (a re-sync must not wipe a disk). */
export async function prepareFiles(steps: readonly PrepareStep[], o: PrepareOptions): Promise<void> {
  for (const step of steps) {
    if (await fileExists(step.path)) continue;
    await mkdir(dirname(step.path), { recursive: true });
    switch (step.kind) {
      case 'overlay':
        await runTool(o.qemuImg ?? 'qemu-img', ['create', '-q', '-f', 'qcow2', '-b', step.backingFile, '-F', step.backingFormat, step.path], o.signal);
        break;
      case 'emptyDisk':
        await sparseFile(step.path, step.sizeBytes);
        break;
      case 'cloudInitNoCloud':
        await cloudInitIso(step, o);
        break;
    }
  }
}

async function sparseFile(path: string, size: bigint): Promise<void> {
  const fh = await open(path, 'wx');
  try {
    await fh.truncate(Number(size));
  } finally {
    await fh.close();
  }
}

async function readSource(src: DataSource | undefined, dir: string, o: PrepareOptions): Promise<string | undefined> {
  if (src === undefined) return undefined;
  if ('inline' in src) return src.inline;
  if ('base64' in src) return Buffer.from(src.base64, 'base64').toString('utf8');
  for (const key of src.keys) {
    const text = await readFile(join(o.secretsDir, dir, key), 'utf8').catch(() => undefined);
    if (text !== undefined) return text;
  }
  throw new LauncherError('LAUNCHER_ERR_PREPARE', `secret ${src.secret} is not mounted at ${join(o.secretsDir, dir)} (keys ${src.keys.join(', ')})`);
}

/** The NoCloud seed: user-data, meta-data and network-config on an ISO labelled `cidata`. */
async function cloudInitIso(step: Extract<PrepareStep, { kind: 'cloudInitNoCloud' }>, o: PrepareOptions): Promise<void> {
  const userData = await readSource(step.userData, step.volume, o);
  const networkData = await readSource(step.networkData, `${step.volume}-ndata`, o);
  const work = await mkdtemp(join(dirname(step.path), '.seed-'));
  try {
    const files = ['user-data', 'meta-data'];
    await writeFile(join(work, 'user-data'), userData ?? '');
    await writeFile(join(work, 'meta-data'), `instance-id: ${step.instanceId}\nlocal-hostname: ${step.hostname}\n`);
    if (networkData !== undefined) {
      await writeFile(join(work, 'network-config'), networkData);
      files.push('network-config');
    }
    await runTool(o.genisoimage ?? 'genisoimage', ['-quiet', '-output', step.path, '-volid', 'cidata', '-joliet', '-rock', ...files.map((f) => join(work, f))], o.signal);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
