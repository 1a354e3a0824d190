// Walks directories and reports what is wider than it should be: a unix socket anyone but its
// owner can reach, or a file that holds guest output, secrets or VM state readable by others.
// Generic on purpose: any new socket or log a component adds is covered without naming it.
import { lstat, readdir } from 'node:fs/promises';
import { join, relative } from 'node:path';

export interface ModeFinding {
  readonly path: string;
  readonly kind: 'socket' | 'file';
  readonly mode: string;
}

/** Files whose content is private to the VM's owner: guest console and logs, cloud-init data, keys, libvirt's domain XML, ghost records. */
export function isSecretBearing(path: string): boolean {
  const name = path.split('/').at(-1) ?? '';
  return /log/i.test(name) || /\.(iso|key|pem|xml)$/i.test(name) || /user-?data|network-?data|secret/i.test(name) || path.includes('/ghost-records/');
}

/** Every socket with group or other bits, and every secret-bearing regular file with group or other bits (symlinks are not followed). */
export async function widerThanOwner(roots: readonly string[], secret = isSecretBearing): Promise<ModeFinding[]> {
  const found: ModeFinding[] = [];
  const visit = async (root: string, dir: string): Promise<void> => {
    for (const name of await readdir(dir).catch(() => [] as string[])) {
      const path = join(dir, name);
      const st = await lstat(path).catch(() => undefined);
      if (st === undefined) continue;
      if (st.isDirectory()) await visit(root, path);
      const wide = (st.mode & 0o077) !== 0;
      const mode = (st.mode & 0o7777).toString(8).padStart(4, '0');
      if (st.isSocket() && wide) found.push({ path: relative(root, path) || path, kind: 'socket', mode });
      else if (st.isFile() && wide && secret(path)) found.push({ path: relative(root, path) || path, kind: 'file', mode });
    }
  };
  for (const root of roots) await visit(root, root);
  return found;
}

/** Every socket and file below the roots with its mode, for a failure message. */
export async function listModes(roots: readonly string[]): Promise<string[]> {
  const lines: string[] = [];
  const visit = async (dir: string): Promise<void> => {
    for (const name of await readdir(dir).catch(() => [] as string[])) {
      const path = join(dir, name);
      const st = await lstat(path).catch(() => undefined);
      if (st === undefined) continue;
      lines.push(`${(st.mode & 0o7777).toString(8).padStart(4, '0')} ${st.isSocket() ? 's' : st.isDirectory() ? 'd' : st.isSymbolicLink() ? 'l' : '-'} ${path}`);
      if (st.isDirectory()) await visit(path);
    }
  };
  for (const root of roots) await visit(root);
  return lines;
}
