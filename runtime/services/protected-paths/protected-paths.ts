/**
 * The paths an agent must not write because the runtime, git, a shell, an editor or a login later
 * loads or runs them on the host: plugin folders, agents.yaml files, the recipe and its prompt
 * files, the runs folder, every repository's folder but its data (see git-repositories.ts), the
 * folder `core.hooksPath` names and the files git includes, `.mcp.json`, `.envrc`, `.vscode/`,
 * `.idea/`, `.devcontainer/`, shell start-up files, the home folder's login, git and ssh files
 * when the workspace holds it, and the user's manus configuration. The list is computed once per
 * run, whether the paths exist yet or not (repositories and editor folders are those that exist
 * when the run starts; one made during the run may keep only sample hooks and settings that run
 * nothing, see new-repository-check.ts); file tools refuse them, sandboxes mount them read-only,
 * and `verify` (run after each command) undoes any change and stops the run, which is the only
 * control when commands run on the host.
 */
import { existsSync, readdirSync, readlinkSync, realpathSync } from 'node:fs';
import { basename, dirname, join, resolve, sep } from 'node:path';
import { PermissionDeniedError } from '../../contract/errors.js';
import type { ProtectedPath, ProtectedPathGuard } from '../../contract/protected-path-guard.js';
import {
  carryContents,
  lstatEntry,
  compareProtectedSnapshots,
  takeSnapshot,
  undoChanges,
  type ProtectedPathChange,
  type ProtectedSnapshot,
} from './protected-path-snapshot.js';
import { checkNewControlEntries, ControlEntryScanner, type ScanRoot } from './new-repository-check.js';
import { matchesEntryName } from './git-repositories.js';
import { isInside } from '../workspace-paths.js';

export type { ProtectedPathChange } from './protected-path-snapshot.js';
export type { ProtectedPath } from '../../contract/protected-path-guard.js';

/** The workspace is scanned whole for repositories and editor folders; the current folder, when apart from it, at its top. */
export function controlEntryRoots(places: { cwd: string; workspace: string }): ScanRoot[] {
  const workspace = canonicalPath(resolve(places.cwd, places.workspace));
  const cwd = canonicalPath(places.cwd);
  return isInside(workspace, cwd) ? [{ path: workspace, depth: Infinity }] : [{ path: workspace, depth: Infinity }, { path: cwd, depth: 1 }];
}

/**
 * The real path of the longest existing prefix, with the missing rest appended. A dangling link
 * is followed to where it points: creating that target is what would change the protected path.
 */
export function canonicalPath(path: string, hops = 0): string {
  const missing: string[] = [];
  let existing = path;
  while (!existsSync(existing)) {
    const link = lstatEntry(existing);
    if (link?.isSymbolicLink() && hops < maximumLinkHops) {
      return canonicalPath(join(resolve(dirname(existing), readlinkSync(existing)), ...missing), hops + 1);
    }
    const parent = dirname(existing);
    if (parent === existing) break;
    missing.unshift(basename(existing));
    existing = parent;
  }
  try {
    return join(realpathSync(existing), ...missing);
  } catch {
    return path;
  }
}

/** As the kernel's limit, so a cycle of links ends. */
const maximumLinkHops = 40;

export interface ProtectedPathsOptions {
  /** Told what changed, after it was undone (the run records it). */
  onChanged?: (changes: ProtectedPathChange[]) => void;
  /** How a path is shown in messages; absolute by default. */
  display?: (path: string) => string;
  /**
   * Folders whose repositories created during the run may hold only sample hooks and plain
   * settings, and where new editor folders are removed: a path is scanned whole, a ScanRoot as
   * deep as it says (see `controlEntryRoots`).
   */
  repositoryRoots?: ReadonlyArray<string | ScanRoot>;
}

/** The protected paths of one run and the controls built on them. */
export class ProtectedPaths implements ProtectedPathGuard {
  /**
   * Read-only folders a sandbox put where a protected folder did not exist, so a command cannot
   * create it; they exist only while a command runs and count as absent.
   */
  readonly placeholders = new Set<string>();
  private listed: readonly ProtectedPath[] | undefined;
  private readonly list: () => readonly ProtectedPath[];
  private snapshot: ProtectedSnapshot | undefined;
  private capturing: Promise<void> | undefined;
  private controlEntriesAtStart = new Set<string>();
  private scanner: ControlEntryScanner | undefined;
  private queue: Promise<unknown> = Promise.resolve();

  /**
   * `entries` may be a function: a run lists and captures its protected paths when its first tool
   * call starts, not while it starts, since nothing the agent does can come before that call.
   */
  constructor(
    entries: readonly ProtectedPath[] | (() => readonly ProtectedPath[]),
    private readonly options: ProtectedPathsOptions = {},
  ) {
    this.list = typeof entries === 'function' ? entries : () => entries;
  }

  get entries(): readonly ProtectedPath[] {
    this.listed ??= this.list();
    return this.listed;
  }

  /** The roots scanned for new repositories and editor folders. */
  private get scanRoots(): ScanRoot[] {
    return (this.options.repositoryRoots ?? []).map((root) => (typeof root === 'string' ? { path: root, depth: Infinity } : root));
  }

  /** Captures the state once; every tool call and sandbox awaits it before anything runs. */
  ready(): Promise<void> {
    this.capturing ??= this.capture();
    return this.capturing;
  }

  /**
   * The entry that protects `path`: the entry itself, or a path inside a protected folder that
   * is not one of its exceptions (nor the folder itself, when it has exceptions).
   */
  protectionOf(path: string): ProtectedPath | undefined {
    // Compared in lower case: on a case-insensitive file system "Plugins" is "plugins".
    const candidate = path.toLowerCase();
    return this.entries.find((entry) => {
      const protectedPath = entry.path.toLowerCase();
      if (candidate === protectedPath) return entry.except === undefined;
      if (entry.kind !== 'folder' || !candidate.startsWith(protectedPath + sep)) return false;
      if (!entry.except) return true;
      const first = path.slice(entry.path.length + 1).split(sep)[0];
      return !matchesEntryName(entry.except, first);
    });
  }

  /**
   * The entry whose file `path` shares its inode with: a hard link, which writes the protected
   * file whatever its name. Only files with more than one link are looked up.
   */
  hardLinkedProtection(path: string): ProtectedPath | undefined {
    const information = lstatEntry(path);
    if (!information?.isFile() || information.nlink < 2) return undefined;
    for (const entry of this.entries.filter((candidate) => candidate.watched)) {
      for (const file of filesUnder(entry)) {
        const other = lstatEntry(file);
        if (other && other.ino === information.ino && other.dev === information.dev) return entry;
      }
    }
    return undefined;
  }

  /** Remembers the current state of every watched path; `verify` compares against it. */
  async capture(): Promise<void> {
    this.snapshot = await takeSnapshot(this.watchedRoots(), { withContent: true, ignored: this.ignored });
    this.scanner = new ControlEntryScanner(this.scanRoots);
    const found = this.scanner.scan();
    this.controlEntriesAtStart = new Set([...found.dotGits, ...found.editorEntries].filter((path) => !this.placeholders.has(path)));
  }

  /**
   * Compares the watched paths with the captured state. A change is undone, reported to
   * `onChanged`, and stops the run with a PermissionDeniedError listing it. Checks run one at a time.
   */
  verify(): Promise<void> {
    const turn = this.queue.then(() => this.verifyNow());
    this.queue = turn.catch(() => undefined);
    return turn;
  }

  private async verifyNow(): Promise<void> {
    try {
      await this.compareAndUndo();
    } catch (error) {
      if (error instanceof PermissionDeniedError) throw error;
      // What the command changed is unknown and may still be in place: the run cannot go on.
      throw new PermissionDeniedError(`The check of protected paths after a command failed, so the run was stopped: ${(error as Error).message}`);
    }
  }

  private async compareAndUndo(): Promise<void> {
    if (this.capturing) await this.capturing;
    const before = this.snapshot;
    // Nothing captured: no tool call ever started, so nothing could have changed.
    if (!before) return;
    const scanner = this.scanner ?? new ControlEntryScanner(this.scanRoots);
    const found = scanner.scan();
    const notPlaceholder = (path: string) => !this.placeholders.has(path);
    const changes = checkNewControlEntries(
      { ...found, dotGits: found.dotGits.filter(notPlaceholder), editorEntries: found.editorEntries.filter(notPlaceholder) },
      this.controlEntriesAtStart,
      this.scanRoots.map((root) => root.path),
    );
    const now = await takeSnapshot(this.watchedRoots(), { withContent: false, ignored: this.ignored });
    const differences = compareProtectedSnapshots(before, now);
    if (differences.length > 0) {
      changes.push(...await undoChanges(differences, before));
      this.snapshot = carryContents(before, await takeSnapshot(this.watchedRoots(), { withContent: false, ignored: this.ignored }));
    }
    if (changes.length === 0) return;
    this.options.onChanged?.(changes);
    throw new PermissionDeniedError(this.describe(changes));
  }

  private describe(changes: ProtectedPathChange[]): string {
    const display = this.options.display ?? ((path: string) => path);
    const lines = changes.map((change) => {
      const entry = this.protectionOf(change.path) ?? newRepositoryProtection(change.path);
      const outcome = change.restored ? (change.change === 'created' ? 'removed' : 'restored') : 'could not be restored';
      return `  ${display(change.path)}: ${change.change}, ${outcome}${entry ? ` (protected: ${entry.reason})` : ''}`;
    });
    return `A command changed protected paths, which the runtime or git would later load or run on the host; the run was stopped and the changes undone:\n${lines.join('\n')}`;
  }

  /** Paths the snapshots count as absent: placeholders, and the exceptions of protected folders (a repository's objects). */
  private readonly ignored = {
    has: (path: string): boolean => this.placeholders.has(path) || this.isException(path),
  };

  private isException(path: string): boolean {
    const parent = dirname(path);
    return this.entries.some((entry) => entry.except !== undefined && entry.path === parent && matchesEntryName(entry.except, basename(path)));
  }

  private watchedRoots(): string[] {
    return this.entries.filter((entry) => entry.watched).map((entry) => entry.path);
  }
}

/**
 * A line for command output that ran into a read-only mount or a refused write, naming the
 * protected paths inside the workspace, so the model learns why rather than retrying.
 */
export function protectedPathNotice(protectedPaths: ProtectedPathGuard | undefined, workspace: string, output: string): string | undefined {
  if (!protectedPaths || !/Read-only file system|Device or resource busy|cross-device link/i.test(output)) return undefined;
  const inside = protectedPaths.entries
    .filter((entry) => entry.path !== workspace && entry.path.startsWith(workspace + sep))
    .map((entry) => entry.path.slice(workspace.length + 1) + (entry.kind === 'folder' ? '/' : ''));
  if (inside.length === 0) return undefined;
  return `[Protected paths are read-only for the agent (the runtime, git or a shell loads them later on the host): ${inside.join(', ')}]`;
}

/** Why a hook or setting of a repository made during the run was removed. */
function newRepositoryProtection(path: string): Pick<ProtectedPath, 'reason'> | undefined {
  if (path.includes(`${sep}.git${sep}hooks${sep}`)) return { reason: 'git runs the hooks of a repository made during the run; only samples may stay' };
  if (path.endsWith(`${sep}.git${sep}config`)) return { reason: 'only settings that run nothing may stay in a repository made during the run' };
  return undefined;
}

/** A protected file, or every file in a protected folder but its exceptions. */
function filesUnder(entry: ProtectedPath): string[] {
  const files: string[] = [];
  const pending = [entry.path];
  while (pending.length > 0 && files.length < 10_000) {
    const current = pending.pop() as string;
    const information = lstatEntry(current);
    if (!information) continue;
    if (information.isFile()) files.push(current);
    else if (information.isDirectory()) {
      for (const name of readdirSync(current)) {
        if (current === entry.path && entry.except && matchesEntryName(entry.except, name)) continue;
        pending.push(join(current, name));
      }
    }
  }
  return files;
}
