/**
 * Workspace confinement rules. `resolveInWorkspace` names a place by a checked path string, for
 * uses where the path is handed on rather than opened by the runtime (the folder a sandboxed
 * command starts in). Files the runtime itself reads or writes go through WorkspaceFiles
 * (workspace-files.ts), which never opens a checked string again. The rules on which files would
 * let a run change its own configuration, a repository's internals or a shell's start-up
 * behaviour are shared by both.
 */
import { lstatSync, readlinkSync, realpathSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { ManusError, ToolError } from '../contract/errors.js';
import type { ProtectedPathGuard } from '../contract/protected-path-guard.js';
import { OpenFolder } from './open-folder.js';

export type WorkspaceAccess = 'read' | 'write';

export type WorkspacePathErrorCode =
  | 'path_invalid'
  | 'path_hard_linked'
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

/** Files and folders direnv and editors act on in the folder that holds them, wherever it lies. */
export const editorControlNames: ReadonlySet<string> = new Set(['.envrc', '.vscode', '.idea', '.devcontainer']);

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
      const reason = workspaceProtectionReason(relative(workspaceReal, candidate));
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
 * Lists the workspace's regular files as relative paths with "/" separators, sorted. Skips `.git`
 * folders and the runtime's `.manus` folder at the root, and does not follow symbolic links: each
 * folder is opened through the one above it, so one swapped for a link meanwhile is not entered.
 */
export async function listWorkspaceFiles(workspace: string): Promise<string[]> {
  const files: string[] = [];
  const visit = async (folder: OpenFolder, path: string): Promise<void> => {
    for (const entry of await folder.entries()) {
      const relativePath = path === '' ? entry.name : `${path}/${entry.name}`;
      if (entry.isDirectory()) {
        if (entry.name === '.git' || relativePath === '.manus') continue;
        const subfolder = await folder.openFolder(entry.name).catch(() => undefined);
        if (!subfolder) continue;
        try {
          await visit(subfolder, relativePath);
        } finally {
          await subfolder.close();
        }
      } else if (entry.isFile()) {
        files.push(relativePath);
      }
    }
  };
  const root = await OpenFolder.open(realpathSync(workspace));
  try {
    await visit(root, '');
  } finally {
    await root.close();
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
export function workspaceProtectionReason(relativePath: string): string | undefined {
  if (relativePath === '') return undefined;
  // Compared in lower case because case-insensitive file systems treat ".GIT" as ".git".
  const segments = relativePath.split(sep).map((segment) => segment.toLowerCase());
  if (segments.includes('.git')) return 'files inside a .git folder belong to the repository';
  const editorEntry = segments.find((segment) => editorControlNames.has(segment));
  if (editorEntry) return `direnv or an editor runs what ${editorEntry} names when the user enters or opens its folder`;
  const name = segments[segments.length - 1];
  if (shellStartupFiles.has(name)) return `${name} is a shell start-up file`;
  if (segments.slice(-3).join('/') === '.config/fish/config.fish') return 'config.fish is a shell start-up file';
  if (runtimeConfigurationEntries.has(segments[0])) {
    return `${segments[0]} at the workspace root holds the runtime's own configuration`;
  }
  return undefined;
}
