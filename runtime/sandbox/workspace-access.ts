/**
 * When a sandbox runs commands as another user than the runtime (a root runtime drops to an
 * unprivileged user so that process limits apply), the workspace must be writable by that user.
 * A root runtime hands ownership of the workspace's entries to the sandbox user; an
 * unprivileged runtime cannot, and opens the permission bits instead.
 */
import { chmod, lchown, lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { SandboxUser } from './sandbox-options.js';

export function runtimeIsRoot(): boolean {
  return process.getuid?.() === 0;
}

/**
 * Gives `user` write access to every entry of the workspace it does not already own. Entries
 * owned by the user are skipped, so repeating it after each command costs a walk of `lstat`s.
 */
export async function grantWorkspaceAccess(workspace: string, user: SandboxUser): Promise<void> {
  const asRoot = runtimeIsRoot();
  const pending = [workspace];
  while (pending.length > 0) {
    const path = pending.pop() as string;
    const information = await lstat(path).catch(() => undefined);
    // Entries can vanish while a command that is still running deletes them.
    if (!information) continue;
    if (information.uid !== user.uid) {
      if (asRoot) await lchown(path, user.uid, user.gid).catch(ignoreUnchangeable);
      else if (!information.isSymbolicLink()) {
        const extra = information.isDirectory() ? 0o777 : 0o666;
        await chmod(path, information.mode | extra).catch(ignoreUnchangeable);
      }
    }
    if (information.isDirectory()) {
      const names = await readdir(path).catch(() => [] as string[]);
      for (const name of names) pending.push(join(path, name));
    }
  }
}

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
