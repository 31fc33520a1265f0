/**
 * What the build knows about the built-in plugins. The kernel imports no plugin: the build
 * generates the command bundle's entry with a manifest of every plugin in the package's plugins/
 * folder (the names each defines, and a loader for its compiled copy) and registers it here. Run
 * from source there is no bundle; the names come from the manifest the build wrote beside it, and
 * the plugins load from their files.
 */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { packageRoot } from '../../config/package-root.js';

export interface BuiltInPlugin {
  /** The names of the tools and context providers the plugin defines. */
  names: readonly string[];
  /** Loads the copy compiled into the bundle; without one, the plugin loads from its file. */
  load?: () => Promise<unknown>;
}

export interface BuiltInManifest {
  /** Keyed by the plugin's entry in plugins/: a family folder's name, or a file's name without its extension. */
  plugins: ReadonlyMap<string, BuiltInPlugin>;
  /** When the build made it: a plugin changed since then is loaded from its source. */
  builtAtMs: number;
}

/** Where the build writes the names, for reading and for runs from source. */
export const manifestFile = join('dist', 'bundle', 'plugin-manifest.json');

let registered: BuiltInManifest | undefined;

/** Called by the command's bundle with the plugins compiled into it. */
export function registerBuiltInPlugins(plugins: ReadonlyMap<string, BuiltInPlugin>): void {
  registered = { plugins, builtAtMs: statSync(fileURLToPath(import.meta.url)).mtimeMs };
}

/** The bundle's manifest, else the one written by the last build, else none (nothing is skipped). */
export function builtInManifest(): BuiltInManifest {
  registered ??= readManifestFile();
  return registered;
}

function readManifestFile(): BuiltInManifest {
  const file = join(packageRoot, manifestFile);
  try {
    const names = JSON.parse(readFileSync(file, 'utf8')) as Record<string, string[]>;
    return { plugins: new Map(Object.entries(names).map(([key, list]) => [key, { names: list }])), builtAtMs: statSync(file).mtimeMs };
  } catch {
    return { plugins: new Map(), builtAtMs: 0 };
  }
}
