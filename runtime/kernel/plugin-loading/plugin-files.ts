/** Which files of a plugin folder are plugins: read by the loader and by the scan that runs none of them. */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { extname, join } from 'node:path';

const pluginExtensions = new Set(['.ts', '.mts', '.js', '.mjs']);
export const indexFileNames = ['index.ts', 'index.mts', 'index.js', 'index.mjs'];

/** The plugins of a folder: its plugin files, and the `index` file of each sub-folder that has one. */
export function pluginFilesIn(folder: string): string[] {
  const files: string[] = [];
  // Sorted by code unit, not by locale: a locale comparison would load ICU's collation data at every start.
  for (const name of readdirSync(folder).sort()) {
    const path = join(folder, name);
    if (isPluginFile(name) && !isDirectory(path)) files.push(path);
    else if (isDirectory(path)) {
      const index = indexFileNames.map((name) => join(path, name)).find((candidate) => existsSync(candidate));
      if (index) files.push(index);
    }
  }
  return files;
}

export function isPluginFile(name: string): boolean {
  return pluginExtensions.has(extname(name)) && !name.endsWith('.d.ts') && !/\.test\.[mc]?[jt]s$/.test(name);
}

function isDirectory(path: string): boolean {
  return statSync(path, { throwIfNoEntry: false })?.isDirectory() ?? false;
}
