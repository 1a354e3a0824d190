import { readdir, readlink } from 'node:fs/promises';

/** `mnt:[<inode>]` of a process, or undefined once it is gone (or a zombie, which has none). */
export async function mountNamespaceOf(pid: number): Promise<string | undefined> {
  try {
    return await readlink(`/proc/${pid}/ns/mnt`);
  } catch {
    return undefined;
  }
}

/**
 * Every live process whose mount namespace is `ns`. The caller must hold the namespace open
 * (an fd on `/proc/<pid>/ns/mnt`): a freed namespace's inode number is handed out again.
 */
export async function processesInMountNamespace(ns: string): Promise<number[]> {
  const pids = (await readdir('/proc')).filter((name) => /^\d+$/.test(name)).map(Number);
  const namespaces = await Promise.all(pids.map(mountNamespaceOf));
  return pids.filter((_, i) => namespaces[i] === ns);
}
