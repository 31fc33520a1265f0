/**
 * A repository the agent creates during a run (`git init` anywhere in the workspace, or a `.git`
 * file naming a folder with `gitdir:`) is its own work, and protecting its folder outright would
 * stop every such run. Its hooks and settings would still run on the host the first time the user
 * types a git command there, so such a repository may hold only what `git init`, `git clone` and
 * ordinary work write: sample hooks, and settings that run nothing; its submodules' and linked
 * worktrees' folders likewise. A `.git` file that names a folder outside the workspace is removed,
 * since that folder is not the agent's to clean. A new `.envrc`, `.vscode/`, `.idea/` or
 * `.devcontainer/` anywhere is removed: direnv and editors run what they name when the user
 * enters or opens that folder. Anything removed is reported like a change to a protected path.
 */
import { lstatSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, sep } from 'node:path';
import { commonFolderOf, repositoryFolderOf } from './git-repositories.js';
import { lstatEntry, type ProtectedPathChange } from './protected-path-snapshot.js';
import { editorControlNames, isInside } from '../workspace-paths.js';

/** Settings that configure a repository without naming a program, a file to include or a path to hooks. */
const plainSettings = new Set([
  'core.repositoryformatversion',
  'core.filemode',
  'core.bare',
  'core.logallrefupdates',
  'core.ignorecase',
  'core.precomposeunicode',
  'core.symlinks',
  'core.autocrlf',
  'core.eol',
  'core.worktree',
  'extensions.objectformat',
  'extensions.worktreeconfig',
  'init.defaultbranch',
  'user.name',
  'user.email',
]);
/** Per-remote and per-branch settings (`remote.origin.url`), by their section and key. */
const plainSubsectionSettings = new Set(['remote.url', 'remote.fetch', 'remote.pushurl', 'branch.remote', 'branch.merge', 'branch.rebase', 'submodule.url', 'submodule.active']);

/** Past this many folders a scan stops; what lies beyond is reported as not looked at. */
const maximumScannedFolders = 50_000;
/** How deep submodules' folders are followed inside a repository's `modules/`. */
const maximumModuleDepth = 8;

export interface ScanRoot {
  path: string;
  depth: number;
}

export interface ControlEntries {
  /** Every `.git` entry, folder, file or link. */
  dotGits: string[];
  /** Every `.envrc`, `.vscode`, `.idea` and `.devcontainer` outside node_modules folders. */
  editorEntries: string[];
  /** False when the scan stopped at its limit. */
  complete: boolean;
}

/**
 * Finds the `.git` entries and editor entries anywhere under some roots, without following links
 * or entering `.git` folders. It remembers each folder's listing with its change time, so a scan
 * after a command reads only the folders that changed: one `lstat` for each of the others.
 */
export class ControlEntryScanner {
  private readonly listings = new Map<string, { stamp: string; folders: string[]; found: string[] }>();

  private readonly roots: ScanRoot[];

  /** `roots`: each folder with how many levels below it are scanned (Infinity for all). */
  constructor(roots: ReadonlyArray<ScanRoot>) {
    // Deepest first, so a folder two roots share is scanned as deep as either asks.
    this.roots = [...roots].sort((left, right) => right.depth - left.depth);
  }

  scan(): ControlEntries {
    const dotGits = new Set<string>();
    const editorEntries = new Set<string>();
    const visited = new Set<string>();
    let complete = true;
    for (const root of this.roots) {
      const pending: Array<[string, number]> = [[root.path, 0]];
      while (pending.length > 0) {
        const [folder, depth] = pending.pop() as [string, number];
        if (visited.has(folder)) continue;
        if (visited.size >= maximumScannedFolders) {
          complete = false;
          break;
        }
        visited.add(folder);
        const listing = this.listing(folder);
        if (!listing) continue;
        for (const name of listing.found) {
          if (name === '.git') dotGits.add(join(folder, name));
          // Packages ship editor folders, and no one opens or enters a package's folder in node_modules.
          else if (!folder.split(sep).includes('node_modules')) editorEntries.add(join(folder, name));
        }
        if (depth < root.depth) for (const name of listing.folders) pending.push([join(folder, name), depth + 1]);
      }
    }
    for (const folder of this.listings.keys()) if (!visited.has(folder)) this.listings.delete(folder);
    return { dotGits: [...dotGits], editorEntries: [...editorEntries], complete };
  }

  private listing(folder: string): { folders: string[]; found: string[] } | undefined {
    let information;
    try {
      information = lstatSync(folder, { bigint: true });
    } catch {
      // Gone, or below what is no longer a folder: nothing to list.
      return undefined;
    }
    if (!information.isDirectory()) return undefined;
    const stamp = `${information.ino}:${information.mtimeNs}:${information.ctimeNs}`;
    const cached = this.listings.get(folder);
    if (cached?.stamp === stamp) return cached;
    let entries;
    try {
      entries = readdirSync(folder, { withFileTypes: true });
    } catch {
      return undefined;
    }
    const folders: string[] = [];
    const found: string[] = [];
    for (const entry of entries) {
      if (entry.name === '.git' || editorControlNames.has(entry.name)) found.push(entry.name);
      else if (entry.isDirectory()) folders.push(entry.name);
    }
    const listing = { stamp, folders, found };
    this.listings.set(folder, listing);
    return listing;
  }
}

/**
 * Cleans the repositories and removes the editor entries found now that were not there at the
 * start (`atStart`), and returns what it changed.
 */
export function checkNewControlEntries(found: ControlEntries, atStart: ReadonlySet<string>, roots: readonly string[]): ProtectedPathChange[] {
  const changes: ProtectedPathChange[] = [];
  for (const dotGit of found.dotGits) if (!atStart.has(dotGit)) changes.push(...cleanNewRepository(dotGit, roots));
  for (const path of found.editorEntries) if (!atStart.has(path)) changes.push(remove(path));
  return changes;
}

function cleanNewRepository(dotGit: string, roots: readonly string[]): ProtectedPathChange[] {
  const inside = (path: string) => roots.some((root) => isInside(root, path));
  const folder = repositoryFolderOf(dotGit);
  if (!folder) return [];
  if (!inside(folder)) return [remove(dotGit)];
  const changes: ProtectedPathChange[] = [];
  const common = commonFolderOf(folder);
  if (common && !inside(common)) changes.push(remove(join(folder, 'commondir')));
  const folders = common && inside(common) ? [folder, common] : [folder];
  for (const repositoryFolder of folders.flatMap((each) => withNestedFolders(each, 0))) {
    changes.push(
      ...removeActiveHooks(join(repositoryFolder, 'hooks')),
      ...removeActiveSettings(join(repositoryFolder, 'config')),
      ...removeActiveSettings(join(repositoryFolder, 'config.worktree')),
    );
  }
  return changes;
}

/** A repository's folder with its submodules' folders (`modules/<name>`, nested) and its linked worktrees' (`worktrees/<name>`). */
function withNestedFolders(folder: string, depth: number): string[] {
  const nested = [folder];
  if (depth >= maximumModuleDepth) return nested;
  for (const name of subfolders(join(folder, 'worktrees'))) nested.push(join(folder, 'worktrees', name));
  for (const name of subfolders(join(folder, 'modules'))) nested.push(...withNestedFolders(join(folder, 'modules', name), depth + 1));
  return nested;
}

function subfolders(folder: string): string[] {
  try {
    return readdirSync(folder, { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name);
  } catch {
    return [];
  }
}

function remove(path: string): ProtectedPathChange {
  rmSync(path, { recursive: true, force: true });
  return { path, change: 'created', restored: lstatEntry(path) === undefined };
}

function removeActiveHooks(hooksFolder: string): ProtectedPathChange[] {
  const information = lstatEntry(hooksFolder);
  if (!information) return [];
  // A link would lead the clean-up into a folder that is not the repository's; the link goes.
  if (!information.isDirectory()) return [remove(hooksFolder)];
  return readdirSync(hooksFolder)
    .filter((name) => !name.endsWith('.sample'))
    .map((name) => remove(join(hooksFolder, name)));
}

function removeActiveSettings(configFile: string): ProtectedPathChange[] {
  const information = lstatEntry(configFile);
  if (!information) return [];
  if (!information.isFile()) return [remove(configFile)];
  let text: string;
  try {
    text = readFileSync(configFile, 'utf8');
  } catch {
    return [];
  }
  const kept = plainConfigLines(text);
  if (kept === text) return [];
  writeFileSync(configFile, kept);
  return [{ path: configFile, change: 'modified', restored: true }];
}

/**
 * The config text with every setting that is not plain dropped, and with it any line it
 * continues onto. Section headers stay, so the file remains valid.
 */
export function plainConfigLines(text: string): string {
  const output: string[] = [];
  let section = '';
  let subsection: string | undefined;
  let dropping = false;
  for (const line of text.split('\n')) {
    const continued = dropping;
    dropping = false;
    if (continued) {
      dropping = line.endsWith('\\');
      continue;
    }
    const trimmed = line.trim();
    const header = /^\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]\s*(.*)$/.exec(trimmed);
    if (header) {
      section = header[1].toLowerCase();
      subsection = header[2];
      // A header may be followed by a setting on the same line; keep such a line only when it is plain.
      if (header[3] !== '' && !/^[#;]/.test(header[3]) && !isPlain(section, subsection, header[3])) {
        output.push(`[${header[1]}${subsection === undefined ? '' : ` "${subsection}"`}]`);
        dropping = header[3].endsWith('\\');
        continue;
      }
      output.push(line);
      continue;
    }
    if (trimmed === '' || /^[#;]/.test(trimmed) || isPlain(section, subsection, trimmed)) {
      output.push(line);
      continue;
    }
    dropping = line.endsWith('\\');
  }
  return output.join('\n');
}

function isPlain(section: string, subsection: string | undefined, setting: string): boolean {
  const key = /^([A-Za-z][A-Za-z0-9-]*)/.exec(setting)?.[1]?.toLowerCase();
  if (!key) return false;
  if (subsection === undefined && section.includes('.')) {
    // The old form `[remote.origin]` names a subsection with a dot.
    const [outer] = section.split('.');
    return plainSubsectionSettings.has(`${outer}.${key}`);
  }
  if (subsection !== undefined) return plainSubsectionSettings.has(`${section}.${key}`);
  return plainSettings.has(`${section}.${key}`);
}
