/**
 * The npm packages a batch's plugins need on a worker: the packages their files import and the
 * packs' declared dependencies, with everything those depend on. Each is found the way Node finds
 * it, from the folder of whatever imports it, and placed in the run definition where Node on the
 * worker, resolving from the shipped copy of that importer, finds the same package.
 */
import { existsSync, readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, extname, join, posix, relative, resolve, sep } from 'node:path';
import { UsageError } from '../../contract/errors.js';
import type { Pack } from '../../config/pack-manifest.js';
import { importedPackages, packageNameOf } from './imported-packages.js';
import { isNeverShipped, leadsInside } from './shipped-files.js';

/** What a definition ships of npm packages at most, uncompressed: every job carries it. */
export const dependencySizeLimit = 64 * 1024 * 1024;

export interface DependencyFile {
  /** Where the file goes in the definition, relative to its root, with forward slashes. */
  path: string;
  /** The file on this machine. */
  file: string;
}

/** A place packages are resolved from: a folder on disk, and where its copy is in the definition. */
interface Importer {
  realFolder: string;
  /** Relative to the definition's root with forward slashes; '' is the root. */
  definitionFolder: string;
}

interface PlacedPackage extends Importer {
  name: string;
  files: Array<DependencyFile & { size: number }>;
  size: number;
}

const codeExtensions = new Set(['.ts', '.mts', '.cts', '.js', '.mjs', '.cjs']);
const dependencyFields = ['dependencies', 'optionalDependencies', 'peerDependencies'] as const;
const packDependencyFields = ['dependencies', 'optionalDependencies'] as const;

/**
 * The files of every package the code files import or the packs declare, and of their
 * dependencies, placed for a definition rooted at `root`. A specifier that resolves to nothing is
 * skipped: it would fail here too, or it is not an import at all.
 */
export function pluginDependencyFiles(root: string, codeFiles: readonly string[], packs: readonly Pack[], sizeLimit = dependencySizeLimit): DependencyFile[] {
  const placed = new Map<string, PlacedPackage>();
  const pending: Array<{ name: string; importer: Importer }> = [];
  for (const file of codeFiles) {
    if (!codeExtensions.has(extname(file)) || /\.d\.[mc]?ts$/.test(file)) continue;
    const importer = { realFolder: realpathSync(dirname(file)), definitionFolder: definitionPath(root, dirname(resolve(file))) };
    for (const name of importedPackages(readFileSync(file, 'utf8'))) pending.push({ name, importer });
  }
  for (const pack of packs) {
    const importer = { realFolder: pack.realFolder, definitionFolder: definitionPath(root, pack.folder) };
    for (const name of declaredDependencies(pack.manifestFile, packDependencyFields)) pending.push({ name, importer });
  }
  for (let index = 0; index < pending.length; index += 1) {
    const found = place(pending[index].name, pending[index].importer, placed);
    if (found === undefined) continue;
    for (const name of declaredDependencies(join(found.realFolder, 'package.json'), dependencyFields)) pending.push({ name, importer: found });
  }
  const packages = [...placed.values()];
  const total = packages.reduce((sum, each) => sum + each.size, 0);
  if (total > sizeLimit) throw tooLarge(packages, total, sizeLimit);
  return packages.flatMap((each) => each.files.map(({ path, file }) => ({ path, file })));
}

/**
 * Finds `name` from the importer's folder on disk, as Node does, and gives it the slot in the
 * definition that the importer's copy looks in at the same rank: the same relative place for a
 * package under the root, the root's node_modules for one found above it (hoisted in a
 * monorepo). A slot nearer the importer holding another copy of the package would shadow it
 * there, so the package then goes into the importer's own node_modules, where Node looks first.
 */
function place(name: string, importer: Importer, placed: Map<string, PlacedPackage>): PlacedPackage | undefined {
  // A declared dependency is a package.json's key, written by whoever made the package: only a
  // package name, never a path, is looked for.
  if (packageNameOf(name) !== name) return undefined;
  const diskSlots = lookupFolders(importer.realFolder, join, dirname, basename);
  const rank = diskSlots.findIndex((slot) => isFolder(join(slot, name)));
  if (rank < 0) return undefined;
  const found = join(diskSlots[rank], name);
  // Not a package, whatever Node would make of it: a folder that only a link makes look like one
  // (to a home folder, say) ships nothing.
  if (!existsSync(join(found, 'package.json'))) return undefined;
  const realFolder = realpathSync(found);
  const definitionSlots = lookupFolders(importer.definitionFolder, posix.join, definitionParent, posix.basename);
  let target = Math.min(rank, definitionSlots.length - 1);
  for (let nearer = 0; nearer <= target; nearer += 1) {
    const existing = placed.get(posix.join(definitionSlots[nearer], name));
    if (existing === undefined) continue;
    if (existing.realFolder === realFolder) return undefined;
    if (nearer === 0) {
      throw new UsageError(`the run definition needs two copies of the package '${name}' at ${posix.join(definitionSlots[0], name)}: ${existing.realFolder} and ${realFolder}; install one version of it where the batch runs`);
    }
    target = 0;
    break;
  }
  const definitionFolder = posix.join(definitionSlots[target], name);
  const files = packageFiles(realFolder, definitionFolder);
  const entry: PlacedPackage = { name, realFolder, definitionFolder, files, size: files.reduce((sum, file) => sum + file.size, 0) };
  placed.set(definitionFolder, entry);
  return entry;
}

/** The node_modules folders Node looks in from `folder`, nearest first; a node_modules folder has none of its own. */
function lookupFolders(folder: string, joinPath: (...parts: string[]) => string, parentOf: (path: string) => string, nameOf: (path: string) => string): string[] {
  const slots: string[] = [];
  for (let current = folder; ; current = parentOf(current)) {
    if (nameOf(current) !== 'node_modules') slots.push(joinPath(current, 'node_modules'));
    if (parentOf(current) === current) return slots;
  }
}

/** The parent of a definition path; the root ('') is its own. */
function definitionParent(path: string): string {
  const parent = posix.dirname(path);
  return parent === '.' ? '' : parent;
}

function definitionPath(root: string, path: string): string {
  const inside = relative(root, path).split(sep).join('/');
  return inside === '.' ? '' : inside;
}

function declaredDependencies(manifestFile: string, fields: readonly string[]): string[] {
  let manifest: Record<string, unknown>;
  try {
    manifest = JSON.parse(readFileSync(manifestFile, 'utf8')) as Record<string, unknown>;
  } catch {
    // No package.json, or one Node could not read either: nothing declared.
    return [];
  }
  return fields.flatMap((field) => {
    const declared = manifest?.[field];
    return declared && typeof declared === 'object' ? Object.keys(declared) : [];
  });
}

/**
 * A package's files, its real contents where it is a link, at `definitionFolder`. Its own
 * dependencies (node_modules) are found and placed on their own. A link inside it is followed
 * only where it leads inside the package's own folder: elsewhere is not the package's.
 */
function packageFiles(realFolder: string, definitionFolder: string): Array<DependencyFile & { size: number }> {
  const files: Array<DependencyFile & { size: number }> = [];
  const visited = new Set<string>();
  const walk = (folder: string, inside: string) => {
    const real = realpathSync(folder);
    if (visited.has(real)) return;
    visited.add(real);
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      if (isNeverShipped(entry.name)) continue;
      const path = join(folder, entry.name);
      if (entry.isSymbolicLink() && !leadsInside(path, realFolder)) continue;
      const stats = entry.isSymbolicLink() ? statSync(path, { throwIfNoEntry: false }) : entry;
      if (stats === undefined) continue;
      if (stats.isDirectory()) {
        if (entry.name !== 'node_modules') walk(path, posix.join(inside, entry.name));
      } else if (stats.isFile()) {
        files.push({ path: posix.join(inside, entry.name), file: path, size: statSync(path).size });
      }
    }
  };
  walk(realFolder, definitionFolder);
  return files;
}

function isFolder(path: string): boolean {
  return statSync(path, { throwIfNoEntry: false })?.isDirectory() ?? false;
}

function tooLarge(packages: readonly PlacedPackage[], total: number, sizeLimit: number): UsageError {
  const bySize = new Map<string, number>();
  for (const each of packages) bySize.set(each.name, (bySize.get(each.name) ?? 0) + each.size);
  const largest = [...bySize].sort((first, second) => second[1] - first[1]).slice(0, 5);
  return new UsageError(
    `the npm packages the plugins import come to ${formatSize(total)} with their dependencies, over the ${formatSize(sizeLimit)} a queued batch ships: `
    + `${largest.map(([name, size]) => `${name} ${formatSize(size)}`).join(', ')}; trim the plugins' dependencies (a smaller package, or fewer) so each worker can take them with every job`,
  );
}

function formatSize(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
  if (bytes >= 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${bytes} bytes`;
}
