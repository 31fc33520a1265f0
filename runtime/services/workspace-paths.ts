/**
 * Workspace confinement for file tools. Every path a model supplies goes through
 * `resolveInWorkspace`, which resolves symbolic links before deciding, so a link cannot carry a
 * read or a write outside the workspace, and refuses writes to files that would let a run change
 * its own configuration, a repository's internals or a shell's start-up behaviour.
 */
import { lstatSync, readlinkSync, realpathSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { ManusError, ToolError } from '../contract/errors.js';
import type { ProtectedPathGuard } from '../contract/protected-path-guard.js';
import type { ToolContext } from '../contract/tool.js';

export type WorkspaceAccess = 'read' | 'write';

export type WorkspacePathErrorCode =
  | 'path_invalid'
  | 'path_outside_workspace'
  | 'path_protected'
  | 'path_unresolvable';

const workspacePathErrorMarker = 'manus.error.WorkspacePathError';
const workspacePathErrorSymbol = Symbol.for(workspacePathErrorMarker);

export class WorkspacePathError extends ToolError {
  private readonly [workspacePathErrorSymbol] = true;
  /** The path exactly as the caller gave it. */
  readonly requestedPath: string;

  constructor(code: WorkspacePathErrorCode, message: string, requestedPath: string) {
    super(message, code);
    this.requestedPath = requestedPath;
  }

  static isInstance(error: unknown): error is WorkspacePathError {
    return ManusError.hasMarker(error, workspacePathErrorMarker);
  }
}

/** Start-up files of common shells: writing one would run code in the next shell a person opens. */
export const shellStartupFiles: ReadonlySet<string> = new Set([
  '.bashrc',
  '.bash_profile',
  '.bash_login',
  '.bash_logout',
  '.profile',
  '.zshrc',
  '.zshenv',
  '.zprofile',
  '.zlogin',
  '.zlogout',
  '.inputrc',
  '.cshrc',
  '.tcshrc',
  '.login',
  '.logout',
  '.kshrc',
  '.mkshrc',
]);

/** Entries at the workspace root that hold the runtime's own configuration and plugins. */
const runtimeConfigurationEntries = new Set(['agents.yaml', '.manus', 'plugins']);

/** Matches the kernel's limit on link hops, so a cycle of links ends with an error. */
const maximumSymbolicLinkHops = 40;

/**
 * Resolves `requestedPath` (relative to the workspace, or absolute inside it) to an absolute real
 * path inside the workspace, or throws a WorkspacePathError naming the rule the path breaks.
 * The target need not exist: the longest existing prefix is resolved and the rest appended.
 */
export function resolveInWorkspace(
  workspace: string,
  requestedPath: string,
  options: { access: WorkspaceAccess; protectedPaths?: ProtectedPathGuard },
): string {
  if (requestedPath.trim() === '') {
    throw new WorkspacePathError('path_invalid', 'The path is empty.', requestedPath);
  }
  if (requestedPath.includes('\0')) {
    throw new WorkspacePathError('path_invalid', `The path "${requestedPath}" contains a NUL byte.`, requestedPath);
  }
  const workspaceGiven = resolve(workspace);
  const workspaceReal = realpathSync(workspaceGiven);
  const lexicalPath = rebase(resolve(workspaceReal, requestedPath), workspaceGiven, workspaceReal);

  if (!isInside(workspaceReal, lexicalPath)) {
    const rule = isAbsolute(requestedPath)
      ? 'absolute paths must lie inside the workspace'
      : 'a path may not climb out of the workspace with ".."';
    throw new WorkspacePathError(
      'path_outside_workspace',
      `The path "${requestedPath}" is outside the workspace (${workspaceReal}): ${rule}.`,
      requestedPath,
    );
  }

  const realPath = resolveThroughLinks(lexicalPath, requestedPath);
  if (!isInside(workspaceReal, realPath)) {
    throw new WorkspacePathError(
      'path_outside_workspace',
      `The path "${requestedPath}" leads outside the workspace through a symbolic link (to ${realPath}).`,
      requestedPath,
    );
  }

  if (options.access === 'write') {
    for (const candidate of [lexicalPath, realPath]) {
      const reason = protectionReason(relative(workspaceReal, candidate));
      if (reason) {
        throw new WorkspacePathError(
          'path_protected',
          `Writing to "${requestedPath}" is not allowed: ${reason}.`,
          requestedPath,
        );
      }
      const protection = options.protectedPaths?.protectionOf(candidate);
      if (protection) {
        throw new WorkspacePathError(
          'path_protected',
          `Writing to "${requestedPath}" is not allowed: it is a protected path (${protection.reason}).`,
          requestedPath,
        );
      }
    }
    const linked = options.protectedPaths?.hardLinkedProtection(realPath);
    if (linked) {
      throw new WorkspacePathError(
        'path_protected',
        `Writing to "${requestedPath}" is not allowed: it is a hard link to a protected path (${linked.reason}).`,
        requestedPath,
      );
    }
  }
  return realPath;
}

/**
 * What file tools call for every path the model gives: confinement to the run's workspace and,
 * for writes, the run's protected paths wherever they lie.
 */
export function resolveToolPath(
  context: Pick<ToolContext, 'workspace' | 'protectedPaths'>,
  requestedPath: string,
  access: WorkspaceAccess,
): string {
  return resolveInWorkspace(context.workspace, requestedPath, { access, protectedPaths: context.protectedPaths });
}

/**
 * Lists the workspace's regular files as relative paths with "/" separators, sorted. Skips `.git`
 * folders and the runtime's `.manus` folder at the root, and does not follow symbolic links.
 */
export async function listWorkspaceFiles(workspace: string): Promise<string[]> {
  const root = realpathSync(workspace);
  const files: string[] = [];
  const pending: string[] = [''];
  while (pending.length > 0) {
    const folder = pending.pop() as string;
    const entries = await readdir(join(root, folder), { withFileTypes: true });
    for (const entry of entries) {
      const relativePath = folder === '' ? entry.name : `${folder}/${entry.name}`;
      if (entry.isDirectory()) {
        if (entry.name === '.git' || relativePath === '.manus') continue;
        pending.push(relativePath);
      } else if (entry.isFile()) {
        files.push(relativePath);
      }
    }
  }
  return files.sort();
}

/** True when `candidate` is `root` or lies below it. */
export function isInside(root: string, candidate: string): boolean {
  if (candidate === root) return true;
  const prefix = root.endsWith(sep) ? root : root + sep;
  return candidate.startsWith(prefix);
}

/** Lets an absolute path written with the workspace's unresolved name count as inside it. */
function rebase(path: string, workspaceGiven: string, workspaceReal: string): string {
  if (workspaceGiven === workspaceReal || isInside(workspaceReal, path) || !isInside(workspaceGiven, path)) return path;
  return join(workspaceReal, relative(workspaceGiven, path));
}

/**
 * The real path of the longest existing prefix with the missing rest appended. A dangling link is
 * followed to where it points, so creating a file through it is judged by its real destination.
 */
function resolveThroughLinks(path: string, requestedPath: string, hops = 0): string {
  const missing: string[] = [];
  let existing = path;
  for (;;) {
    try {
      return join(realpathSync(existing), ...missing.reverse());
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR' && code !== 'ELOOP') {
        throw new WorkspacePathError(
          'path_unresolvable',
          `The path "${requestedPath}" cannot be resolved: ${(error as Error).message}.`,
          requestedPath,
        );
      }
    }
    const linkTarget = readLinkIfAny(existing);
    if (linkTarget !== undefined) {
      if (hops >= maximumSymbolicLinkHops) {
        throw new WorkspacePathError(
          'path_unresolvable',
          `The path "${requestedPath}" passes through too many symbolic links.`,
          requestedPath,
        );
      }
      const destination = resolve(dirname(existing), linkTarget);
      return resolveThroughLinks(join(destination, ...missing.reverse()), requestedPath, hops + 1);
    }
    const parent = dirname(existing);
    if (parent === existing) return join(existing, ...missing.reverse());
    missing.push(basename(existing));
    existing = parent;
  }
}

function readLinkIfAny(path: string): string | undefined {
  try {
    return lstatSync(path).isSymbolicLink() ? readlinkSync(path) : undefined;
  } catch {
    return undefined;
  }
}

/** Why a workspace-relative path may not be written, or undefined when it may. */
function protectionReason(relativePath: string): string | undefined {
  if (relativePath === '') return undefined;
  // Compared in lower case because case-insensitive file systems treat ".GIT" as ".git".
  const segments = relativePath.split(sep).map((segment) => segment.toLowerCase());
  if (segments.includes('.git')) return 'files inside a .git folder belong to the repository';
  const name = segments[segments.length - 1];
  if (shellStartupFiles.has(name)) return `${name} is a shell start-up file`;
  if (segments.slice(-3).join('/') === '.config/fish/config.fish') return 'config.fish is a shell start-up file';
  if (runtimeConfigurationEntries.has(segments[0])) {
    return `${segments[0]} at the workspace root holds the runtime's own configuration`;
  }
  return undefined;
}
