/**
 * When a sandbox runs commands as another user than the runtime (a root runtime drops to an
 * unprivileged user so that process limits apply), the workspace must be writable by that user.
 * A root runtime hands ownership of the workspace's entries to the sandbox user for the time of
 * a command and gives it back afterwards; an unprivileged runtime cannot, and opens the
 * permission bits instead.
 */
import type { Stats } from 'node:fs';
import { chmod, lchown, lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fallbackSandboxUser, type SandboxUser } from './sandbox-options.js';

export function runtimeIsRoot(): boolean {
  return process.getuid?.() === 0;
}

export interface WorkspaceAccessOptions {
  /** Entries left as they are: protected paths, which the sandbox user must not own. */
  skip?: (path: string) => boolean;
  /** Filled with the owner each entry had before a root runtime handed it over, by path. */
  originalOwners?: Map<string, OriginalOwner>;
}

export interface OriginalOwner {
  uid: number;
  gid: number;
  /** Tells the entry apart from another one created later under the same name. */
  inode: number;
}

/**
 * Gives `user` write access to every entry of the workspace it does not already own. Entries
 * owned by the user are skipped, so repeating it after each command costs a walk of `lstat`s.
 */
export async function grantWorkspaceAccess(workspace: string, user: SandboxUser, options: WorkspaceAccessOptions = {}): Promise<void> {
  const asRoot = runtimeIsRoot();
  await visitWorkspace(workspace, options.skip, async (path, information) => {
    if (information.uid === user.uid) return;
    if (asRoot) {
      options.originalOwners?.set(path, { uid: information.uid, gid: information.gid, inode: information.ino });
      await lchown(path, user.uid, user.gid).catch(ignoreUnchangeable);
    } else if (!information.isSymbolicLink()) {
      const extra = information.isDirectory() ? 0o777 : 0o666;
      await chmod(path, information.mode | extra).catch(ignoreUnchangeable);
    }
  });
}

/**
 * The reverse of `grantWorkspaceAccess` for a root runtime: every entry the sandbox user owns goes
 * back to the owner it had, and what the command created goes to `owner` (the user the workspace
 * belongs to), so no file of the user's is left owned by the sandbox's user between commands.
 */
export async function returnWorkspaceAccess(
  workspace: string,
  user: SandboxUser,
  owner: SandboxUser,
  options: WorkspaceAccessOptions = {},
): Promise<void> {
  if (!runtimeIsRoot()) return;
  await visitWorkspace(workspace, options.skip, async (path, information) => {
    if (information.uid !== user.uid) return;
    const original = options.originalOwners?.get(path);
    const target = original && original.inode === information.ino ? original : owner;
    await lchown(path, target.uid, target.gid).catch(ignoreUnchangeable);
  });
  options.originalOwners?.clear();
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

/**
 * Calls `visit` for the workspace and every entry below it, without following links. The entries
 * of a folder are handled together, which keeps a large workspace to a fraction of a second.
 */
async function visitWorkspace(
  workspace: string,
  skip: ((path: string) => boolean) | undefined,
  visit: (path: string, information: Stats) => Promise<void>,
): Promise<void> {
  const visitPath = async (path: string): Promise<void> => {
    if (path !== workspace && skip?.(path)) return;
    const information = await lstat(path).catch(() => undefined);
    // Entries can vanish while a command that is still running deletes them.
    if (!information) return;
    await visit(path, information);
    if (!information.isDirectory()) return;
    const names = await readdir(path).catch(() => [] as string[]);
    for (let start = 0; start < names.length; start += folderBatchSize) {
      await Promise.all(names.slice(start, start + folderBatchSize).map((name) => visitPath(join(path, name))));
    }
  };
  await visitPath(workspace);
}

/** Entries of one folder handled at once; bounds open files in a very wide folder. */
const folderBatchSize = 64;

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
