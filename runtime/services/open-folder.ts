/**
 * A folder held open by descriptor, whose entries are named through that descriptor. The runtime
 * works on workspace files outside the sandbox while the agent's processes may rename folders at
 * the same moment, so a path string checked a moment ago can lead elsewhere now. Node has no
 * `openat`, but on Linux `/proc/self/fd/<descriptor>/<name>` is resolved by the kernel relative to
 * the open folder itself, wherever it has been moved; opening it with O_NOFOLLOW refuses a link
 * in place of `name`, and O_DIRECTORY anything but a folder. Without /proc (other systems) an
 * entry is named by the folder's path and links are refused by a `lstat` first, which a
 * concurrent rename can race: that fallback is documented as such.
 */
import { constants, existsSync } from 'node:fs';
import { lstat, mkdir, open, readdir, readlink, rename, rmdir, unlink, type FileHandle } from 'node:fs/promises';
import type { BigIntStats, Dirent, Stats } from 'node:fs';
import { join } from 'node:path';

const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW } = constants;

/** True where an open folder's entries can be named through its descriptor (Linux with /proc). */
export const descriptorNamesAvailable: boolean = process.platform === 'linux' && existsSync('/proc/self/fd');

export class OpenFolder {
  private closed = false;

  private constructor(
    private readonly handle: FileHandle,
    /** The path the folder was reached by; it may have been renamed since. */
    readonly path: string,
  ) {}

  /** Opens the folder at `path` (the workspace root, a path the runtime itself trusts). */
  static async open(path: string): Promise<OpenFolder> {
    return new OpenFolder(await open(path, O_RDONLY | O_DIRECTORY), path);
  }

  /** The descriptor's own name: opening it reaches this very folder. */
  private get self(): string {
    return descriptorNamesAvailable ? `/proc/self/fd/${this.handle.fd}` : this.path;
  }

  /** A path that names `name` inside this very folder; the last component is not followed by callers. */
  entry(name: string): string {
    checkEntryName(name);
    return `${this.self}/${name}`;
  }

  /** Opens the sub-folder `name`; a link in its place fails with ELOOP, a file with ENOTDIR. */
  async openFolder(name: string): Promise<OpenFolder> {
    await this.refuseLinkWithoutDescriptors(name);
    try {
      return new OpenFolder(await open(this.entry(name), O_RDONLY | O_DIRECTORY | O_NOFOLLOW), join(this.path, name));
    } catch (error) {
      // Linux reports a link refused with both flags as "not a directory"; callers need to tell a link.
      if ((error as NodeJS.ErrnoException).code === 'ENOTDIR' && (await this.entryStatus(name).catch(() => undefined))?.isSymbolicLink()) {
        throw Object.assign(new Error(`${name} is a symbolic link`), { code: 'ELOOP' });
      }
      throw error;
    }
  }

  /** Opens the entry `name` with `flags` (O_NOFOLLOW is always added). */
  async openFile(name: string, flags: number, mode?: number): Promise<FileHandle> {
    await this.refuseLinkWithoutDescriptors(name);
    return open(this.entry(name), flags | O_NOFOLLOW, mode);
  }

  /** The entry itself, a link not followed. */
  entryStatus(name: string): Promise<Stats> {
    return lstat(this.entry(name));
  }

  /** As `entryStatus`, with times in nanoseconds. */
  entryStatusExact(name: string): Promise<BigIntStats> {
    return lstat(this.entry(name), { bigint: true });
  }

  readLink(name: string): Promise<string> {
    return readlink(this.entry(name));
  }

  entries(): Promise<Dirent[]> {
    return readdir(this.self, { withFileTypes: true });
  }

  status(): Promise<Stats> {
    return this.handle.stat();
  }

  /** Where the folder is now, as the kernel names it (it follows renames). */
  async currentPath(): Promise<string> {
    return descriptorNamesAvailable ? readlink(this.self) : this.path;
  }

  async makeFolder(name: string, mode = 0o777): Promise<void> {
    await mkdir(this.entry(name), mode);
  }

  /** Removes the entry `name` (a link itself, never its target). */
  async removeFile(name: string): Promise<void> {
    await unlink(this.entry(name));
  }

  async removeFolder(name: string): Promise<void> {
    await rmdir(this.entry(name));
  }

  /** Renames within this folder, so both names are resolved relative to it. */
  async renameEntry(from: string, to: string): Promise<void> {
    await rename(this.entry(from), this.entry(to));
  }

  async changeMode(mode: number): Promise<void> {
    await this.handle.chmod(mode);
  }

  async changeOwner(uid: number, gid: number): Promise<void> {
    await this.handle.chown(uid, gid);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.handle.close();
  }

  /** Without descriptor names, a link is refused by looking first: raceable, and documented so. */
  private async refuseLinkWithoutDescriptors(name: string): Promise<void> {
    if (descriptorNamesAvailable) return;
    const information = await lstat(this.entry(name)).catch(() => undefined);
    if (information?.isSymbolicLink()) throw Object.assign(new Error(`${name} is a symbolic link`), { code: 'ELOOP' });
  }
}

/** One component: never empty, ".", ".." or holding a separator, which would leave the held folder. */
function checkEntryName(name: string): void {
  if (name === '' || name === '.' || name === '..' || name.includes('/') || name.includes('\0')) {
    throw Object.assign(new Error(`"${name}" is not a single file name`), { code: 'EINVAL' });
  }
}
