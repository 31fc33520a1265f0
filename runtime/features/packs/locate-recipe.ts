/**
 * What a recipe argument names. An argument that names an existing file is that file; otherwise
 * `<package name>/<recipe name>` is looked up as a pack's recipe in the nearest node_modules; if
 * neither exists, the error says both what file and what pack it looked for.
 */
import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { UsageError } from '../../contract/errors.js';
import { didYouMean } from '../../contract/did-you-mean.js';
import { nodeModulesAbove } from '../mcp/launch-place.js';
import { findInstalledPack, installedPacks, packRecipes, splitPackRecipe } from './installed-packs.js';
import type { Pack } from '../../config/pack-manifest.js';

export interface LocatedRecipe {
  file: string;
  /** The pack the recipe was named through, when it was. */
  pack?: Pack;
}

export function locateRecipe(argument: string, cwd: string): LocatedRecipe {
  const path = resolve(cwd, argument);
  if (existsSync(path) && statSync(path).isFile()) return { file: path };
  const named = splitPackRecipe(argument);
  const fileNote = `no file ${path}`;
  const wholePack = named ? undefined : findInstalledPack(argument, cwd);
  if (wholePack) {
    const runs = packRecipes(wholePack).map((recipe) => `${wholePack.name}/${recipe.name}`);
    throw new UsageError(`${fileNote}; ${wholePack.name} is an installed pack: name one of its recipes: ${runs.join(', ') || 'it has none'}`);
  }
  if (!named) {
    throw new UsageError(`${fileNote}; and '${argument}' is not <package>/<recipe>, the form that names a pack's recipe (e.g. @acme/manus-travel/handbook)`);
  }
  const pack = findInstalledPack(named.pack, cwd);
  if (!pack) {
    const folders = nodeModulesAbove(resolve(cwd));
    const where = folders.length > 0 ? `in ${folders.join(', ')}` : `in any node_modules at or above ${resolve(cwd)}`;
    const installed = installedPacks(cwd).map((each) => each.name);
    throw new UsageError(
      `${fileNote}, and no pack '${named.pack}' is installed ${where}${didYouMean(named.pack, installed)}` +
        `; installed packs: ${installed.join(', ') || 'none'} (install one with npm install ${named.pack})`,
    );
  }
  const recipes = packRecipes(pack);
  const recipe = recipes.find((candidate) => candidate.name === named.recipe);
  if (!recipe) {
    const names = recipes.map((candidate) => candidate.name);
    throw new UsageError(
      `${fileNote}, and the pack ${pack.name} (${pack.folder}) has no recipe '${named.recipe}'${didYouMean(named.recipe, names)}; its recipes: ${names.join(', ') || 'none'}`,
    );
  }
  return { file: recipe.file, pack };
}
