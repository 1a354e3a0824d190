import { copyFile, mkdir, readdir, readFile, rename } from 'node:fs/promises';
import { join } from 'node:path';

/*
 * The daemon's first API call waits for QEMU capability probing (1.3 s warm disk, ~8 s cold).
 * The probe results are plain XML files that libvirt revalidates itself (binary ctime,
 * libvirt version …) and re-probes when stale, so copying them between instances is safe.
 */

async function xmlFiles(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir)).filter((f) => f.endsWith('.xml'));
  } catch {
    return [];
  }
}

async function sameContent(a: string, b: string): Promise<boolean> {
  try {
    const [x, y] = await Promise.all([readFile(a), readFile(b)]);
    return x.equals(y);
  } catch {
    return false;
  }
}

/** Seeds a new daemon's `/var/cache/libvirt/qemu/capabilities` from the shared cache. */
export async function restoreCapabilities(sharedDir: string, daemonCapsDir: string): Promise<number> {
  const files = await xmlFiles(sharedDir);
  if (files.length === 0) return 0;
  await mkdir(daemonCapsDir, { recursive: true });
  await Promise.all(files.map((f) => copyFile(join(sharedDir, f), join(daemonCapsDir, f))));
  return files.length;
}

/** Copies changed probe results back, atomically: parallel tests share the cache. */
export async function saveCapabilities(daemonCapsDir: string, sharedDir: string): Promise<number> {
  const files = await xmlFiles(daemonCapsDir);
  let saved = 0;
  for (const f of files) {
    if (await sameContent(join(daemonCapsDir, f), join(sharedDir, f))) continue;
    await mkdir(sharedDir, { recursive: true });
    const tmp = join(sharedDir, `.${f}.${String(Math.random()).slice(2)}`);
    await copyFile(join(daemonCapsDir, f), tmp);
    await rename(tmp, join(sharedDir, f));
    saved++;
  }
  return saved;
}
