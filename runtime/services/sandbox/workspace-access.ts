/**
 * When a sandbox runs commands as another user than the runtime (a root runtime drops to an
 * unprivileged user so that process limits apply), the workspace must be writable by that user.
 * A root runtime hands ownership of the workspace's entries to the sandbox user for the time of
 * a command and gives it back afterwards; an unprivileged runtime cannot, and opens the
 * permission bits instead.
 *
 * Giving back takes write permission for group and others off every entry, not only the owner:
 * processes the agent leaves running keep running as the sandbox user between commands, and a
 * folder it made world-writable (or gave itself through an ACL, which the group bits mask) would
 * let them rename entries while the runtime's tools work on them. Both walks open each folder
 * relative to the one above it and change entries through what they opened, since those same
 * processes may swap a folder for a link while the walk runs: a path string would carry a chown
 * to a file outside the workspace.
 */
import type { Stats } from 'node:fs';
import { constants } from 'node:fs';
import { lchown, lstat } from 'node:fs/promises';
import { join } from 'node:path';
import { OpenFolder } from '../open-folder.js';
import { fallbackSandboxUser, type SandboxUser } from './sandbox-options.js';

export function runtimeIsRoot(): boolean {
  return process.getuid?.() === 0;
}

export interface WorkspaceAccessOptions {
  /** Entries left as they are: protected paths, which the sandbox user must not own. */
  skip?: (path: string) => boolean;
  /**
   * Entries whose permission bits are compared after each command (a protected folder with parts
   * left writable, such as a repository's): given back their owner, never other bits, which the
   * comparison would take for a change. A sandbox mounts what they protect read-only.
   */
  keepMode?: (path: string) => boolean;
  /** Filled with the owner each entry had before a root runtime handed it over, by path. */
  originalOwners?: Map<string, OriginalOwner>;
}

export interface OriginalOwner {
  uid: number;
  gid: number;
  /** Tells the entry apart from another one created later under the same name. */
  inode: number;
  /** Its permission bits before the command, given back without write for group and others. */
  mode: number;
}

/**
 * Gives `user` write access to every entry of the workspace it does not already own. Entries
 * owned by the user are skipped, so repeating it after each command costs a walk of `lstat`s. A
 * file with several hard links is not handed over: its other names may lie outside the workspace.
 */
export async function grantWorkspaceAccess(workspace: string, user: SandboxUser, options: WorkspaceAccessOptions = {}): Promise<void> {
  const asRoot = runtimeIsRoot();
  await visitWorkspace(workspace, options.skip, async (entry) => {
    const { information } = entry;
    if (information.uid === user.uid) return;
    if (asRoot) {
      if (information.isFile() && information.nlink > 1) return;
      options.originalOwners?.set(entry.path, { uid: information.uid, gid: information.gid, inode: information.ino, mode: information.mode });
      await entry.changeOwner(user.uid, user.gid).catch(ignoreUnchangeable);
    } else if (!information.isSymbolicLink()) {
      const extra = information.isDirectory() ? 0o777 : 0o666;
      await entry.changeMode(information.mode | extra).catch(ignoreUnchangeable);
    }
  });
}

/**
 * The reverse of `grantWorkspaceAccess` for a root runtime: every entry the sandbox user owns goes
 * back to the owner it had, and what the command created goes to `owner` (the user the workspace
 * belongs to), so no file of the user's is left owned by the sandbox's user between commands; and
 * none is left writable to it through group or other permissions (see the top of this file).
 */
export async function returnWorkspaceAccess(
  workspace: string,
  user: SandboxUser,
  owner: SandboxUser,
  options: WorkspaceAccessOptions = {},
): Promise<void> {
  if (!runtimeIsRoot()) return;
  await visitWorkspace(workspace, options.skip, async (entry) => {
    const { information } = entry;
    if (information.uid !== user.uid) return;
    const original = options.originalOwners?.get(entry.path);
    const kept = original && original.inode === information.ino ? original : undefined;
    const target = kept ?? owner;
    await entry.changeOwner(target.uid, target.gid).catch(ignoreUnchangeable);
    if (information.isSymbolicLink() || options.keepMode?.(entry.path)) return;
    // A chown only clears bits, and only bits `lockedMode` clears too: no need to look again.
    const wanted = lockedMode(kept?.mode ?? information.mode, information.isDirectory());
    if ((information.mode & 0o7777) !== wanted) await entry.changeMode(wanted).catch(ignoreUnchangeable);
  });
  options.originalOwners?.clear();
}

/** Permission bits without write for group and others, and without set-user or set-group on files. */
function lockedMode(mode: number, folder: boolean): number {
  return mode & (folder ? 0o3777 : 0o777) & ~0o022;
}

/**
 * Who gets what a sandboxed command created: the workspace folder's owner, or the runtime's user
 * when the folder belongs to `nobody` (left so by an earlier sandbox that did not give it back).
 */
export async function workspaceOwner(workspace: string): Promise<SandboxUser> {
  const information = await lstat(workspace);
  if (information.uid !== fallbackSandboxUser.uid) return { uid: information.uid, gid: information.gid };
  return { uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 };
}

/** One entry of the workspace as a walk reached it, changed through what the walk holds open. */
interface WorkspaceEntry {
  /** Absolute path it was reached by, for `skip` and the original owners. */
  path: string;
  information: Stats;
  changeOwner(uid: number, gid: number): Promise<void>;
  changeMode(mode: number): Promise<void>;
}

/**
 * Calls `visit` for the workspace and every entry below it, a folder before what it holds, without
 * following links: each folder is opened relative to the one above it and entries are named
 * through it. Files of a folder are handled together, which keeps a large workspace to a fraction
 * of a second; sub-folders one after another, so open folders stay as many as the depth.
 */
async function visitWorkspace(
  workspace: string,
  skip: ((path: string) => boolean) | undefined,
  visit: (entry: WorkspaceEntry) => Promise<void>,
): Promise<void> {
  const visitFolder = async (folder: OpenFolder, path: string): Promise<void> => {
    await visit({
      path,
      information: await folder.status(),
      changeOwner: (uid, gid) => folder.changeOwner(uid, gid),
      changeMode: (mode) => folder.changeMode(mode),
    });
    const names = (await folder.entries().catch(() => [])).map((entry) => entry.name);
    const subfolders: string[] = [];
    const visitEntry = async (name: string): Promise<void> => {
      const entryPath = join(path, name);
      if (skip?.(entryPath)) return;
      // Entries can vanish while a command that is still running deletes them.
      const information = await folder.entryStatus(name).catch(() => undefined);
      if (!information) return;
      if (information.isDirectory()) {
        subfolders.push(name);
        return;
      }
      await visit({
        path: entryPath,
        information,
        changeOwner: (uid, gid) => lchown(folder.entry(name), uid, gid),
        changeMode: (mode) => changeFileMode(folder, name, mode),
      });
    };
    for (let start = 0; start < names.length; start += folderBatchSize) {
      await Promise.all(names.slice(start, start + folderBatchSize).map(visitEntry));
    }
    const visitSubfolder = async (name: string): Promise<void> => {
      // A folder swapped for a link since it was looked at is not opened, so not followed.
      const subfolder = await folder.openFolder(name).catch(() => undefined);
      if (!subfolder) return;
      try {
        await visitFolder(subfolder, join(path, name));
      } finally {
        await subfolder.close();
      }
    };
    // Sub-folders go in parallel while a slot is free and in turn otherwise, which bounds the
    // folders held open without ever waiting for a slot (a parent holding one would deadlock).
    const parallel: Array<Promise<void>> = [];
    for (const name of subfolders) {
      if (freeFolderSlots > 0) {
        freeFolderSlots -= 1;
        parallel.push(visitSubfolder(name).finally(() => (freeFolderSlots += 1)));
      } else {
        await visitSubfolder(name);
      }
    }
    await Promise.all(parallel);
  };
  let freeFolderSlots = parallelFolders;
  const root = await OpenFolder.open(workspace);
  try {
    await visitFolder(root, workspace);
  } finally {
    await root.close();
  }
}

/** Linux has no lchmod: the file is opened without following a link, and changed through that. */
async function changeFileMode(folder: OpenFolder, name: string, mode: number): Promise<void> {
  const handle = await folder.openFile(name, constants.O_RDONLY | constants.O_NONBLOCK).catch((error: NodeJS.ErrnoException) => {
    // A link or a socket in its place: nothing to change.
    if (error.code === 'ELOOP' || error.code === 'ENXIO') return undefined;
    throw error;
  });
  if (!handle) return;
  try {
    await handle.chmod(mode);
  } finally {
    await handle.close();
  }
}

/** Entries of one folder handled at once; bounds open files in a very wide folder. */
const folderBatchSize = 64;
/** Folders walked at once, each holding its descriptor open. */
const parallelFolders = 32;

/** True when `user` may pass through a folder with these owner and mode bits (groups are cleared). */
export function userCanTraverse(user: SandboxUser, folder: { uid: number; gid: number; mode: number }): boolean {
  if (folder.uid === user.uid) return (folder.mode & 0o100) !== 0;
  if (folder.gid === user.gid) return (folder.mode & 0o010) !== 0;
  return (folder.mode & 0o001) !== 0;
}

/** A vanished entry needs no access; one the runtime may not change is left for the command to report. */
function ignoreUnchangeable(error: NodeJS.ErrnoException): void {
  if (error.code !== 'ENOENT' && error.code !== 'EPERM') throw error;
}
