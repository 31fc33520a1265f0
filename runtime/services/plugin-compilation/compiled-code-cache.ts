/**
 * One cache of compiled plugins per user, so that a plugin compiles once, not once per folder it is
 * copied to: an entry is named by the hash of the plugin's text and of the compiler's version and
 * options, never by its path. The cache holds code the runtime will run on the host, so:
 * - it is the folder `compiled-plugins` of the user's cache folder (outside every workspace, and a
 *   protected path of every run, like plugin folders), made with mode 0700;
 * - it is used only when it is a folder, not a link, owned by this user and not writable by group or
 *   others; otherwise plugins are compiled at every run and nothing is read or written;
 * - the folder is opened once and every entry is named through its descriptor
 *   (`/proc/self/fd/<n>/<name>`, opened with O_NOFOLLOW), so a folder renamed or swapped for a link
 *   after the check is never used; where there is no /proc, no cache is used at all;
 * - an entry is used only when it is a regular file with one link, owned by this user, not
 *   writable by group or others, and its first line names its own key and the hash of the rest,
 *   so an entry renamed from another key, or cut short, is compiled again; the text checked is the
 *   text returned, never read a second time;
 * - an entry is written to a temporary file opened with O_EXCL and then linked into place, so no
 *   reader ever sees half an entry and a good entry another run wrote is never replaced;
 * - past `maximumEntries`, the entries written longest ago are removed when one is added: every
 *   edit of a plugin adds one, and each run compares the whole folder with its state at the start.
 */
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, constants, existsSync, fstatSync, linkSync, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { cacheFolder } from '../cache-folder.js';

export interface CompiledCodeCache {
  readonly folder: string;
  /** The compiled code stored under `key`, when a sound entry holds it. */
  read(key: string): string | undefined;
  /** Stores the code under `key`; a cache that cannot be written only costs the next run its speed. */
  write(key: string, code: string): void;
}

/** The folder of compiled plugins in the user's cache folder; undefined for a user with no home. */
export function compiledPluginsFolder(root: string | undefined = cacheFolder()): string | undefined {
  return root === undefined ? undefined : join(root, 'compiled-plugins');
}

/** The key of a text compiled by a compiler: its version and options, then the text. */
export function compiledCodeKey(compilerIdentity: string, source: string): string {
  return createHash('sha256').update(compilerIdentity).update('\0').update(source).digest('hex');
}

export type CacheOpening = { cache: CompiledCodeCache } | { refused: string };

const descriptorFolder = '/proc/self/fd';
const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK } = constants;

/** Opens the cache in `folder`, making it (and its parent) with mode 0700 when missing. */
export function openCompiledCodeCache(folder: string): CacheOpening {
  if (typeof process.getuid !== 'function' || !existsSync(descriptorFolder)) {
    return { refused: 'entries cannot be opened relative to the folder on this system (no /proc)' };
  }
  const user = process.getuid();
  let descriptor: number;
  try {
    mkdirSync(dirname(folder), { recursive: true, mode: 0o700 });
    try {
      mkdirSync(folder, { mode: 0o700 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    descriptor = openSync(folder, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // Linux reports a link refused with O_DIRECTORY | O_NOFOLLOW as "not a directory".
    if (code === 'ELOOP' || code === 'ENOTDIR') return { refused: `${folder} is a symbolic link or not a folder` };
    return { refused: `${folder} cannot be opened: ${(error as Error).message}` };
  }
  const status = fstatSync(descriptor);
  const problem = status.uid !== user ? `${folder} belongs to another user (uid ${status.uid})`
    : (status.mode & 0o022) !== 0 ? `${folder} can be written by group or others (mode ${(status.mode & 0o777).toString(8)})`
    : undefined;
  if (problem) {
    closeSync(descriptor);
    return { refused: problem };
  }
  // Held open for the life of the process: each entry is named through it.
  const held = `${descriptorFolder}/${descriptor}`;
  const entry = (name: string) => `${held}/${name}`;
  const read = (key: string) => readEntry(entry(`${key}.cjs`), key, user);
  return {
    cache: {
      folder,
      read,
      write(key, code) {
        const temporary = entry(`${key}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
        try {
          removeOldest(held);
          const file = openSync(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600);
          try {
            writeFileSync(file, `${header(key, code)}\n${code}`);
          } finally {
            closeSync(file);
          }
          try {
            linkSync(temporary, entry(`${key}.cjs`));
          } catch (error) {
            if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
            // Another run's good entry stays as it is; a bad one is replaced at once.
            if (read(key) === undefined) renameSync(temporary, entry(`${key}.cjs`));
          }
        } catch {
          // A read-only or full disk: the plugin was compiled anyway.
        } finally {
          try {
            unlinkSync(temporary);
          } catch {
            // Already renamed into place, or never made.
          }
        }
      },
    },
  };
}

const maximumEntries = 500;
const keptAfterRemoval = 400;

/** Down to `keptAfterRemoval` entries, the oldest removed, once there are `maximumEntries`. */
function removeOldest(held: string): void {
  const names = readdirSync(held).filter((name) => name.endsWith('.cjs'));
  if (names.length < maximumEntries) return;
  const entry = (name: string) => `${held}/${name}`;
  const written = names.map((name) => ({ name, at: lstatSync(entry(name), { throwIfNoEntry: false })?.mtimeMs ?? 0 }));
  written.sort((first, second) => first.at - second.at);
  for (const { name } of written.slice(0, names.length - keptAfterRemoval)) {
    try {
      unlinkSync(entry(name));
    } catch {
      // Removed by another run meanwhile.
    }
  }
}

/** The first line of an entry: its key and the hash of the code after it. */
function header(key: string, code: string): string {
  return `// manus-runtime compiled plugin ${key} ${createHash('sha256').update(code).digest('hex')}`;
}

function readEntry(path: string, key: string, user: number): string | undefined {
  let descriptor: number;
  try {
    // O_NONBLOCK: a named pipe in an entry's place is refused rather than waited on.
    descriptor = openSync(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    const status = fstatSync(descriptor);
    if (!status.isFile() || status.nlink !== 1 || status.uid !== user || (status.mode & 0o022) !== 0) return undefined;
    const text = readFileSync(descriptor, 'utf8');
    const end = text.indexOf('\n');
    if (end < 0) return undefined;
    const code = text.slice(end + 1);
    return text.slice(0, end) === header(key, code) ? code : undefined;
  } catch {
    return undefined;
  } finally {
    closeSync(descriptor);
  }
}
