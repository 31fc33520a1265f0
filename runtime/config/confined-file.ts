/**
 * Reads a file that must lie inside a folder, such as a prompt file inside its recipe's folder.
 * The folder is opened once; each name below it is then opened relative to the descriptor of the
 * one before (through /proc/self/fd, Linux's openat for Node), never following a symbolic link. So
 * no link, and no folder swapped for a link while the file is opened, can lead outside.
 */
import { closeSync, constants, existsSync, fstatSync, lstatSync, openSync, readFileSync } from 'node:fs';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';

export type ConfinedFileProblem = 'outside' | 'link' | 'missing' | 'not a file' | 'unreadable';

export class ConfinedFileError extends Error {
  constructor(readonly problem: ConfinedFileProblem, message: string) {
    super(message);
    this.name = 'ConfinedFileError';
  }
}

const descriptorFolder = '/proc/self/fd';

/** The text of `path` (relative to `root`, or absolute), when it lies inside `root` with no link on the way. */
export function readConfinedFile(root: string, path: string): string {
  const inside = relative(root, resolve(root, path));
  if (inside === '' || inside === '..' || inside.startsWith(`..${sep}`) || isAbsolute(inside)) {
    throw new ConfinedFileError('outside', `${resolve(root, path)} is outside ${root}`);
  }
  const names = inside.split(sep);
  return existsSync(descriptorFolder) ? readThroughDescriptors(root, names) : readAfterCheckingEachName(root, names);
}

function readThroughDescriptors(root: string, names: string[]): string {
  let descriptor: number;
  try {
    descriptor = openSync(root, constants.O_RDONLY | constants.O_DIRECTORY);
  } catch (error) {
    throw explained(error, root, []);
  }
  try {
    for (const [index, name] of names.entries()) {
      const last = index === names.length - 1;
      // A FIFO would block a plain open; a file opened without waiting is then checked to be a file.
      const flags = constants.O_RDONLY | constants.O_NOFOLLOW | (last ? constants.O_NONBLOCK : constants.O_DIRECTORY);
      let next: number;
      try {
        next = openSync(`${descriptorFolder}/${descriptor}/${name}`, flags);
      } catch (error) {
        throw explained(error, root, names.slice(0, index + 1));
      }
      closeSync(descriptor);
      descriptor = next;
    }
    return readOpenFile(descriptor, join(root, ...names));
  } finally {
    closeSync(descriptor);
  }
}

/**
 * Without /proc (not Linux): each name is checked not to be a link, then the file is opened without
 * following one and must be the file checked. A folder swapped between the check and the open is
 * not caught here, which is why this way is kept for systems without /proc.
 */
function readAfterCheckingEachName(root: string, names: string[]): string {
  for (let count = 1; count <= names.length; count++) {
    const path = join(root, ...names.slice(0, count));
    let isLink: boolean;
    try {
      isLink = lstatSync(path).isSymbolicLink();
    } catch (error) {
      throw explained(error, root, names.slice(0, count));
    }
    if (isLink) throw linkError(root, names.slice(0, count));
  }
  const path = join(root, ...names);
  const checked = lstatSync(path);
  let descriptor: number;
  try {
    descriptor = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    throw explained(error, root, names);
  }
  try {
    const opened = fstatSync(descriptor);
    if (opened.ino !== checked.ino || opened.dev !== checked.dev) throw new ConfinedFileError('link', `${path} changed while it was opened`);
    return readOpenFile(descriptor, path);
  } finally {
    closeSync(descriptor);
  }
}

function readOpenFile(descriptor: number, path: string): string {
  if (!fstatSync(descriptor).isFile()) throw new ConfinedFileError('not a file', `${path} is not a regular file`);
  return readFileSync(descriptor, 'utf8');
}

function explained(error: unknown, root: string, names: string[]): ConfinedFileError {
  const code = (error as NodeJS.ErrnoException).code;
  const path = join(root, ...names);
  if (code === 'ENOENT') return new ConfinedFileError('missing', `no such file (looked for ${path})`);
  // O_NOFOLLOW refuses a link with ELOOP; a link to a folder opened as one may give ENOTDIR.
  if (code === 'ELOOP' || isLink(path)) return linkError(root, names);
  if (code === 'ENOTDIR') return new ConfinedFileError('missing', `${path} is not a folder`);
  return new ConfinedFileError('unreadable', (error as Error).message);
}

function linkError(root: string, names: string[]): ConfinedFileError {
  return new ConfinedFileError('link', `${join(root, ...names)} is a symbolic link, and links are not followed, so nothing outside ${root} is read`);
}

function isLink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}
