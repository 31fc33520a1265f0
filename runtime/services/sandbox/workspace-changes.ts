/**
 * Which files a command created, changed or deleted in the workspace, found by comparing two
 * listings with size, modification time (nanoseconds) and inode. Like `listWorkspaceFiles`, it
 * skips .git folders and the runtime's .manus folder and does not follow symbolic links.
 */
import { OpenFolder } from '../open-folder.js';

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
  let entries = 0;
  // Each folder is opened through the one above it, so a folder swapped for a link to another
  // place is not listed: the names and sizes of files outside never reach the model.
  const visit = async (folder: OpenFolder, path: string): Promise<boolean> => {
    for (const entry of await folder.entries().catch(() => [])) {
      entries += 1;
      if (entries > maximumEntries) return false;
      const relativePath = path === '' ? entry.name : `${path}/${entry.name}`;
      if (entry.isDirectory()) {
        if (entry.name === '.git' || relativePath === '.manus') continue;
        const subfolder = await folder.openFolder(entry.name).catch(() => undefined);
        if (!subfolder) continue;
        try {
          if (!(await visit(subfolder, relativePath))) return false;
        } finally {
          await subfolder.close();
        }
      } else if (entry.isFile()) {
        const information = await folder.entryStatusExact(entry.name).catch(() => undefined);
        if (information?.isFile()) files.set(relativePath, `${information.size}:${information.mtimeNs}:${information.ino}`);
      }
    }
    return true;
  };
  const root = await OpenFolder.open(workspace).catch(() => undefined);
  if (!root) return { files, complete: true };
  try {
    return { files, complete: await visit(root, '') };
  } finally {
    await root.close();
  }
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
