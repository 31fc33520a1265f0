/**
 * The host folders a bubblewrap session shows read-only besides the workspace (an MCP server's
 * launch folder and the packages above it), and how the sandbox's user reaches them.
 *
 * A root runtime's commands run as an unprivileged user, to whom the host's permission bits
 * apply: a launch folder under root's home (0700) or made by `mktemp -d` (0700) would be shown
 * but not entered. Changing the host's bits would open the folder to that user everywhere, and
 * for as long as they stay changed. Instead, inside the sandbox only: the highest folder above
 * it that the user cannot pass through is covered by an empty tmpfs, in which the way down is
 * made of fresh folders; and a folder the user may not open is itself a fresh folder into which
 * its entries are bound one by one, so each keeps its own bits (a private file there stays
 * private). An entry that is a symbolic link is made again as one, never bound: bwrap, as root,
 * would follow it to wherever it points.
 */
import type { Dirent } from 'node:fs';
import { readdir, readlink, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { SandboxUser } from './sandbox-options.js';
import { userCanTraverse } from './workspace-access.js';

export const temporaryFolder = '/tmp';

export interface FolderEntry {
  name: string;
  /** Set for a symbolic link: what it points to, made again as a link. */
  linkTarget?: string;
}

export interface ReadOnlyFolder {
  path: string;
  /** Set when the sandbox's user may not open the folder: it is shown as a fresh folder holding these. */
  entries?: FolderEntry[];
}

export interface ReadOnlyFolderView {
  folders: ReadOnlyFolder[];
  /** Folders above them that the sandbox's user cannot pass through, covered by an empty tmpfs. */
  covers: string[];
}

/**
 * What `folders` need to be seen by `user` (undefined when commands run as the runtime's own user,
 * who sees what it can read). Only `opened` folders are reached and opened past the host's bits.
 */
export async function readOnlyFolderView(folders: readonly string[], opened: readonly string[], user: SandboxUser | undefined): Promise<ReadOnlyFolderView> {
  const view: ReadOnlyFolderView = { folders: [], covers: [] };
  for (const path of folders) {
    if (!user || !opened.includes(path)) {
      view.folders.push({ path });
      continue;
    }
    const cover = await highestClosedFolder(path, user);
    if (cover) view.covers.push(cover);
    const information = await stat(path);
    view.folders.push(userCanOpen(user, information) ? { path } : { path, entries: await entriesOf(path) });
  }
  return view;
}

/**
 * The highest folder above `path` that `user` cannot pass through, if any. Folders under /tmp
 * need no cover: the sandbox's own tmpfs replaces them.
 */
export async function highestClosedFolder(path: string, user: SandboxUser): Promise<string | undefined> {
  for (const folder of ancestorsOf(path)) {
    if (folder === temporaryFolder || isWithin(temporaryFolder, folder)) return undefined;
    if (!userCanTraverse(user, await stat(folder))) return folder;
  }
  return undefined;
}

/** Every folder above `path`, outermost first, without the root. */
export function ancestorsOf(path: string): string[] {
  const ancestors: string[] = [];
  for (let folder = dirname(path); folder !== dirname(folder); folder = dirname(folder)) ancestors.unshift(folder);
  return ancestors;
}

export function isWithin(folder: string, path: string): boolean {
  return path.startsWith(`${folder}/`);
}

/** Listing a folder and entering it: read and search permission (the user's groups are cleared). */
function userCanOpen(user: SandboxUser, folder: { uid: number; gid: number; mode: number }): boolean {
  const bits = folder.uid === user.uid ? (folder.mode >> 6) & 0o7 : folder.gid === user.gid ? (folder.mode >> 3) & 0o7 : folder.mode & 0o7;
  return (bits & 0o5) === 0o5;
}

async function entriesOf(folder: string): Promise<FolderEntry[]> {
  const entries: Dirent[] = await readdir(folder, { withFileTypes: true });
  return Promise.all(entries.map(async (entry) => (
    entry.isSymbolicLink() ? { name: entry.name, linkTarget: await readlink(join(folder, entry.name)) } : { name: entry.name }
  )));
}
