/**
 * What a plugin folder holds, read without running any of it: each plugin's files with their
 * sha256 hashes, and the names its source declares (`name: '...'`). Importing a plugin runs its
 * code, so `manus inspect` and `manus packs` read the files instead; a name the code builds at run
 * time is not seen, which the listing says.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, extname, join, relative, sep } from 'node:path';
import { pluginFilesIn } from './plugin-files.js';

export interface ScannedPlugin {
  /** The plugin's entry: its file, or its folder's index file. */
  entry: string;
  /** Every file the plugin is made of (a family folder's, recursively), with its sha256. */
  files: Array<{ path: string; sha256: string; bytes: number }>;
  /** The names its source declares, in order. */
  names: string[];
}

export function scanPluginFolder(folder: string): ScannedPlugin[] {
  return pluginFilesIn(folder).map((entry) => {
    const family = dirname(entry) !== folder;
    const files = family ? filesOf(dirname(entry)) : [entry];
    const names = files.filter((file) => /\.[mc]?[jt]s$/.test(file)).flatMap((file) => declaredNames(readFileSync(file, 'utf8')));
    return { entry, files: files.map(hashFile), names: [...new Set(names)] };
  });
}

export function hashFile(path: string): { path: string; sha256: string; bytes: number } {
  const content = readFileSync(path);
  return { path, sha256: createHash('sha256').update(content).digest('hex'), bytes: content.length };
}

/** `name: 'weather'` of defineTool and of context providers; `kind: '...'` of step kinds. */
function declaredNames(text: string): string[] {
  return [...text.matchAll(/\b(?:name|kind)\s*:\s*(['"`])([A-Za-z0-9_.:-]+)\1/g)].map((match) => match[2]);
}

function filesOf(folder: string): string[] {
  return readdirSync(folder, { recursive: true, encoding: 'utf8' })
    .filter((path) => !path.split(sep).includes('node_modules'))
    .map((path) => join(folder, path))
    .filter((path) => statSync(path).isFile())
    .sort();
}

/** A path for listings: relative to `base` when inside it. */
export function shownPath(path: string, base: string): string {
  const inside = relative(base, path);
  return inside === '' || inside.startsWith('..') ? path : inside;
}

export function pluginLabel(plugin: ScannedPlugin): string {
  return basename(plugin.entry, extname(plugin.entry)) === 'index' ? basename(dirname(plugin.entry)) : basename(plugin.entry);
}
