/**
 * The state of the protected paths, taken when a run starts and compared after each command:
 * type, inode, size, modification time and mode of every entry (folders recursively), with the
 * content of regular files kept so that a change can be undone. Protected folders are small
 * (plugins, hooks), so the walk is a few `lstat`s, made synchronously.
 */
import { lstatSync, readdirSync, readFileSync, readlinkSync, type BigIntStats, type Stats } from 'node:fs';
import { chmod, lchown, lstat, mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

export type ProtectedNode =
  | { type: 'file'; signature: string; mode: number; uid: number; gid: number; content?: Buffer }
  | { type: 'folder'; mode: number; uid: number; gid: number }
  | { type: 'symlink'; target: string }
  | { type: 'other'; signature: string };

/** Absolute path to its state; a path that does not exist is absent. */
export type ProtectedSnapshot = Map<string, ProtectedNode>;

export interface ProtectedPathChange {
  path: string;
  change: 'created' | 'modified' | 'deleted';
  /** False when the original could not be brought back (its content was too large to keep). */
  restored: boolean;
}

export interface SnapshotOptions {
  /** Keep file contents, up to the limits below, so changes can be undone. */
  withContent: boolean;
  /**
   * Paths that count as absent: read-only mount points a sandbox created for the time of a
   * command, and the unprotected entries of a protected folder.
   */
  ignored: Pick<ReadonlySet<string>, 'has'>;
}

/** Past these a protected folder is still compared, but what lies past them cannot be restored. */
const maximumContentBytes = 64 * 1024 * 1024;
const maximumEntriesPerRoot = 10_000;

/**
 * The contents read by earlier snapshots in this process, by path, with the signature they were
 * read at: runs at once in one process (a batch) each snapshot the same plugin folders, and a file
 * whose inode, size and change times are the same has the same content.
 */
const contentCache = new Map<string, { signature: string; content: Buffer }>();

/**
 * The walk uses the synchronous calls: a protected folder is a few entries, which take well under a
 * millisecond that way, while asynchronous calls would make a run among many in one process wait
 * a turn of the event loop for each entry.
 */
export async function takeSnapshot(roots: readonly string[], options: SnapshotOptions): Promise<ProtectedSnapshot> {
  const snapshot: ProtectedSnapshot = new Map();
  let contentBytes = 0;
  for (const root of roots) {
    const pending = [root];
    let entries = 0;
    while (pending.length > 0 && entries < maximumEntriesPerRoot) {
      const path = pending.pop() as string;
      if (snapshot.has(path) || options.ignored.has(path)) continue;
      const information = lstatEntryBig(path);
      if (!information) continue;
      entries += 1;
      const owner = { mode: Number(information.mode & 0o7777n), uid: Number(information.uid), gid: Number(information.gid) };
      if (information.isDirectory()) {
        snapshot.set(path, { type: 'folder', ...owner });
        for (const name of readFolder(path)) pending.push(join(path, name));
      } else if (information.isSymbolicLink()) {
        snapshot.set(path, { type: 'symlink', target: readLink(path) });
      } else {
        const signature = `${information.mode}:${information.ino}:${information.size}:${information.mtimeNs}`;
        if (!information.isFile()) {
          snapshot.set(path, { type: 'other', signature });
          continue;
        }
        let content: Buffer | undefined;
        if (options.withContent && contentBytes + Number(information.size) <= maximumContentBytes) {
          content = cachedContent(path, `${signature}:${information.ctimeNs}`);
          contentBytes += content?.length ?? 0;
        }
        snapshot.set(path, { type: 'file', signature, ...owner, content });
      }
    }
  }
  return snapshot;
}

/**
 * The entry's information, or undefined when there is none: missing, or below something that is
 * no longer a folder (a `.git` folder swapped for a file makes `.git/hooks` ENOTDIR, not ENOENT).
 */
// A missing path is told without an exception: most protected paths do not exist, and an
// exception costs more than the call.
export function lstatEntry(path: string): Stats | undefined {
  try {
    return lstatSync(path, { throwIfNoEntry: false });
  } catch (error) {
    if (isAbsence(error)) return undefined;
    throw error;
  }
}

function lstatEntryBig(path: string): BigIntStats | undefined {
  try {
    return lstatSync(path, { bigint: true, throwIfNoEntry: false });
  } catch (error) {
    if (isAbsence(error)) return undefined;
    throw error;
  }
}

function isAbsence(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

function readFolder(path: string): string[] {
  try {
    return readdirSync(path);
  } catch {
    // Gone or unreadable since its lstat: it has no entries to keep.
    return [];
  }
}

function readLink(path: string): string {
  try {
    return readlinkSync(path);
  } catch {
    return '';
  }
}

function cachedContent(path: string, signature: string): Buffer | undefined {
  const cached = contentCache.get(path);
  if (cached?.signature === signature) return cached.content;
  let content: Buffer | undefined;
  try {
    content = readFileSync(path);
  } catch {
    content = undefined;
  }
  if (content) contentCache.set(path, { signature, content });
  else contentCache.delete(path);
  return content;
}

/** What differs between two snapshots, parents before their entries. */
export function compareProtectedSnapshots(before: ProtectedSnapshot, after: ProtectedSnapshot): Array<Omit<ProtectedPathChange, 'restored'>> {
  const changes: Array<Omit<ProtectedPathChange, 'restored'>> = [];
  for (const [path, node] of after) {
    const earlier = before.get(path);
    if (!earlier) changes.push({ path, change: 'created' });
    else if (!sameNode(earlier, node)) changes.push({ path, change: 'modified' });
  }
  for (const path of before.keys()) if (!after.has(path)) changes.push({ path, change: 'deleted' });
  return changes.sort((left, right) => left.path.localeCompare(right.path));
}

/**
 * Puts every changed path back as `before` had it: created entries are removed (deepest first),
 * changed and deleted ones rewritten from the kept content (parents first). A file is replaced,
 * never written in place, so a hard link the command made to it keeps the command's content.
 */
export async function undoChanges(
  changes: ReadonlyArray<Omit<ProtectedPathChange, 'restored'>>,
  before: ProtectedSnapshot,
): Promise<ProtectedPathChange[]> {
  const restored = new Map<string, boolean>();
  const created = changes.filter((change) => change.change === 'created').map((change) => change.path);
  for (const path of created.sort((left, right) => right.length - left.length)) {
    restored.set(path, await rm(path, { recursive: true, force: true }).then(() => true, () => false));
  }
  const changed = changes.filter((change) => change.change !== 'created').map((change) => change.path);
  for (const path of changed.sort((left, right) => left.length - right.length)) {
    // A failure is reported as not restored; the run stops either way.
    restored.set(path, await restore(path, before.get(path) as ProtectedNode).catch(() => false));
  }
  return changes.map((change) => ({ ...change, restored: restored.get(change.path) ?? false }));
}

async function restore(path: string, node: ProtectedNode): Promise<boolean> {
  const current = await lstat(path).catch(() => undefined);
  if (node.type === 'folder') {
    if (current && !current.isDirectory()) await rm(path, { recursive: true, force: true });
    await mkdir(path, { recursive: true });
    await chmod(path, node.mode);
    await restoreOwner(path, node);
    return true;
  }
  if (node.type === 'other' || (node.type === 'file' && node.content === undefined)) return false;
  if (current) await rm(path, { recursive: true, force: true });
  await mkdir(dirname(path), { recursive: true });
  if (node.type === 'symlink') {
    await symlink(node.target, path);
    return true;
  }
  await writeFile(path, node.content as Buffer, { flag: 'wx', mode: node.mode });
  await chmod(path, node.mode);
  await restoreOwner(path, node);
  return true;
}

async function restoreOwner(path: string, node: { uid: number; gid: number }): Promise<void> {
  if (process.getuid?.() === 0) await lchown(path, node.uid, node.gid);
}

function sameNode(left: ProtectedNode, right: ProtectedNode): boolean {
  if (left.type !== right.type) return false;
  switch (left.type) {
    case 'file':
    case 'other':
      return left.signature === (right as typeof left).signature;
    case 'folder':
      return left.mode === (right as typeof left).mode;
    case 'symlink':
      return left.target === (right as typeof left).target;
  }
}

/** Keeps the kept contents of `original` in a fresh snapshot taken after an undo. */
export function carryContents(original: ProtectedSnapshot, fresh: ProtectedSnapshot): ProtectedSnapshot {
  for (const [path, node] of fresh) {
    const earlier = original.get(path);
    if (node.type === 'file' && earlier?.type === 'file') node.content = earlier.content;
  }
  return fresh;
}
