import { readFile, rename, writeFile } from 'node:fs/promises';
import type { ContainerStatePaths } from './container-state-paths.js';

// Debian's libvirtd resolves its built-in qemu account before reading qemu.conf, so the
// account must exist even with user = "root"; a launcher image ships it in /etc/passwd.
const QEMU_USER = 'libvirt-qemu:x:64055:64055:Libvirt Qemu:/var/lib/libvirt:/usr/sbin/nologin';
const QEMU_GROUP = 'libvirt-qemu:x:64055:';

function withEntry(content: string, entry: string): string {
  const name = entry.slice(0, entry.indexOf(':') + 1);
  const lines = content.split('\n').filter((l) => l !== '');
  if (!lines.some((l) => l.startsWith(name))) lines.push(entry);
  return `${lines.join('\n')}\n`;
}

async function writeAtomically(path: string, content: string): Promise<void> {
  // Containers of one pod may share a state dir and start together.
  const tmp = `${path}.${String(Math.random()).slice(2)}.tmp`;
  await writeFile(tmp, content);
  await rename(tmp, path);
}

/** The container's /etc/passwd and /etc/group: the host's, plus the libvirt-qemu account. */
export async function writeContainerAccounts(paths: ContainerStatePaths): Promise<void> {
  const [passwd, group] = await Promise.all([readFile('/etc/passwd', 'utf8'), readFile('/etc/group', 'utf8')]);
  await Promise.all([
    writeAtomically(paths.passwd, withEntry(passwd, QEMU_USER)),
    writeAtomically(paths.group, withEntry(group, QEMU_GROUP)),
  ]);
}
