/**
 * Finds what changed in the host's workspace since the state both sides last agreed on, and packs
 * it into tar archives for a sandbox on another machine. Folders are walked as the file tools walk
 * them (each opened relative to the one above, links not followed), and links are sent as links.
 * The runs folder is left out. Protected paths go apart, to be owned by root there without write
 * bits: the sandbox's user cannot change them, as a read-only mount keeps a local sandbox from it.
 */
import { constants, type BigIntStats } from 'node:fs';
import type { Headers, Pack } from 'tar-stream';
import type { ProtectedPathGuard } from '../../contract/protected-path-guard.js';
import { OpenFolder } from '../open-folder.js';
import {
  hostSignature,
  openFolderPath,
  protectionReason,
  runsFolderName,
  sandboxFileSignature,
  type SyncedEntry,
  type SyncedState,
} from './workspace-sync-state.js';

const { O_RDONLY, O_NONBLOCK } = constants;

export interface CopyInSettings {
  /** The host's workspace (its real path). */
  workspace: string;
  state: SyncedState;
  protectedPaths?: ProtectedPathGuard;
}

/** One entry to send; a file's content is read when the archive is written. */
export interface PlannedEntry {
  path: string;
  kind: 'file' | 'folder' | 'link';
  mode: number;
  mtime: Date;
  linkTarget?: string;
}

export interface CopyInPlan {
  /** Entries the sandbox's user will own. */
  owned: PlannedEntry[];
  /** Protected entries, which root owns there, without write bits. */
  protected: PlannedEntry[];
  /** Paths the host no longer holds. */
  removed: string[];
  /** Records the plan in the state once it has been carried out. */
  commit(): void;
}

/** Compares the host's workspace with the state and lists what to send and remove. */
export async function planCopyIn(settings: CopyInSettings): Promise<CopyInPlan> {
  const present = new Set<string>();
  const updates = new Map<string, SyncedEntry>();
  const owned: PlannedEntry[] = [];
  const guarded: PlannedEntry[] = [];
  const plan = (entry: PlannedEntry, host: string, size: number) => {
    const isProtected = protectionReason(settings.workspace, entry.path, settings.protectedPaths) !== undefined;
    const mode = isProtected ? entry.mode & 0o555 : entry.mode & 0o777;
    (isProtected ? guarded : owned).push({ ...entry, mode });
    const sandbox = entry.kind === 'file' ? sandboxFileSignature(size, entry.mtime, mode) : entry.kind === 'link' ? `link:${entry.linkTarget}` : 'folder';
    updates.set(entry.path, { kind: entry.kind, sandbox, host });
  };

  const visit = async (folder: OpenFolder, prefix: string): Promise<void> => {
    for (const entry of await folder.entries()) {
      const path = prefix === '' ? entry.name : `${prefix}/${entry.name}`;
      if (path === runsFolderName) continue;
      const information = await folder.entryStatusExact(entry.name).catch(() => undefined);
      if (!information) continue;
      const linkTarget = information.isSymbolicLink() ? await folder.readLink(entry.name).catch(() => undefined) : undefined;
      if (information.isSymbolicLink() && linkTarget === undefined) continue;
      if (!information.isSymbolicLink() && !information.isDirectory() && !information.isFile()) continue;
      present.add(path);
      const signature = hostSignature(information, linkTarget);
      const changed = settings.state.get(path)?.host !== signature;
      const mode = Number(information.mode);
      const mtime = wholeSeconds(information);
      if (information.isDirectory()) {
        if (changed) plan({ path, kind: 'folder', mode, mtime }, signature, 0);
        const subfolder = await folder.openFolder(entry.name).catch(() => undefined);
        if (!subfolder) continue;
        try {
          await visit(subfolder, path);
        } finally {
          await subfolder.close();
        }
      } else if (changed) {
        if (linkTarget !== undefined) plan({ path, kind: 'link', mode: 0o777, mtime, linkTarget }, signature, 0);
        else plan({ path, kind: 'file', mode, mtime }, signature, Number(information.size));
      }
    }
  };
  const root = await OpenFolder.open(settings.workspace);
  try {
    await visit(root, '');
  } finally {
    await root.close();
  }
  const removed = [...settings.state.keys()].filter((path) => !present.has(path));
  return {
    owned,
    protected: guarded,
    removed,
    commit: () => {
      for (const path of removed) settings.state.delete(path);
      for (const [path, entry] of updates) settings.state.set(path, entry);
    },
  };
}

/**
 * A tar archive of `entries`, each file read afresh through its folders (links not followed) and
 * sent as big as it is when opened; its state signature is updated to what was sent. A file gone
 * meanwhile is left out.
 */
export async function packEntries(
  workspace: string,
  entries: readonly PlannedEntry[],
  owner: { uid: number; gid: number },
): Promise<Pack> {
  const { pack: createPack } = await import('tar-stream');
  const archive = createPack();
  const write = async () => {
    for (const entry of entries) {
      const header = { name: entry.path, mode: entry.mode, mtime: entry.mtime, ...owner };
      if (entry.kind === 'folder') await addEntry(archive, { ...header, type: 'directory' });
      else if (entry.kind === 'link') await addEntry(archive, { ...header, type: 'symlink', linkname: entry.linkTarget });
      else await addFile(archive, workspace, entry, header);
    }
  };
  write().then(
    () => archive.finalize(),
    (error: unknown) => archive.destroy(error as Error),
  );
  return archive;
}

async function addFile(archive: Pack, workspace: string, entry: PlannedEntry, header: Headers): Promise<void> {
  const components = entry.path.split('/');
  const name = components.pop() as string;
  const folder = await openFolderPath(workspace, components).catch(() => undefined);
  if (!folder) return;
  try {
    const handle = await folder.openFile(name, O_RDONLY | O_NONBLOCK).catch(() => undefined);
    if (!handle) return;
    try {
      const information = await handle.stat();
      if (!information.isFile()) return;
      const size = information.size;
      await new Promise<void>((resolve, reject) => {
        const sink = archive.entry({ ...header, type: 'file', size }, (error) => (error ? reject(error) : resolve()));
        if (size === 0) {
          sink.end();
          return;
        }
        const source = handle.createReadStream({ start: 0, end: size - 1, autoClose: false });
        source.on('error', reject);
        source.pipe(sink);
      });
    } finally {
      await handle.close();
    }
  } finally {
    await folder.close();
  }
}

function addEntry(archive: Pack, header: Headers): Promise<void> {
  return new Promise((resolve, reject) => {
    archive.entry(header, (error) => (error ? reject(error) : resolve()));
  });
}

/** Archives keep whole seconds; both sides compare what the archive keeps. */
function wholeSeconds(information: BigIntStats): Date {
  return new Date(Number(information.mtimeNs / 1_000_000_000n) * 1000);
}
