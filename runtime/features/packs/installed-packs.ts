/**
 * Where packs are found: installed in the `node_modules` folders at and above a folder, nearest
 * first, as Node resolves packages (a nearer one hides a farther one of the same name); and the
 * pack a recipe file belongs to, found from the file itself.
 */
import { existsSync, readdirSync } from 'node:fs';
import { basename, extname, join, resolve, sep } from 'node:path';
import { nodeModulesAbove } from '../mcp/launch-place.js';
import { isFolder, readPack, type Pack } from '../../config/pack-manifest.js';

/** Every pack installed where `cwd` resolves packages; each name once, the nearest. */
export function installedPacks(cwd: string): Pack[] {
  const found = new Map<string, Pack>();
  for (const folder of nodeModulesAbove(resolve(cwd))) {
    for (const packageFolder of packageFoldersIn(folder)) {
      const pack = readPack(packageFolder);
      if (pack && !found.has(pack.name)) found.set(pack.name, pack);
    }
  }
  return [...found.values()];
}

/** The installed pack named `name`, as `require` would find the package from `cwd`. */
export function findInstalledPack(name: string, cwd: string): Pack | undefined {
  if (!isPackageName(name)) return undefined;
  for (const folder of nodeModulesAbove(resolve(cwd))) {
    const candidate = join(folder, ...name.split('/'));
    if (existsSync(join(candidate, 'package.json'))) return readPack(candidate);
  }
  return undefined;
}

export { packOfAgentsFile, packOfFile } from '../../config/pack-manifest.js';

export interface PackRecipe {
  /** The file's name without its extension: what `manus run <pack>/<name>` takes. */
  name: string;
  file: string;
}

/** The recipe files of a pack, sorted by name; those in sub-folders are named with their path. */
export function packRecipes(pack: Pack): PackRecipe[] {
  if (!isFolder(pack.recipesFolder)) return [];
  return readdirSync(pack.recipesFolder, { recursive: true, encoding: 'utf8' })
    .filter((path) => /\.ya?ml$/.test(path) && basename(path) !== 'agents.yaml')
    .map((path) => ({ name: path.slice(0, -extname(path).length).split(sep).join('/'), file: join(pack.recipesFolder, path) }))
    .sort((left, right) => (left.name < right.name ? -1 : left.name > right.name ? 1 : 0));
}

/** `@scope/name/recipe` or `name/recipe` as the package and the recipe in it; undefined otherwise. */
export function splitPackRecipe(argument: string): { pack: string; recipe: string } | undefined {
  const parts = argument.split('/');
  const packParts = argument.startsWith('@') ? 2 : 1;
  if (parts.length <= packParts || parts.some((part) => part === '' || part === '.' || part === '..')) return undefined;
  const pack = parts.slice(0, packParts).join('/');
  return isPackageName(pack) ? { pack, recipe: parts.slice(packParts).join('/').replace(/\.ya?ml$/, '') } : undefined;
}

/** An argument that may name a pack: a package name that does not end like a recipe or plugin file. */
export function mayNamePack(argument: string): boolean {
  return isPackageName(argument) && !/\.(ya?ml|[mc]?[jt]s|json)$/.test(argument);
}

/** An npm package name, scoped or not (lower case, no spaces). */
export function isPackageName(name: string): boolean {
  return /^(@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*$/.test(name);
}

/** The packages of a node_modules folder: each `name` folder and each `@scope/name` one. */
function packageFoldersIn(folder: string): string[] {
  const folders: string[] = [];
  for (const name of readdirSync(folder).sort()) {
    if (name.startsWith('.')) continue;
    const path = join(folder, name);
    if (name.startsWith('@')) {
      if (isFolder(path)) for (const scoped of readdirSync(path).sort()) folders.push(join(path, scoped));
    } else {
      folders.push(path);
    }
  }
  return folders;
}
