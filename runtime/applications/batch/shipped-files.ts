/**
 * What a run definition takes from a folder when it walks one: it goes into Redis and onto every
 * worker, and the folders it walks (packs, npm packages) are often written by others.
 */
import { realpathSync } from 'node:fs';
import { isAbsolute, relative, sep } from 'node:path';

/**
 * What `npm pack` always leaves out of a package (the "files" section of npm's package.json docs,
 * https://docs.npmjs.com/cli/configuring-npm/package-json#files, as npm-packlist applies it),
 * with `.env` files, secrets by convention. No installed package holds any of them, so nothing a
 * run needs is lost; a linked package or a pack's folder may hold them, `.npmrc` with a token.
 */
const neverShippedNames = new Set(['.npmrc', '.git', '.svn', '.hg', 'CVS', '.DS_Store', 'npm-debug.log', '.lock-wscript', 'config.gypi', '.env']);
const neverShippedPatterns = [/^\._/, /^\..*\.swp$/, /^\.wafpickle-/, /\.orig$/, /^\.env\./];

/** Whether a file or folder with this name is left out wherever it is. */
export function isNeverShipped(name: string): boolean {
  return neverShippedNames.has(name) || neverShippedPatterns.some((pattern) => pattern.test(name));
}

/**
 * Whether `path`, followed through every link, is `realFolder` (a real path) or inside it. A link
 * that leads nowhere is inside nothing.
 */
export function leadsInside(path: string, realFolder: string): boolean {
  let real: string;
  try {
    real = realpathSync(path);
  } catch {
    return false;
  }
  const inside = relative(realFolder, real);
  return inside === '' || (inside !== '..' && !inside.startsWith(`..${sep}`) && !isAbsolute(inside));
}
