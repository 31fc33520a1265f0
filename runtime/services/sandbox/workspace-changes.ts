/**
 * Which files a command created, changed or deleted in the workspace, found by comparing two
 * listings with size, modification time (nanoseconds) and inode. Like `listWorkspaceFiles`, it
 * skips .git folders and the runtime's .manus folder and does not follow symbolic links.
 */
import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';

export interface WorkspaceSnapshot {
  /** Workspace-relative path ("/" separators) to a signature of the file's state. */
  files: Map<string, string>;
  /** False when the listing stopped at `maximumEntries`; changes past that point go unseen. */
  complete: boolean;
}

export interface WorkspaceChanges {
  created: string[];
  modified: string[];
  deleted: string[];
}

/** Enough for any hand-made project; a workspace holding a virtual environment stops here. */
export const defaultMaximumEntries = 50_000;

export async function snapshotWorkspace(
  workspace: string,
  { maximumEntries = defaultMaximumEntries }: { maximumEntries?: number } = {},
): Promise<WorkspaceSnapshot> {
  const files = new Map<string, string>();
  const pending = [''];
  let entries = 0;
  while (pending.length > 0) {
    const folder = pending.pop() as string;
    const listing = await readdir(join(workspace, folder), { withFileTypes: true }).catch(() => []);
    for (const entry of listing) {
      entries += 1;
      if (entries > maximumEntries) return { files, complete: false };
      const relativePath = folder === '' ? entry.name : `${folder}/${entry.name}`;
      if (entry.isDirectory()) {
        if (entry.name !== '.git' && relativePath !== '.manus') pending.push(relativePath);
      } else if (entry.isFile()) {
        const information = await lstat(join(workspace, relativePath), { bigint: true }).catch(() => undefined);
        if (information) files.set(relativePath, `${information.size}:${information.mtimeNs}:${information.ino}`);
      }
    }
  }
  return { files, complete: true };
}

export function compareSnapshots(before: WorkspaceSnapshot, after: WorkspaceSnapshot): WorkspaceChanges {
  const changes: WorkspaceChanges = { created: [], modified: [], deleted: [] };
  for (const [path, signature] of after.files) {
    const earlier = before.files.get(path);
    // A file missing from an incomplete earlier listing may have existed past its end.
    if (earlier === undefined) {
      if (before.complete) changes.created.push(path);
    }
    else if (earlier !== signature) changes.modified.push(path);
  }
  if (after.complete) {
    for (const path of before.files.keys()) if (!after.files.has(path)) changes.deleted.push(path);
  }
  for (const list of Object.values(changes)) list.sort();
  return changes;
}
