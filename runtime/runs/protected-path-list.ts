/**
 * Which paths a run protects, found from its plan: plugin folders, agents.yaml files, the recipe
 * and its prompt files, packs, the runs folder, git's hooks and config, `.mcp.json`, shell
 * start-up files and the user's manus configuration. services/protected-paths/ guards them.
 */
import { existsSync, lstatSync, readlinkSync, realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, join, resolve, sep } from 'node:path';
import type { Pack } from '../config/pack-manifest.js';
import type { RunPlan } from '../config/run-plan.js';
import { nodeModulesAbove } from '../features/mcp/launch-place.js';
import { installedPacks } from '../features/packs/installed-packs.js';
import type { ProtectedPath } from '../contract/protected-path-guard.js';
import { shellStartupFiles } from '../services/workspace-paths.js';
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
