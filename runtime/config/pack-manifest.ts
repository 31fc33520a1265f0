/**
 * A pack: a folder, or an installed npm package, whose package.json has a `"manus"` field naming
 * its parts. Its recipes see its agents and plugins, and the built-ins. A pack is written by
 * someone else: it is read, never trusted to loosen anything.
 */
import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import type { Diagnostic } from '../contract/errors.js';
import { didYouMean } from '../contract/did-you-mean.js';

export interface Pack {
  /** The package name, scoped or not. */
  name: string;
  version?: string;
  description?: string;
  /** The pack's folder as found (in node_modules it may be a link); `realFolder` is where it lives. */
  folder: string;
  realFolder: string;
  manifestFile: string;
  recipesFolder: string;
  agentsFile: string;
  pluginsFolder: string;
}

/** The parts a `"manus"` field may name, with their defaults. */
export const packPartDefaults = { recipes: 'recipes', agents: 'agents.yaml', plugins: 'plugins' } as const;

type PackPart = keyof typeof packPartDefaults;

/** The folder's package.json, when it has a `"manus"` field: undefined when it has none. */
export function readPack(folder: string, diagnostics: Diagnostic[] = []): Pack | undefined {
  const manifestFile = join(folder, 'package.json');
  let text: string;
  try {
    text = readFileSync(manifestFile, 'utf8');
  } catch {
    return undefined;
  }
  // Finding packs reads every installed package's manifest; most are not packs, and are not parsed.
  if (!text.includes('"manus"')) return undefined;
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    diagnostics.push({ severity: 'error', message: `package.json is not valid JSON: ${(error as Error).message}`, location: { file: manifestFile } });
    return undefined;
  }
  if (!isRecord(data) || data.manus === undefined) return undefined;
  const error = (message: string) => diagnostics.push({ severity: 'error', message, location: { file: manifestFile } });
  if (typeof data.name !== 'string' || data.name === '') error('a pack\'s package.json needs a "name": the pack is known by it (manus run <name>/<recipe>)');
  const parts: Record<PackPart, string> = { ...packPartDefaults };
  if (data.manus === true) {
    // `"manus": true` takes every default.
  } else if (!isRecord(data.manus)) {
    error(`"manus" names the pack's parts: an object such as ${JSON.stringify(packPartDefaults)}, or true for these defaults`);
  } else {
    for (const [key, value] of Object.entries(data.manus)) {
      if (!(key in packPartDefaults)) {
        error(`"manus" has an unknown key '${key}'${didYouMean(key, Object.keys(packPartDefaults))}; it may name ${Object.keys(packPartDefaults).join(', ')}`);
      } else if (typeof value !== 'string' || value === '' || value.split(/[\\/]/).includes('..') || value.startsWith('/')) {
        error(`"manus".${key} must be a path inside the pack, such as "${packPartDefaults[key as PackPart]}"`);
      } else {
        parts[key as PackPart] = value;
      }
    }
  }
  const realFolder = realpathSync(folder);
  return {
    name: typeof data.name === 'string' ? data.name : folder,
    version: typeof data.version === 'string' ? data.version : undefined,
    description: typeof data.description === 'string' ? data.description : undefined,
    folder: resolve(folder),
    realFolder,
    manifestFile,
    recipesFolder: join(resolve(folder), parts.recipes),
    agentsFile: join(resolve(folder), parts.agents),
    pluginsFolder: join(resolve(folder), parts.plugins),
  };
}

/** A pack's parts that are missing or of the wrong kind; the agents file and plugins folder may be left out. */
export function packPartProblems(pack: Pack): Diagnostic[] {
  const problems: Diagnostic[] = [];
  const location = { file: pack.manifestFile };
  if (!isFolder(pack.recipesFolder)) problems.push({ severity: 'error', message: `the pack's recipes folder ${pack.recipesFolder} is missing`, location });
  if (existsSync(pack.pluginsFolder) && !isFolder(pack.pluginsFolder)) problems.push({ severity: 'error', message: `the pack's plugins ${pack.pluginsFolder} is not a folder`, location });
  if (existsSync(pack.agentsFile) && isFolder(pack.agentsFile)) problems.push({ severity: 'error', message: `the pack's agents file ${pack.agentsFile} is a folder`, location });
  return problems;
}

export function isFolder(path: string): boolean {
  return statSync(path, { throwIfNoEntry: false })?.isDirectory() ?? false;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return !!value && typeof value === 'object' && !Array.isArray(value);
}

/**
 * The pack a recipe file belongs to: the nearest folder above it with a package.json, when that
 * has a `"manus"` field and the file is in its recipes folder.
 */
export function packOfFile(file: string): Pack | undefined {
  for (let folder = dirname(resolve(file)); ; folder = dirname(folder)) {
    if (existsSync(join(folder, 'package.json'))) {
      const pack = readPack(folder);
      if (!pack) return undefined;
      const inside = relative(pack.recipesFolder, resolve(file));
      return inside.startsWith('..') || inside.startsWith(sep) ? undefined : pack;
    }
    if (dirname(folder) === folder) return undefined;
  }
}

/** The pack whose `"manus"` field names this agents file, found in the folders above it. */
export function packOfAgentsFile(file: string): Pack | undefined {
  for (let folder = dirname(resolve(file)); ; folder = dirname(folder)) {
    if (existsSync(join(folder, 'package.json'))) {
      const pack = readPack(folder);
      return pack && pack.agentsFile === resolve(file) ? pack : undefined;
    }
    if (dirname(folder) === folder) return undefined;
  }
}
