/**
 * What a batch's run *is*, pinned by content hash: the recipe, the prompt files it and its agents
 * read, the plugin folders it loads (the project's and the recipe's), the packs it uses and the
 * agents.yaml files beside it, and the npm packages those plugins import with their dependencies
 * (./plugin-dependencies.ts). Each worker materialises the same files into a cache folder named
 * by the hash and checks the hash before it runs anything, so every worker runs the same thing.
 * The package's own agents.yaml and plugins are the worker's: they come with the runtime it runs.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { packageRoot } from '../../config/package-root.js';
import { pluginFolderCandidates, type RunPlan } from '../../runs/recipe/resolve-recipe.js';
import { ManusError, UsageError } from '../../contract/errors.js';
import { promptFilesOf } from '../../runs/protected-path-list.js';
import { isInside } from '../../services/workspace-paths.js';
import { pluginDependencyFiles } from './plugin-dependencies.js';
import { isNeverShipped, leadsInside } from './shipped-files.js';

export interface RunDefinitionFile {
  /** Relative to the folder the batch runs in, with forward slashes. */
  path: string;
  /** The file's bytes, base64. */
  content: string;
}

export interface RunDefinition {
  /** sha256 over the files' paths and contents. */
  hash: string;
  /** The recipe's path among the files. */
  recipe: string;
  files: RunDefinitionFile[];
}

const definitionErrorMarker = 'manus.error.RunDefinitionError';
const definitionErrorSymbol = Symbol.for(definitionErrorMarker);

/** A definition that does not match its hash, or cannot be materialised. */
export class RunDefinitionError extends ManusError {
  private readonly [definitionErrorSymbol] = true;

  constructor(message: string) {
    super('definition_invalid', message);
  }

  static isInstance(error: unknown): error is RunDefinitionError {
    return ManusError.hasMarker(error, definitionErrorMarker);
  }
}

export interface RunDefinitionOptions {
  /**
   * Whether the definition is shipped to workers (true by default). One that goes nowhere (a batch
   * on this machine) is only hashed, to notice changes: it reads none of the npm packages the
   * plugins import, and the files the run reads may lie anywhere, as they may for `manus run`.
   */
  shipped?: boolean;
  /** The most the npm packages the plugins need may ship, in bytes; `dependencySizeLimit` by default. */
  dependencySizeLimit?: number;
}

export function collectRunDefinition(plan: RunPlan, cwd: string, options: RunDefinitionOptions = {}): RunDefinition {
  const root = resolve(cwd);
  const shipped = options.shipped !== false;
  /** `path`, when it leads inside `boundary` or nothing is shipped; otherwise the batch stops. */
  const insideOrRefused = (path: string, boundary: string): string => (shipped ? insideBoundaryOrRefused(path, boundary) : path);
  const files = new Set<string>();
  const builtIn = join(packageRoot, 'plugins');
  files.add(plan.recipe.file);
  for (const file of promptFilesOf(plan)) files.add(file);
  for (const file of plan.agentsConfig.files) if (resolve(file) !== join(packageRoot, 'agents.yaml')) files.add(file);
  // A pack the recipe belongs to or names travels with its manifest, recipes, agents file and
  // plugins, where the worker's run looks for them; its dependencies travel with the plugins'.
  // What a link in a pack leads to is shipped only inside the pack; in the project's own plugin
  // folders, only inside the folder the batch runs in.
  const packs = plan.packs ?? [];
  const realRoot = realpathSync(root);
  const walked = pluginFolderCandidates(root, plan.recipe).map((folder) => ({ folder, boundary: realRoot }));
  for (const pack of packs) {
    for (const file of [pack.manifestFile, pack.agentsFile]) if (existsSync(file)) files.add(insideOrRefused(file, pack.realFolder));
    for (const folder of [pack.recipesFolder, pack.pluginsFolder]) walked.push({ folder, boundary: pack.realFolder });
  }
  const codeFiles: string[] = [];
  for (const { folder, boundary } of walked) {
    if (resolve(folder) === builtIn || !existsSync(folder)) continue;
    for (const file of folderFiles(insideOrRefused(folder, boundary), shipped ? boundary : undefined)) {
      files.add(file);
      codeFiles.push(file);
    }
  }
  const byPath = new Map<string, string>();
  for (const file of files) {
    // A pack's recipe and prompts, linked, lead only inside the pack; the project's inside its folder.
    const owner = packs.find((pack) => isInside(pack.folder, resolve(file)));
    insideOrRefused(file, owner?.realFolder ?? realRoot);
    const path = relative(root, resolve(file));
    if (shipped && (path.startsWith('..') || isAbsolute(path))) {
      throw new UsageError(`${file} is outside the folder the batch runs in (${root}); a queued batch ships only the files under it, so run it from a folder that holds the recipe, its prompts and plugins`);
    }
    byPath.set(path.split(sep).join('/'), file);
  }
  // A pack a plugin also imports is shipped twice over at the same paths: once is enough.
  const dependencies = shipped ? pluginDependencyFiles(root, codeFiles, packs, options.dependencySizeLimit) : [];
  for (const dependency of dependencies) {
    if (!byPath.has(dependency.path)) byPath.set(dependency.path, dependency.file);
  }
  const entries = [...byPath].map(([path, file]) => ({ path, content: readFileSync(file).toString('base64') }))
    .sort((left, right) => left.path.localeCompare(right.path));
  return { hash: definitionHash(entries), recipe: relative(root, resolve(plan.recipe.file)).split(sep).join('/'), files: entries };
}

export function definitionHash(files: readonly RunDefinitionFile[]): string {
  const hash = createHash('sha256');
  for (const file of [...files].sort((left, right) => left.path.localeCompare(right.path))) {
    hash.update(`${file.path}\0${createHash('sha256').update(Buffer.from(file.content, 'base64')).digest('hex')}\n`);
  }
  return `sha256:${hash.digest('hex')}`;
}

/**
 * Writes the definition into `cacheDirectory/<hash>/` once and returns that folder. The hash is
 * checked first: a definition that does not match it is refused, whoever stored it.
 */
export function materialiseRunDefinition(definition: RunDefinition, expectedHash: string, cacheDirectory: string): string {
  const actual = definitionHash(definition.files);
  if (actual !== expectedHash || definition.hash !== expectedHash) {
    throw new RunDefinitionError(`the run definition does not match its hash: expected ${expectedHash}, got ${actual}; it was not run`);
  }
  const folder = join(cacheDirectory, expectedHash.replace(/^sha256:/, ''));
  if (existsSync(join(folder, '.complete'))) return folder;
  const temporary = `${folder}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    for (const file of definition.files) {
      const target = resolve(temporary, file.path);
      if (!target.startsWith(temporary + sep)) throw new RunDefinitionError(`the run definition names a path outside its folder: ${file.path}`);
      mkdirSync(dirname(target), { recursive: true });
      writeFileSync(target, Buffer.from(file.content, 'base64'));
    }
    writeFileSync(join(temporary, '.complete'), `${expectedHash}\n`);
    mkdirSync(dirname(folder), { recursive: true });
    // Another worker on this machine may have finished it first, even between the look and the
    // rename; its copy is the same.
    if (existsSync(folder)) rmSync(temporary, { recursive: true, force: true });
    else renameSync(temporary, folder);
  } catch (error) {
    rmSync(temporary, { recursive: true, force: true });
    if (existsSync(join(folder, '.complete'))) return folder;
    throw error;
  }
  return folder;
}

/** `path`, when it leads inside `boundary`; a folder or file the run needs that leads outside it stops the batch. */
function insideBoundaryOrRefused(path: string, boundary: string): string {
  if (!leadsInside(path, boundary)) {
    const target = existsSync(path) ? realpathSync(path) : 'nothing';
    throw new UsageError(`${path} leads outside ${boundary} (to ${target}); a queued batch ships a pack's files only from inside the pack and the project's own only from inside the folder the batch runs in`);
  }
  return path;
}

/**
 * The files under `folder`, but none in node_modules (only the packages the plugins import
 * travel, with their dependencies) and none npm never packs. A linked file is taken only where
 * it leads inside `boundary`, a real folder, when there is one; a linked folder is not walked.
 */
function folderFiles(folder: string, boundary: string | undefined): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    if (isNeverShipped(entry.name)) continue;
    const path = join(folder, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules') found.push(...folderFiles(path, boundary));
    } else if (entry.isFile() || (entry.isSymbolicLink() && (boundary === undefined || leadsInside(path, boundary)) && existsSync(path) && statSync(path).isFile())) found.push(path);
  }
  return found;
}
