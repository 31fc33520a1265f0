/**
 * Which paths a run protects, found from its plan: plugin folders, agents.yaml files, the recipe
 * and its prompt files, packs, the runs folder, every repository's folder but its data (see
 * services/protected-paths/git-repositories.ts), the folder `core.hooksPath` names and the files git
 * includes, `.mcp.json`, `.envrc`, `.vscode/`, `.idea/`, `.devcontainer/`, shell start-up files, the
 * home folder's login, git and ssh files when the workspace holds it, the user's manus
 * configuration and compiled plugins. services/protected-paths/ guards them.
 */
import { homedir } from 'node:os';
import { basename, dirname, join, resolve, sep } from 'node:path';
import type { Pack } from '../config/pack-manifest.js';
import type { RunPlan } from '../config/run-plan.js';
import type { ProtectedPath } from '../contract/protected-path-guard.js';
import { nodeModulesAbove } from '../features/mcp/launch-place.js';
import { cacheFolder } from '../services/cache-folder.js';
import { compiledPluginsFolder } from '../services/plugin-compilation/compiled-code-cache.js';
import { installedPacks } from '../features/packs/installed-packs.js';
import {
  commonFolderOf,
  repositoryConfiguration,
  repositoryControlFiles,
  repositoryControlFolders,
  repositoryDataEntries,
  repositoryFolderOf,
} from '../services/protected-paths/git-repositories.js';
import { lstatEntry } from '../services/protected-paths/protected-path-snapshot.js';
import { ControlEntryScanner } from '../services/protected-paths/new-repository-check.js';
import { canonicalPath, controlEntryRoots } from '../services/protected-paths/protected-paths.js';
import { editorControlNames, isInside, shellStartupFiles } from '../services/workspace-paths.js';
import { agentsFileCandidates, pluginFolderCandidates } from './recipe/resolve-recipe.js';

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
  const canonical = canonicalPaths();
  const add = (path: string, kind: ProtectedPath['kind'], reason: string, watched = true, except?: readonly string[]) => {
    const absolute = resolve(places.cwd, path);
    entries.push({ path: canonical.path(absolute), kind, reason, watched, ...(except ? { except } : {}) });
    // A link in its place can be swapped for a real folder or file, so the link is protected too.
    const named = join(canonical.folder(dirname(absolute)), basename(absolute));
    if (lstatEntry(named)?.isSymbolicLink()) entries.push({ path: named, kind: 'file', reason, watched });
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
  const home = places.environment.HOME ?? homedir();
  const found = new ControlEntryScanner(controlEntryRoots(places)).scan();
  for (const dotGit of found.dotGits) protectRepository(dotGit, home, places.environment, add);
  for (const path of found.editorEntries) add(path, lstatEntry(path)?.isDirectory() ? 'folder' : 'file', editorEntryReason);
  for (const root of new Set([places.cwd, places.workspace])) {
    add(join(root, '.mcp.json'), 'file', 'it starts MCP servers');
    for (const name of shellStartupFiles) add(join(root, name), 'file', 'it is a shell start-up file');
    add(join(root, '.envrc'), 'file', editorEntryReason);
    for (const name of [...editorControlNames].filter((entry) => entry !== '.envrc')) add(join(root, name), 'folder', editorEntryReason);
  }
  for (const name of shellStartupFiles) add(join(home, name), 'file', 'it is a shell start-up file');
  const configHome = places.environment.XDG_CONFIG_HOME ?? join(home, '.config');
  add(join(configHome, 'fish', 'config.fish'), 'file', 'it is a shell start-up file');
  add(join(configHome, 'manus'), 'folder', 'it holds the user\'s manus configuration');
  const compiledPlugins = compiledPluginsFolder(cacheFolder(places.environment));
  if (compiledPlugins) add(compiledPlugins, 'folder', 'it holds compiled plugins, which later runs load instead of the plugins\' sources');
  // Outside the workspace these are out of a sandbox's reach; inside it, a command could write them.
  if ([places.cwd, places.workspace].some((root) => isInside(canonicalPath(root), canonicalPath(home)))) {
    for (const [path, kind] of homeControlEntries) add(join(home, path), kind, 'the user\'s login, shell, git, ssh or desktop session runs what it names');
  }
  return deduplicate(entries);
}

const editorEntryReason = 'direnv or an editor runs what it names when the user enters or opens its folder';

/**
 * Files and folders of the home folder that run something at the next login, shell, git or ssh
 * command, desktop session or editor start; protected when the workspace holds the home folder.
 */
const homeControlEntries: ReadonlyArray<[string, ProtectedPath['kind']]> = [
  ['.gitconfig', 'file'],
  ['.config/git', 'folder'],
  ['.ssh', 'folder'],
  ['.config/autostart', 'folder'],
  ['.config/systemd/user', 'folder'],
  ['.config/environment.d', 'folder'],
  ['.config/fish', 'folder'],
  ['.config/nvim', 'folder'],
  ['.local/bin', 'folder'],
  ['bin', 'folder'],
  ['.pam_environment', 'file'],
  ['.xprofile', 'file'],
  ['.xsessionrc', 'file'],
  ['.xinitrc', 'file'],
  ['.vimrc', 'file'],
  ['.emacs', 'file'],
  ['.emacs.d', 'folder'],
  ['.npmrc', 'file'],
  ['.pypirc', 'file'],
  ['.netrc', 'file'],
  ['.docker', 'folder'],
];


/**
 * A repository's folder (the `.git` folder, or the one a `.git` file names), its common folder
 * (`commondir`), the hooks folders `core.hooksPath` names and the files its configuration includes.
 */
function protectRepository(
  dotGit: string,
  home: string,
  environment: Record<string, string | undefined>,
  add: (path: string, kind: ProtectedPath['kind'], reason: string, watched?: boolean, except?: readonly string[]) => void,
): void {
  const folder = repositoryFolderOf(dotGit);
  const information = lstatEntry(dotGit);
  if (information?.isFile()) add(dotGit, 'file', 'it names the folder git reads the repository\'s hooks and settings from');
  if (!folder) return;
  const common = commonFolderOf(folder);
  const folders = common ? [folder, common] : [folder];
  for (const each of folders) {
    // Added by the link's name when .git is a link, so the link itself is protected too.
    const named = each === folder && information?.isSymbolicLink() ? dotGit : each;
    add(named, 'folder', 'git reads hooks and settings from a repository\'s folder; only its objects, refs, logs and index may change', true, repositoryDataEntries);
    for (const name of repositoryControlFolders) add(join(each, name), 'folder', 'git runs or reads what it holds');
    for (const name of repositoryControlFiles) add(join(each, name), 'file', 'git reads its settings, commands or other folders from it');
  }
  const configuration = repositoryConfiguration(dirname(dotGit), folders, environment, home);
  for (const file of configuration.includedFiles) add(file, 'file', 'git includes it in a repository\'s settings');
  for (const hooks of configuration.hooksFolders) add(hooks, 'folder', 'core.hooksPath names it: git runs the hooks in it');
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
 * `canonicalPath` for the many entries of one list, which lie in a few folders (the current
 * folder, the workspace, the home folder): each folder is made canonical once. A path that is not
 * a link is its canonical folder's entry of the same name, existing or not; a link is followed by
 * `canonicalPath` itself.
 */
function canonicalPaths(): { path(path: string): string; folder(path: string): string } {
  const folders = new Map<string, string>();
  const folder = (path: string): string => {
    let found = folders.get(path);
    if (found === undefined) {
      found = canonical(path);
      folders.set(path, found);
    }
    return found;
  };
  const canonical = (path: string): string => {
    const parent = dirname(path);
    if (parent === path || lstatEntry(path)?.isSymbolicLink()) return canonicalPath(path);
    return join(folder(parent), basename(path));
  };
  return { path: canonical, folder };
}
