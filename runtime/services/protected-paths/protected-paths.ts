/**
 * The paths an agent must not write because the runtime, git or a shell later loads or runs them
 * on the host: plugin folders, agents.yaml files, the recipe and its prompt files, the runs
 * folder, `.git/hooks` and `.git/config`, `.mcp.json`, shell start-up files and the user's manus
 * configuration. The list is computed once per run, whether the paths exist yet or not (git's
 * hooks and config are those of repositories that exist when the run starts; one made during the
 * run may keep only sample hooks and settings that run nothing); file
 * tools refuse them, sandboxes mount them read-only, and `verify` (run after each command)
 * undoes any change and stops the run, which is the only control when commands run on the host.
 */
import { existsSync, lstatSync, readdirSync, readlinkSync, realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, join, resolve, sep } from 'node:path';
import { agentsFileCandidates, pluginFolderCandidates, type RunPlan } from '../../runs/recipe/resolve-recipe.js';
import { PermissionDeniedError } from '../../contract/errors.js';
import {
  carryContents,
  compareProtectedSnapshots,
  takeSnapshot,
  undoChanges,
  type ProtectedPathChange,
  type ProtectedSnapshot,
} from './protected-path-snapshot.js';
import { checkNewRepositories, repositoryFolders } from './new-repository-check.js';
import { shellStartupFiles } from '../workspace-paths.js';
import { nodeModulesAbove } from '../../features/mcp/launch-place.js';
import { installedPacks } from '../../features/packs/installed-packs.js';
import type { Pack } from '../../config/pack-manifest.js';

export type { ProtectedPathChange } from './protected-path-snapshot.js';

export interface ProtectedPath {
  /** Absolute path, with the links of its existing part resolved. */
  path: string;
  kind: 'file' | 'folder';
  /** Why it is protected, for error messages. */
  reason: string;
  /**
   * Compared after each command. The runs folder is not: the runtime itself writes there during
   * the run; sandboxes and file tools still keep the agent out of it.
   */
  watched: boolean;
}

export interface ProtectedPathPlaces {
  cwd: string;
  workspace: string;
  runsDirectory: string;
  environment: Record<string, string | undefined>;
}

/** What the protected paths are found from: a run's plan, or only the agents files when tools are served without a recipe. */
export type ProtectedPathSources = Pick<RunPlan, 'agentsConfig'> & Partial<Pick<RunPlan, 'recipe' | 'agent' | 'packs'>>;

/** Every protected path of a run of `plan`. */
export function protectedPathsFor(plan: ProtectedPathSources, places: ProtectedPathPlaces): ProtectedPath[] {
  const entries: ProtectedPath[] = [];
  const add = (path: string, kind: ProtectedPath['kind'], reason: string, watched = true) => {
    const absolute = resolve(places.cwd, path);
    entries.push({ path: canonicalPath(absolute), kind, reason, watched });
    // A link in its place can be swapped for a real folder or file, so the link is protected too.
    const link = linkItself(absolute);
    if (link) entries.push({ path: link, kind: 'file', reason, watched });
  };

  const pluginFolders = pluginFolderCandidates(places.cwd, plan.recipe);
  for (const folder of pluginFolders) add(folder, 'folder', 'plugins in it are loaded by the next run');
  for (const file of agentsFileCandidates(plan.recipe?.file, places.cwd)) add(file, 'file', 'the runtime reads this agents.yaml');
  if (plan.recipe) add(plan.recipe.file, 'file', 'it is the recipe being run');
  // Later runs load packs from these, and plugins import packages from the ones at and above their
  // folders: a package the agent wrote there, a pack nearer than an installed one among them, would
  // run on the host. Not watched: their contents are npm's to change, and sandboxes and file tools
  // keep the agent out of them.
  const packageFolders = new Set<string>();
  for (const start of new Set([places.cwd, ...pluginFolders.map((folder) => dirname(resolve(places.cwd, folder)))])) {
    for (const folder of [join(start, 'node_modules'), ...nodeModulesAbove(start)]) packageFolders.add(folder);
  }
  for (const folder of packageFolders) add(folder, 'folder', 'packages in it are loaded by later runs: packs, plugins and what plugins import', false);
  for (const pack of packsToProtect(plan, places.cwd)) {
    const reason = `it is part of the pack ${pack.name}, whose recipes, agents and plugins later runs load`;
    if (pack.installed) add(pack.folder, 'folder', reason);
    else for (const [path, kind] of pack.parts) add(path, kind, reason);
  }
  for (const file of promptFilesOf(plan)) add(file, 'file', 'the recipe or an agents.yaml reads its prompt from it');
  add(join(places.cwd, '.manus'), 'folder', 'it holds the runtime\'s runs', false);
  add(places.runsDirectory, 'folder', 'it holds the runtime\'s runs', false);
  for (const root of new Set([places.cwd, places.workspace])) {
    // The hooks and settings of a repository the user has. One the agent creates with `git init` is
    // its own work, and protecting it would stop such runs; `verify` keeps its hooks and settings inert.
    if (existsSync(join(root, '.git'))) {
      add(join(root, '.git', 'hooks'), 'folder', 'git runs the hooks in it');
      add(join(root, '.git', 'config'), 'file', 'git reads its settings and commands from it');
    }
    add(join(root, '.mcp.json'), 'file', 'it starts MCP servers');
    for (const name of shellStartupFiles) add(join(root, name), 'file', 'it is a shell start-up file');
  }
  const home = places.environment.HOME ?? homedir();
  for (const name of shellStartupFiles) add(join(home, name), 'file', 'it is a shell start-up file');
  const configHome = places.environment.XDG_CONFIG_HOME ?? join(home, '.config');
  add(join(configHome, 'fish', 'config.fish'), 'file', 'it is a shell start-up file');
  add(join(configHome, 'manus'), 'folder', 'it holds the user\'s manus configuration');
  return deduplicate(entries);
}

/**
 * Installed packs (in node_modules at or above the current folder) are protected whole. A pack the
 * run uses from a folder of its own, where its author may also work, is protected in its parts.
 */
function packsToProtect(plan: ProtectedPathSources, cwd: string): Array<{ name: string; folder: string; installed: boolean; parts: Array<[string, ProtectedPath['kind']]> }> {
  const packs = new Map<string, Pack>();
  for (const pack of [...installedPacks(cwd), ...(plan.packs ?? [])]) if (!packs.has(pack.realFolder)) packs.set(pack.realFolder, pack);
  return [...packs.values()].map((pack) => ({
    name: pack.name,
    folder: pack.folder,
    installed: pack.folder.split(sep).includes('node_modules'),
    parts: [[pack.manifestFile, 'file'], [pack.recipesFolder, 'folder'], [pack.agentsFile, 'file'], [pack.pluginsFolder, 'folder']],
  }));
}

/** The prompt files the recipe and its agents files read. */
export function promptFilesOf(plan: ProtectedPathSources): string[] {
  const agents = [...(plan.agent ? [plan.agent] : []), ...plan.agentsConfig.agents.values()];
  if (typeof plan.recipe?.agent === 'object') agents.push(plan.recipe.agent);
  const files = agents.flatMap((agent) => agent.promptFiles ?? []);
  if (plan.recipe?.promptFile) files.push(plan.recipe.promptFile);
  return files;
}

function deduplicate(entries: ProtectedPath[]): ProtectedPath[] {
  const byPath = new Map<string, ProtectedPath>();
  for (const entry of entries) {
    const earlier = byPath.get(entry.path);
    if (!earlier) byPath.set(entry.path, entry);
    else if (entry.watched && !earlier.watched) byPath.set(entry.path, { ...earlier, watched: true });
  }
  return [...byPath.values()];
}

/**
 * The real path of the longest existing prefix, with the missing rest appended. A dangling link
 * is followed to where it points: creating that target is what would change the protected path.
 */
export function canonicalPath(path: string, hops = 0): string {
  const missing: string[] = [];
  let existing = path;
  while (!existsSync(existing)) {
    const link = lstatSync(existing, { throwIfNoEntry: false });
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

/** The path itself when it is a link, named through its real folder; undefined otherwise. */
function linkItself(path: string): string | undefined {
  const named = join(canonicalPath(dirname(path)), basename(path));
  return lstatSync(named, { throwIfNoEntry: false })?.isSymbolicLink() ? named : undefined;
}

export interface ProtectedPathsOptions {
  /** Told what changed, after it was undone (the run records it). */
  onChanged?: (changes: ProtectedPathChange[]) => void;
  /** How a path is shown in messages; absolute by default. */
  display?: (path: string) => string;
  /** Folders whose repositories created during the run may hold only sample hooks and plain settings. */
  repositoryRoots?: readonly string[];
}

/** The protected paths of one run and the controls built on them. */
export class ProtectedPaths {
  /**
   * Read-only folders a sandbox put where a protected folder did not exist, so a command cannot
   * create it; they exist only while a command runs and count as absent.
   */
  readonly placeholders = new Set<string>();
  private listed: readonly ProtectedPath[] | undefined;
  private readonly list: () => readonly ProtectedPath[];
  private snapshot: ProtectedSnapshot | undefined;
  private capturing: Promise<void> | undefined;
  private repositoriesAtStart = new Set<string>();
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

  /** Captures the state once; every tool call and sandbox awaits it before anything runs. */
  ready(): Promise<void> {
    this.capturing ??= this.capture();
    return this.capturing;
  }

  /** The entry that protects `path` (the entry itself or a path inside a protected folder). */
  protectionOf(path: string): ProtectedPath | undefined {
    // Compared in lower case: on a case-insensitive file system "Plugins" is "plugins".
    const candidate = path.toLowerCase();
    return this.entries.find((entry) => {
      const protectedPath = entry.path.toLowerCase();
      return candidate === protectedPath || (entry.kind === 'folder' && candidate.startsWith(protectedPath + sep));
    });
  }

  /**
   * The entry whose file `path` shares its inode with: a hard link, which writes the protected
   * file whatever its name. Only files with more than one link are looked up.
   */
  hardLinkedProtection(path: string): ProtectedPath | undefined {
    const information = lstatSync(path, { throwIfNoEntry: false });
    if (!information?.isFile() || information.nlink < 2) return undefined;
    for (const entry of this.entries.filter((candidate) => candidate.watched)) {
      for (const file of filesUnder(entry.path)) {
        const other = lstatSync(file, { throwIfNoEntry: false });
        if (other && other.ino === information.ino && other.dev === information.dev) return entry;
      }
    }
    return undefined;
  }

  /** Remembers the current state of every watched path; `verify` compares against it. */
  async capture(): Promise<void> {
    this.snapshot = await takeSnapshot(this.watchedRoots(), { withContent: true, ignored: this.placeholders });
    this.repositoriesAtStart = new Set(repositoryFolders(this.options.repositoryRoots ?? []));
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
    if (this.capturing) await this.capturing;
    const before = this.snapshot;
    // Nothing captured: no tool call ever started, so nothing could have changed.
    if (!before) return;
    const changes = checkNewRepositories(this.options.repositoryRoots ?? [], this.repositoriesAtStart);
    const now = await takeSnapshot(this.watchedRoots(), { withContent: false, ignored: this.placeholders });
    const differences = compareProtectedSnapshots(before, now);
    if (differences.length > 0) {
      changes.push(...await undoChanges(differences, before));
      this.snapshot = carryContents(before, await takeSnapshot(this.watchedRoots(), { withContent: false, ignored: this.placeholders }));
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

  private watchedRoots(): string[] {
    return this.entries.filter((entry) => entry.watched).map((entry) => entry.path);
  }
}

/**
 * A line for command output that ran into a read-only mount or a refused write, naming the
 * protected paths inside the workspace, so the model learns why rather than retrying.
 */
export function protectedPathNotice(protectedPaths: ProtectedPaths | undefined, workspace: string, output: string): string | undefined {
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

/** A protected file, or every file in a protected folder. */
function filesUnder(path: string): string[] {
  const files: string[] = [];
  const pending = [path];
  while (pending.length > 0 && files.length < 10_000) {
    const current = pending.pop() as string;
    const information = lstatSync(current, { throwIfNoEntry: false });
    if (!information) continue;
    if (information.isFile()) files.push(current);
    else if (information.isDirectory()) {
      for (const name of readdirSync(current)) pending.push(join(current, name));
    }
  }
  return files;
}
