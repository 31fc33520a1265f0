/**
 * What a copied workspace (a sandbox on another machine) and the host's workspace last agreed on,
 * entry by entry, so each copy moves only what changed and a change made on both sides since is
 * seen as such: the host's side wins, as its file tools wrote it while the command ran.
 */
import type { BigIntStats } from 'node:fs';
import { join, sep } from 'node:path';
import type { ProtectedPathGuard } from '../../contract/protected-path-guard.js';
import { OpenFolder } from '../open-folder.js';
import { workspaceProtectionReason } from '../workspace-paths.js';

export interface SyncedEntry {
  kind: 'file' | 'folder' | 'link';
  /** The entry as the sandbox's archive shows it (size, whole seconds, mode; a link's target). */
  sandbox: string;
  /** The entry as the host shows it (size, nanoseconds, inode, mode; a link's target). */
  host: string;
}

/** Workspace-relative path ("/" separators) to the entry both sides last agreed on. */
export type SyncedState = Map<string, SyncedEntry>;

/** The runtime's own run records: never copied, and the sandbox may not write them. */
export const runsFolderName = '.manus';

export function sandboxFileSignature(size: number, mtime: Date | undefined, mode: number | undefined): string {
  return `file:${size}:${Math.floor((mtime?.getTime() ?? 0) / 1000)}:${(mode ?? 0) & 0o777}`;
}

export function hostSignature(information: BigIntStats, linkTarget?: string): string {
  if (information.isSymbolicLink()) return `link:${linkTarget ?? ''}`;
  if (information.isDirectory()) return 'folder';
  return `file:${information.size}:${information.mtimeNs}:${information.ino}:${Number(information.mode) & 0o777}`;
}

/** Why the sandbox may not write `path` (workspace-relative, "/" separators), as the file tools refuse it. */
export function protectionReason(workspace: string, path: string, protectedPaths: ProtectedPathGuard | undefined): string | undefined {
  const components = path.split('/');
  return workspaceProtectionReason(components.join(sep)) ?? protectedPaths?.protectionOf(join(workspace, ...components))?.reason;
}

/**
 * Opens the workspace, then the folders of `components` one below the other, none of them
 * followed if it is a link. Missing folders are made when `make` is given (it is called with each
 * one's path first, and may refuse by throwing); otherwise a missing folder gives undefined. The
 * caller closes the folder returned.
 */
export async function openFolderPath(
  workspace: string,
  components: readonly string[],
  make?: (path: string) => Promise<void>,
): Promise<OpenFolder | undefined> {
  let folder = await OpenFolder.open(workspace);
  try {
    for (let index = 0; index < components.length; index += 1) {
      const name = components[index];
      let next = await folder.openFolder(name).catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return undefined;
        throw error;
      });
      if (!next) {
        if (!make) {
          await folder.close();
          return undefined;
        }
        await make(components.slice(0, index + 1).join('/'));
        await folder.makeFolder(name, 0o755).catch((error: NodeJS.ErrnoException) => {
          if (error.code !== 'EEXIST') throw error;
        });
        next = await folder.openFolder(name);
      }
      await folder.close();
      folder = next;
    }
    return folder;
  } catch (error) {
    await folder.close();
    throw error;
  }
}

/** The host's signature of `path` now, or undefined when it is absent or lies past a link. */
export async function currentHostSignature(workspace: string, path: string): Promise<string | undefined> {
  const components = path.split('/');
  const name = components.pop() as string;
  const folder = await openFolderPath(workspace, components).catch(() => undefined);
  if (!folder) return undefined;
  try {
    const information = await folder.entryStatusExact(name).catch(() => undefined);
    if (!information) return undefined;
    return hostSignature(information, information.isSymbolicLink() ? await folder.readLink(name).catch(() => '') : undefined);
  } finally {
    await folder.close();
  }
}
