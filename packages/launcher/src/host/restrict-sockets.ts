import { chmod, lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';

const MAX_DEPTH = 6;

/**
 * Makes every unix socket below `roots` owner-only (0600) and returns the ones it changed.
 * libvirt starts qemu with umask 002, so the sockets qemu binds (monitor, guest agent, serial
 * console) come out group-writable; whoever shares the group could drive the VM. Symlinks are
 * not followed, and a file that vanishes meanwhile is skipped.
 */
export async function restrictSockets(roots: readonly string[]): Promise<string[]> {
  const changed: string[] = [];
  const visit = async (dir: string, depth: number): Promise<void> => {
    const names = await readdir(dir).catch(() => [] as string[]);
    for (const name of names) {
      const path = join(dir, name);
      const st = await lstat(path).catch(() => undefined);
      if (st === undefined) continue;
      if (st.isDirectory() && depth < MAX_DEPTH) await visit(path, depth + 1);
      else if (st.isSocket() && (st.mode & 0o077) !== 0) {
        await chmod(path, 0o600).then(() => changed.push(path), () => undefined);
      }
    }
  };
  for (const root of roots) await visit(root, 0);
  return changed;
}
