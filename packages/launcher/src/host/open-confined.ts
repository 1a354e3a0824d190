import { constants, type Stats } from 'node:fs';
import { lstat, open, readlink, realpath, type FileHandle } from 'node:fs/promises';
import { isAbsolute, normalize, relative, sep } from 'node:path';

/** What the caller accepts at the end of the path. */
export type ConfinedKind = 'file' | 'block' | 'fileOrBlock';

export type ConfinementReason =
  | 'NOT_ABSOLUTE'
  | 'OUTSIDE_ROOT'
  | 'IS_ROOT'
  | 'SYMLINK'
  | 'NOT_FOUND'
  | 'DIR_NOT_FOUND'
  | 'NOT_A_DIRECTORY'
  | 'WRONG_TYPE'
  | 'ACCESS';

/** The path may not be opened; `reason` is stable, the message names the path and why. */
export class ConfinementError extends Error {
  override readonly name = 'ConfinementError';
  readonly code = 'LAUNCHER_ERR_CONFINEMENT';
  readonly reason: ConfinementReason;

  constructor(reason: ConfinementReason, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.reason = reason;
  }
}

export interface OpenConfinedOptions {
  /** Create the file (sparse, this size) when it is missing; never a directory on the way. */
  readonly create?: { readonly sizeBytes: bigint };
  /** Default `file`. */
  readonly accept?: ConfinedKind;
}

/** An open file that is really inside the root. Keep it open as long as anyone uses `procPath`. */
export interface ConfinedFile {
  readonly fd: number;
  /** The file's real path, read back from the open descriptor. */
  readonly realPath: string;
  readonly kind: 'file' | 'block';
  /** A path another process (libvirt, qemu) opens to reach exactly this file: `/proc/<pid>/fd/<fd>`. */
  procPath(pid: number): string;
  close(): Promise<void>;
}

// Node has no openat(2). Opening "<name>" under /proc/self/fd/<dirfd>/ looks the name up in
// the directory that descriptor holds, not by path text, which is openat's semantics: each
// step is taken from an already-checked directory, so swapping a component for a symlink
// after the check cannot redirect the open.
const viaFd = (dir: FileHandle, name: string): string => `/proc/self/fd/${dir.fd}/${name}`;
const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;
// O_NONBLOCK: a FIFO planted at the path must not hang the open; O_NOCTTY: a tty must not become ours.
const FILE_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;
const CREATE_FLAGS = constants.O_RDWR | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
const MAX_SHOWN = 256;

function shown(path: string): string {
  return JSON.stringify(path.length > MAX_SHOWN ? `${path.slice(0, MAX_SHOWN)}…` : path);
}

/**
 * Opens `path`, which must name a file strictly below `root`, walking one component at a time
 * from the root's descriptor and refusing every symbolic link on the way. The root itself is
 * trusted configuration and may be a symlink. Refuses the root itself, anything that is not a
 * regular file (or a block device, per `accept`), and checks the opened descriptor's real path
 * against the root's real path once more before handing it out.
 */
export async function openConfined(root: string, path: string, o: OpenConfinedOptions = {}): Promise<ConfinedFile> {
  if (!isAbsolute(path)) throw new ConfinementError('NOT_ABSOLUTE', `${shown(path)} is not an absolute path`);
  const rel = relative(normalize(root), normalize(path));
  if (rel === '') throw new ConfinementError('IS_ROOT', `${shown(path)} is the directory ${shown(root)} itself, not a disk file`);
  if (rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) {
    throw new ConfinementError('OUTSIDE_ROOT', `${shown(path)} is outside ${shown(root)}`);
  }
  const rootReal = await realpath(root).catch((cause: unknown) => {
    throw new ConfinementError('NOT_FOUND', `the allowed directory ${shown(root)} does not exist`, { cause });
  });
  const parts = rel.split(sep);
  const last = parts.pop() ?? '';
  let dir = await open(rootReal, DIR_FLAGS).catch((cause: unknown) => {
    throw fsError(cause, root, 'dir');
  });
  try {
    for (const part of parts) {
      const next = await openDir(dir, part, path);
      await dir.close();
      dir = next;
    }
    const file = await openLast(dir, last, path, o.create);
    try {
      return await checked(file, rootReal, path, o.accept ?? 'file');
    } catch (err) {
      await file.close();
      throw err;
    }
  } finally {
    await dir.close();
  }
}

async function openDir(dir: FileHandle, name: string, path: string): Promise<FileHandle> {
  try {
    return await open(viaFd(dir, name), DIR_FLAGS);
  } catch (err) {
    // With O_DIRECTORY, Linux reports a symlink as ENOTDIR rather than ELOOP: tell them apart.
    const isLink = (err as NodeJS.ErrnoException).code === 'ENOTDIR' && (await lstat(viaFd(dir, name)).catch(() => undefined))?.isSymbolicLink();
    if (isLink === true) throw new ConfinementError('SYMLINK', `${shown(path)} goes through a symbolic link, which is not allowed here`, { cause: err });
    throw fsError(err, path, 'dir');
  }
}

async function openLast(dir: FileHandle, name: string, path: string, create: OpenConfinedOptions['create']): Promise<FileHandle> {
  try {
    return await open(viaFd(dir, name), FILE_FLAGS);
  } catch (err) {
    if (create === undefined || (err as NodeJS.ErrnoException).code !== 'ENOENT') throw fsError(err, path, 'file');
  }
  const fh = await open(viaFd(dir, name), CREATE_FLAGS, 0o600).catch((cause: unknown) => {
    throw fsError(cause, path, 'file');
  });
  try {
    await fh.truncate(Number(create.sizeBytes));
  } catch (err) {
    await fh.close();
    throw err;
  }
  return fh;
}

async function checked(file: FileHandle, rootReal: string, path: string, accept: ConfinedKind): Promise<ConfinedFile> {
  const st = await file.stat();
  const kind = kindOf(st);
  const ok = kind !== undefined && (accept === 'fileOrBlock' || accept === kind);
  if (!ok) {
    const want = accept === 'fileOrBlock' ? 'a regular file or a block device' : accept === 'file' ? 'a regular file' : 'a block device';
    throw new ConfinementError('WRONG_TYPE', `${shown(path)} is ${describe(st)}, not ${want}`);
  }
  const realPath = await readlink(`/proc/self/fd/${file.fd}`);
  if (!realPath.startsWith(rootReal.endsWith(sep) ? rootReal : `${rootReal}${sep}`)) {
    throw new ConfinementError('OUTSIDE_ROOT', `${shown(path)} resolves outside the allowed directory`);
  }
  return {
    fd: file.fd,
    realPath,
    kind,
    procPath: (pid) => `/proc/${pid}/fd/${file.fd}`,
    close: () => file.close(),
  };
}

function kindOf(st: Stats): 'file' | 'block' | undefined {
  if (st.isFile()) return 'file';
  if (st.isBlockDevice()) return 'block';
  return undefined;
}

function describe(st: Stats): string {
  if (st.isDirectory()) return 'a directory';
  if (st.isFile()) return 'a regular file';
  if (st.isBlockDevice()) return 'a block device';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isFIFO()) return 'a FIFO';
  if (st.isSocket()) return 'a socket';
  return 'not a file';
}

function fsError(err: unknown, path: string, what: 'dir' | 'file'): ConfinementError {
  const code = (err as NodeJS.ErrnoException).code;
  switch (code) {
    case 'ELOOP':
      return new ConfinementError('SYMLINK', `${shown(path)} goes through a symbolic link, which is not allowed here`, { cause: err });
    case 'ENOENT':
      if (what === 'dir') return new ConfinementError('DIR_NOT_FOUND', `a directory on the way to ${shown(path)} does not exist (only the file itself is ever created)`, { cause: err });
      return new ConfinementError('NOT_FOUND', `${shown(path)} does not exist`, { cause: err });
    case 'ENOTDIR':
      return new ConfinementError('NOT_A_DIRECTORY', `a component of ${shown(path)} is not a directory`, { cause: err });
    case 'EISDIR':
      return new ConfinementError('WRONG_TYPE', `${shown(path)} is a directory, not a regular file`, { cause: err });
    case 'EEXIST':
      return new ConfinementError('SYMLINK', `${shown(path)} appeared while it was being created`, { cause: err });
    case 'EACCES':
    case 'EPERM':
      return new ConfinementError('ACCESS', `${shown(path)} may not be opened (${code})`, { cause: err });
    case 'ENXIO':
      return new ConfinementError('WRONG_TYPE', `${shown(path)} is a socket or device with nothing behind it, not a regular file`, { cause: err });
    default:
      return new ConfinementError('ACCESS', `${shown(path)} could not be opened as a ${what === 'dir' ? 'directory' : 'file'}: ${code ?? String(err)}`, { cause: err });
  }
}
