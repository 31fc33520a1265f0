/**
 * Applies a tar archive of a sandbox's workspace to the host's workspace. The archive comes from a
 * machine the agent's commands control, so every entry is untrusted: a name that is absolute or
 * climbs with "..", a symbolic link, a hard link, a device or a FIFO is refused, and so is a write
 * to a protected path or one the file tools refuse. Regular files and folders are written as the
 * file tools write: each folder opened relative to the one above it with links refused (see
 * OpenFolder), the file made under a fresh name in that very folder and renamed over the old one,
 * so a link or hard link in its place is replaced, never written through. The archive's size and
 * number of entries are bounded; past either, the copy stops.
 *
 * Only what changed in the sandbox since the state both sides last agreed on is written; where the
 * host changed the same path meanwhile, the host's version stays. What the archive no longer holds
 * is removed from the host when the host has not changed it either.
 */
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import type { Readable } from 'node:stream';
import type { Headers } from 'tar-stream';
import type { ProtectedPathGuard } from '../../contract/protected-path-guard.js';
import type { OpenFolder } from '../open-folder.js';
import { isInside } from '../workspace-paths.js';
import type { SandboxUser } from './sandbox-options.js';
import {
  currentHostSignature,
  hostSignature,
  openFolderPath,
  protectionReason,
  runsFolderName,
  sandboxFileSignature,
  type SyncedState,
} from './workspace-sync-state.js';

const { O_WRONLY, O_CREAT, O_EXCL } = constants;

export interface CopyBackLimits {
  /** Most bytes of file contents the archive may hold. */
  maximumBytes: number;
  /** Most entries the archive may hold. */
  maximumEntries: number;
}

export const defaultCopyBackLimits: CopyBackLimits = { maximumBytes: 2 * 1024 ** 3, maximumEntries: 50_000 };

export interface CopyBackSettings {
  /** The host's workspace (its real path). */
  workspace: string;
  /** The archive's top entry: "workspace" for an archive of /workspace, "x.txt" for one of /workspace/src/x.txt. */
  topName: string;
  /** The workspace path the top entry stands for: "" for the workspace, "src/x.txt" for that file. */
  topPath?: string;
  /**
   * What the sandbox's workspace holds, from a listing made apart: when given, the archive holds
   * only some of it, and what is gone is what the listing lacks. Without it the archive is whole.
   */
  listed?: ReadonlySet<string>;
  state: SyncedState;
  protectedPaths?: ProtectedPathGuard;
  /** Who is given what is made, when the runtime runs as root for another user's workspace. */
  owner?: SandboxUser;
  limits?: CopyBackLimits;
}

export interface CopyBackRefusal {
  /** The entry's name as the archive gave it, or its workspace-relative path. */
  path: string;
  reason: string;
  /** True when the path is protected: a change there is an attempt on the host, not a mere loss. */
  protected: boolean;
}

export interface CopyBackReport {
  written: string[];
  removed: string[];
  refused: CopyBackRefusal[];
  /** False when a limit stopped the copy; nothing was removed then. */
  complete: boolean;
  /** Bytes of file contents the archive held, counted against the limit. */
  bytes: number;
}

class LimitReached extends Error {}

export async function copyBack(archive: Readable, settings: CopyBackSettings): Promise<CopyBackReport> {
  const { extract: createExtract } = await import('tar-stream');
  const limits = settings.limits ?? defaultCopyBackLimits;
  const report: CopyBackReport = { written: [], removed: [], refused: [], complete: true, bytes: 0 };
  const seen = new Set<string>();
  let entries = 0;
  let bytes = 0;

  const handle = async (header: Headers, content: Readable): Promise<void> => {
    entries += 1;
    if (entries > limits.maximumEntries) {
      throw new LimitReached(`the sandbox's workspace holds more than ${limits.maximumEntries} entries`);
    }
    const size = header.size ?? 0;
    if (isFileEntry(header)) {
      bytes += size;
      if (bytes > limits.maximumBytes) throw new LimitReached(`the sandbox's workspace holds more than ${limits.maximumBytes} bytes`);
    }
    const path = workspacePath(header.name, settings.topName, settings.topPath ?? '');
    if ('refusal' in path) {
      report.refused.push({ path: header.name, reason: path.refusal, protected: false });
      return;
    }
    if (path.path === '') return;
    seen.add(path.path);
    const refusal = await applyEntry(header, path.path, content, settings, report);
    if (refusal) report.refused.push({ path: path.path, ...refusal });
  };

  await new Promise<void>((resolve, reject) => {
    const extract = createExtract();
    let failed = false;
    const fail = (error: unknown) => {
      if (failed) return;
      failed = true;
      archive.unpipe(extract);
      archive.destroy();
      extract.destroy();
      reject(error);
    };
    extract.on('entry', (header: Headers, content: Readable, next: (error?: unknown) => void) => {
      // tar-stream's entry streams may not say `readableEnded`: the end is watched from the start.
      const ended = new Promise<void>((resolveEnd) => content.once('end', resolveEnd));
      handle(header, content).then(
        () => {
          // Whatever the entry's handler did not read is skipped.
          content.resume();
          void ended.then(() => next());
        },
        fail,
      );
    });
    extract.on('finish', resolve);
    extract.on('error', fail);
    archive.on('error', fail);
    archive.pipe(extract);
  }).catch((error: unknown) => {
    if (!(error instanceof LimitReached)) throw error;
    report.complete = false;
    report.refused.push({ path: '.', reason: `${error.message}, so the rest was not copied back and nothing was removed`, protected: false });
  });

  report.bytes = bytes;
  if (report.complete) await removeWhatIsGone(settings.listed ?? seen, settings, report);
  return report;
}

/** Removes from the host what a listing of the sandbox's workspace no longer holds, with nothing to copy. */
export async function removeUnlisted(listed: ReadonlySet<string>, settings: CopyBackSettings): Promise<CopyBackReport> {
  const report: CopyBackReport = { written: [], removed: [], refused: [], complete: true, bytes: 0 };
  await removeWhatIsGone(listed, settings, report);
  return report;
}

function isFileEntry(header: Headers): boolean {
  return header.type === 'file' || header.type === 'contiguous-file' || header.type === undefined || header.type === null;
}

/** The entry's workspace-relative path, or why its name is refused. */
function workspacePath(name: string, topName: string, topPath: string): { path: string } | { refusal: string } {
  if (name.startsWith('/')) return { refusal: 'an absolute name' };
  if (name.includes('\0')) return { refusal: 'a name holding a NUL byte' };
  const components = name.split('/').filter((component) => component !== '' && component !== '.');
  if (components.includes('..')) return { refusal: 'a name that climbs out with ".."' };
  if (components[0] !== topName) return { refusal: `a name outside the archive's top folder ${topName}` };
  if (topPath.split('/').some((component) => component === '..' || component === '.')) return { refusal: 'a top path that climbs out with ".."' };
  return { path: [...(topPath === '' ? [] : [topPath]), ...components.slice(1)].join('/') };
}

async function applyEntry(
  header: Headers,
  path: string,
  content: Readable,
  settings: CopyBackSettings,
  report: CopyBackReport,
): Promise<Omit<CopyBackRefusal, 'path'> | undefined> {
  const known = settings.state.get(path);
  switch (header.type) {
    case 'directory':
      if (known?.kind === 'folder') return undefined;
      return writeFolder(path, settings, report);
    case 'symlink':
      // A link the host itself holds, unchanged, is the host's own.
      if (known?.kind === 'link' && known.sandbox === `link:${header.linkname ?? ''}`) return undefined;
      return { reason: `a symbolic link (to ${header.linkname ?? '?'}) is not copied back`, protected: false };
    case 'link':
      return { reason: `a hard link (to ${header.linkname ?? '?'}) is not copied back`, protected: false };
    case 'character-device':
    case 'block-device':
      return { reason: 'a device is not copied back', protected: false };
    case 'fifo':
      return { reason: 'a FIFO is not copied back', protected: false };
    default:
      if (!isFileEntry(header)) return { reason: `an entry of type ${header.type} is not copied back`, protected: false };
      if (known?.kind === 'file' && known.sandbox === sandboxFileSignature(header.size ?? 0, header.mtime, header.mode)) return undefined;
      return writeFile(header, path, content, settings, report);
  }
}

async function writeFolder(path: string, settings: CopyBackSettings, report: CopyBackReport): Promise<Omit<CopyBackRefusal, 'path'> | undefined> {
  const reason = protectionReason(settings.workspace, path, settings.protectedPaths);
  if (reason) return { reason: `a protected path (${reason})`, protected: true };
  const refusal = await withFolder(settings, path.split('/'), async () => undefined);
  if (refusal) return refusal;
  settings.state.set(path, { kind: 'folder', sandbox: 'folder', host: 'folder' });
  report.written.push(path);
  return undefined;
}

async function writeFile(
  header: Headers,
  path: string,
  content: Readable,
  settings: CopyBackSettings,
  report: CopyBackReport,
): Promise<Omit<CopyBackRefusal, 'path'> | undefined> {
  const reason = protectionReason(settings.workspace, path, settings.protectedPaths);
  if (reason) return { reason: `a protected path (${reason})`, protected: true };
  const known = settings.state.get(path);
  // Changed on the host too since the last copy (a file tool wrote it while the command ran): the host's stays.
  if ((await currentHostSignature(settings.workspace, path)) !== known?.host) return undefined;
  const components = path.split('/');
  const name = components.pop() as string;
  return withFolder(settings, components, async (folder) => {
    // A rename into a protected folder, or out of the workspace, since the walk: where the kernel says it is now decides.
    const current = relative(settings.workspace, await folder.currentPath());
    const now = current === '' ? name : `${current.split(sep).join('/')}/${name}`;
    if (!isInside(settings.workspace, join(settings.workspace, current)) || current.startsWith('..')) {
      return { reason: 'its folder was moved out of the workspace', protected: false };
    }
    const movedReason = protectionReason(settings.workspace, now, settings.protectedPaths);
    if (movedReason) return { reason: `a protected path (${movedReason})`, protected: true };
    const temporary = `.manus-copy-${randomBytes(6).toString('hex')}`;
    const file = await folder.openFile(temporary, O_WRONLY | O_CREAT | O_EXCL, 0o600);
    let renamed = false;
    try {
      await writeContent(file, content);
      await file.chmod((header.mode ?? 0o644) & 0o777);
      if (settings.owner) await file.chown(settings.owner.uid, settings.owner.gid);
      const information = await file.stat({ bigint: true });
      await file.close();
      try {
        await folder.renameEntry(temporary, name);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'EISDIR' || code === 'ENOTEMPTY' || code === 'EEXIST') return { reason: 'a folder of that name is on the host', protected: false };
        throw error;
      }
      renamed = true;
      settings.state.set(path, {
        kind: 'file',
        sandbox: sandboxFileSignature(header.size ?? 0, header.mtime, header.mode),
        host: hostSignature(information),
      });
      report.written.push(path);
      return undefined;
    } finally {
      await file.close().catch(() => undefined);
      if (!renamed) await folder.removeFile(temporary).catch(() => undefined);
    }
  });
}

/**
 * Opens the folder `components` (making what is missing, each checked first) and runs `action` in
 * it; a folder met as a link, or as a file, refuses the entry.
 */
async function withFolder(
  settings: CopyBackSettings,
  components: readonly string[],
  action: (folder: OpenFolder) => Promise<Omit<CopyBackRefusal, 'path'> | undefined>,
): Promise<Omit<CopyBackRefusal, 'path'> | undefined> {
  let folder: OpenFolder | undefined;
  try {
    folder = await openFolderPath(settings.workspace, components, async (made) => {
      const reason = protectionReason(settings.workspace, made, settings.protectedPaths);
      if (reason) throw new ProtectedFolder(reason);
    });
  } catch (error) {
    if (error instanceof ProtectedFolder) return { reason: `a protected path (${error.message})`, protected: true };
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') return { reason: 'it lies past a symbolic link on the host, which is not followed', protected: false };
    if (code === 'ENOTDIR') return { reason: 'it lies below a file on the host', protected: false };
    throw error;
  }
  if (!folder) return { reason: 'its folder is missing on the host', protected: false };
  try {
    if (settings.owner) await folder.changeOwner(settings.owner.uid, settings.owner.gid).catch(() => undefined);
    return await action(folder);
  } finally {
    await folder.close();
  }
}

class ProtectedFolder extends Error {}

async function writeContent(file: FileHandle, content: Readable): Promise<void> {
  for await (const chunk of content) {
    const bytes = chunk as Buffer;
    for (let offset = 0; offset < bytes.length; ) offset += (await file.write(bytes, offset)).bytesWritten;
  }
}

/** Removes from the host what the sandbox removed, deepest first, where the host has not changed it since. */
async function removeWhatIsGone(seen: ReadonlySet<string>, settings: CopyBackSettings, report: CopyBackReport): Promise<void> {
  const gone = [...settings.state.keys()].filter((path) => !seen.has(path) && path.split('/')[0] !== runsFolderName);
  gone.sort((left, right) => right.split('/').length - left.split('/').length || (left < right ? 1 : -1));
  for (const path of gone) {
    const known = settings.state.get(path);
    if (!known) continue;
    const reason = protectionReason(settings.workspace, path, settings.protectedPaths);
    if (reason) {
      report.refused.push({ path, reason: `removing a protected path (${reason})`, protected: true });
      continue;
    }
    if ((await currentHostSignature(settings.workspace, path)) !== known.host) {
      // The host changed or removed it meanwhile: the next copy into the sandbox settles it.
      if ((await currentHostSignature(settings.workspace, path)) === undefined) settings.state.delete(path);
      continue;
    }
    const components = path.split('/');
    const name = components.pop() as string;
    const folder = await openFolderPath(settings.workspace, components).catch(() => undefined);
    if (!folder) continue;
    try {
      if (known.kind === 'folder') await folder.removeFolder(name);
      else await folder.removeFile(name);
      settings.state.delete(path);
      report.removed.push(path);
    } catch {
      // A folder the host has put new files in since stays, with them.
    } finally {
      await folder.close();
    }
  }
}
