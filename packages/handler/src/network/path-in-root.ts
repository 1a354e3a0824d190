// A path inside another process's filesystem, reached through /proc/<pid>/root. The kernel
// resolves an absolute symbolic link met on the way against the *reader's* root, not the
// process's (on Debian /var/run is a link to /run, so /proc/<pid>/root/var/run/x would land
// in the handler's own /run). Each component is therefore walked here, and links are
// followed relative to the process's root.

import { lstat, readlink } from 'node:fs/promises';
import { join } from 'node:path';
import { HandlerError } from '../handler-error.js';

// As the kernel's own limit on links followed in one lookup.
const MAX_LINKS = 40;

/**
 * `path` as the process whose root is `root` sees it, as a path the caller can open. A component
 * that does not exist ends the walk (the rest is appended as is): the caller's open then fails.
 */
export async function pathInRoot(root: string, path: string): Promise<string> {
  let pending = path.split('/').filter((c) => c !== '' && c !== '.');
  const resolved: string[] = [];
  let links = 0;
  while (pending.length > 0) {
    const [name, ...rest] = pending as [string, ...string[]];
    pending = rest;
    if (name === '..') {
      resolved.pop();
      continue;
    }
    const here = join(root, ...resolved, name);
    const st = await lstat(here).catch(() => undefined);
    if (st === undefined) return join(root, ...resolved, name, ...pending);
    if (!st.isSymbolicLink()) {
      resolved.push(name);
      continue;
    }
    if (++links > MAX_LINKS) throw new HandlerError('HANDLER_ERR_POD_NETWORK', `too many symbolic links under ${root} resolving ${path}`);
    const target = await readlink(here);
    const parts = target.split('/').filter((c) => c !== '' && c !== '.');
    if (target.startsWith('/')) resolved.length = 0;
    pending = [...parts, ...pending];
  }
  return join(root, ...resolved);
}
