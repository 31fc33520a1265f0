/**
 * The workspace's files as tools reach them: every operation opens the workspace folder and walks
 * the path one component at a time, each opened relative to the folder before it (see
 * OpenFolder), then reads, writes or lists through what it opened. A checked path is never
 * resolved again as a string, so a folder the agent's background process swaps for a link in the
 * middle of an operation is met as a link, not followed out of the workspace.
 *
 * Links are followed the way openat2's RESOLVE_BENEATH does: a link met on the way is read, its
 * target resolved against the components walked so far, and the walk restarts from the open
 * workspace folder; a target outside the workspace is refused. Writes refuse protected paths,
 * checked both on the path walked and on where the kernel says the opened folder now is, and
 * refuse files with other hard links, which may be files outside the workspace or protected ones.
 */
import { constants, readFileSync, realpathSync, type Stats } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { ToolError } from '../contract/errors.js';
import { OpenFolder } from './open-folder.js';
import type { ProtectedPathGuard } from '../contract/protected-path-guard.js';
import { isInside, WorkspacePathError, workspaceProtectionReason } from './workspace-paths.js';

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_NONBLOCK } = constants;

import type {
  WorkspaceEntryInformation,
  WorkspaceEntryKind,
  WorkspaceFileData,
  WorkspaceFiles as WorkspaceFileOperations,
  WorkspaceFolder as WorkspaceFolderOperations,
  WorkspaceFolderEntry,
  WorkspaceReadOptions,
  WorkspaceWriteOptions,
} from '../contract/workspace-files.js';

export type { WorkspaceEntryInformation, WorkspaceEntryKind, WorkspaceFileData, WorkspaceFolderEntry, WorkspaceReadOptions, WorkspaceWriteOptions };

/** As the kernel's limit on link hops, so a cycle of links ends with an error. */
const maximumLinkHops = 40;

/** A folder of the workspace held open; names given to it are single entries of it. */
export class WorkspaceFolder implements WorkspaceFolderOperations {
  constructor(
    private readonly opened: OpenFolder,
    /** Workspace-relative path with "/" separators; "." for the workspace itself. */
    readonly path: string,
  ) {}

  /** The folder's entries, each looked at without following links. */
  async list(): Promise<WorkspaceFolderEntry[]> {
    const listed: WorkspaceFolderEntry[] = [];
    for (const entry of await this.opened.entries().catch((error) => { throw fileError(error, this.path); })) {
      const information = await this.opened.entryStatus(entry.name).catch(() => undefined);
      // Gone since the folder was read: a command of the agent's is changing it.
      if (!information) continue;
      const kind = kindOf(information);
      const linkTarget = kind === 'link' ? await this.opened.readLink(entry.name).catch(() => '?') : undefined;
      listed.push({ name: entry.name, kind, size: information.size, ...(linkTarget === undefined ? {} : { linkTarget }) });
    }
    return listed;
  }

  /** Opens the sub-folder `name`; a link in its place is refused, not followed. */
  async folder(name: string): Promise<WorkspaceFolder> {
    const path = this.childPath(name);
    try {
      return new WorkspaceFolder(await this.opened.openFolder(name), path);
    } catch (error) {
      throw fileError(error, path);
    }
  }

  /** Reads the regular file `name` of this folder; a link in its place is refused. */
  async readFile(name: string, options: WorkspaceReadOptions = {}): Promise<Buffer> {
    const path = this.childPath(name);
    const handle = await this.opened.openFile(name, O_RDONLY | O_NONBLOCK).catch((error) => { throw fileError(error, path); });
    return readOpenedFile(handle, path, options);
  }

  close(): Promise<void> {
    return this.opened.close();
  }

  private childPath(name: string): string {
    return this.path === '.' ? name : `${this.path}/${name}`;
  }
}

/** Race-free file operations confined to one workspace; each call opens the workspace afresh. */
export class WorkspaceFiles implements WorkspaceFileOperations {
  /** Absolute real path of the workspace. */
  readonly root: string;
  private readonly givenRoot: string;

  constructor(workspace: string, private readonly protectedPaths?: ProtectedPathGuard) {
    this.givenRoot = resolve(workspace);
    this.root = realpathSync(this.givenRoot);
  }

  /** The workspace-relative form ("/" separators) of a path, checked to lie inside lexically. */
  relativePath(requestedPath: string): string {
    return this.componentsOf(requestedPath).join('/') || '.';
  }

  /** What is at the path, links inside the workspace followed. */
  async inspect(requestedPath: string): Promise<WorkspaceEntryInformation> {
    const reached = await this.reach(requestedPath, { followLast: true });
    const path = display(reached.components);
    try {
      const information = reached.name === undefined ? await reached.folder.status() : await reached.folder.entryStatus(reached.name);
      const kind = kindOf(information);
      if (kind === 'link') throw changedIntoLink(path);
      return { path, kind, size: information.size };
    } catch (error) {
      throw fileError(error, path);
    } finally {
      await reached.folder.close();
    }
  }

  /** Reads a regular file. */
  async readFile(requestedPath: string, options: WorkspaceReadOptions = {}): Promise<Buffer> {
    const reached = await this.reach(requestedPath, { followLast: true });
    const path = display(reached.components);
    try {
      if (reached.name === undefined) throw new ToolError(`${path} is a directory; a file is needed.`, 'is_directory');
      const handle = await reached.folder.openFile(reached.name, O_RDONLY | O_NONBLOCK).catch((error) => { throw fileError(error, path); });
      return await readOpenedFile(handle, path, options);
    } finally {
      await reached.folder.close();
    }
  }

  /** Opens a folder to list and read its entries; the caller closes it. */
  async openFolder(requestedPath: string): Promise<WorkspaceFolder> {
    const reached = await this.reach(requestedPath, { followLast: true });
    const path = display(reached.components);
    if (reached.name === undefined) return new WorkspaceFolder(reached.folder, path);
    try {
      return new WorkspaceFolder(await reached.folder.openFolder(reached.name), path);
    } catch (error) {
      throw fileError(error, path);
    } finally {
      await reached.folder.close();
    }
  }

  /** Creates a new file, never replacing anything there (code `file_exists`). Returns its workspace-relative path. */
  async createFile(requestedPath: string, data: WorkspaceFileData, options: WorkspaceWriteOptions = {}): Promise<string> {
    return this.write(requestedPath, options, async (folder, name, path) => {
      const handle = await folder.openFile(name, O_WRONLY | O_CREAT | O_EXCL, 0o666).catch((error) => { throw fileError(error, path); });
      try {
        await writeData(handle, data);
      } finally {
        await handle.close();
      }
    });
  }

  /**
   * Writes a file, replacing the contents of one that exists (in place, so it keeps its owner and
   * mode) or creating it. Returns its workspace-relative path.
   */
  async writeFile(requestedPath: string, data: WorkspaceFileData, options: WorkspaceWriteOptions = {}): Promise<string> {
    return this.write(requestedPath, options, async (folder, name, path) => {
      for (;;) {
        let handle = await folder.openFile(name, O_WRONLY | O_NONBLOCK).catch((error: NodeJS.ErrnoException) => {
          if (error.code === 'ENOENT') return undefined;
          throw fileError(error, path);
        });
        if (handle) {
          await this.checkRewritable(handle, path);
        } else {
          handle = await folder.openFile(name, O_WRONLY | O_CREAT | O_EXCL, 0o666).catch((error: NodeJS.ErrnoException) => {
            // Made a moment ago by someone else: write it as an existing file.
            if (error.code === 'EEXIST') return undefined;
            throw fileError(error, path);
          });
          if (!handle) continue;
        }
        try {
          await handle.truncate(0);
          await writeData(handle, data);
          return;
        } finally {
          await handle.close();
        }
      }
    });
  }

  /** Removes a file (or a link itself); folders are refused. */
  async remove(requestedPath: string): Promise<void> {
    await this.write(requestedPath, {}, async (folder, name, path) => {
      const information = await folder.entryStatus(name).catch((error) => { throw fileError(error, path); });
      if (information.isDirectory()) throw new ToolError(`${path} is a directory; only files are removed.`, 'is_directory');
      await folder.removeFile(name).catch((error) => { throw fileError(error, path); });
    });
  }

  /** Creates a folder and its missing parents; an existing folder is fine. */
  async makeFolder(requestedPath: string): Promise<string> {
    return this.write(requestedPath, { parents: true }, async (folder, name, path) => {
      await folder.makeFolder(name).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'EEXIST') throw fileError(error, path);
      });
      const made = await folder.openFolder(name).catch((error) => { throw fileError(error, path); });
      await made.close();
    });
  }

  /** Walks to the parent of a path to be written, checks it may be written, and runs `action` there. */
  private async write(
    requestedPath: string,
    options: WorkspaceWriteOptions,
    action: (folder: OpenFolder, name: string, path: string) => Promise<void>,
  ): Promise<string> {
    // Checked before anything is made, so a refused path leaves no folders behind.
    this.refuseProtected(this.componentsOf(requestedPath), requestedPath);
    const reached = await this.reach(requestedPath, {
      followLast: true,
      createFolders: options.parents ? (components) => this.refuseProtected(components, requestedPath) : undefined,
    });
    const path = display(reached.components);
    try {
      if (reached.name === undefined) throw new ToolError('The workspace itself cannot be written as a file.', 'is_directory');
      this.refuseProtected(reached.components, requestedPath);
      // Where the kernel says the folder is now: a folder renamed under a protected one is caught here.
      const current = join(await reached.folder.currentPath(), reached.name);
      if (!isInside(this.root, current)) {
        throw new WorkspacePathError('path_outside_workspace', `The folder of "${requestedPath}" was moved out of the workspace.`, requestedPath);
      }
      this.refuseProtected(relative(this.root, current).split(sep), requestedPath);
      await action(reached.folder, reached.name, path);
      return path;
    } finally {
      await reached.folder.close();
    }
  }

  private async checkRewritable(handle: FileHandle, path: string): Promise<void> {
    const information = await handle.stat();
    const problem = !information.isFile()
      ? new ToolError(`${path} is not a regular file.`, information.isDirectory() ? 'is_directory' : 'not_a_regular_file')
      : information.nlink > 1
        ? this.hardLinkRefusal(path, information)
        : undefined;
    if (problem) {
      await handle.close();
      throw problem;
    }
  }

  private hardLinkRefusal(path: string, information: Stats): WorkspacePathError {
    const linked = this.protectedPaths?.hardLinkedProtection(join(this.root, path));
    if (linked) {
      return new WorkspacePathError('path_protected', `Writing to "${path}" is not allowed: it is a hard link to a protected path (${linked.reason}).`, path);
    }
    return new WorkspacePathError(
      'path_hard_linked',
      `Writing to "${path}" is not allowed: the file has ${information.nlink} hard links, and another of them may be a file outside the workspace.`,
      path,
    );
  }

  private refuseProtected(components: readonly string[], requestedPath: string): void {
    const reason = workspaceProtectionReason(components.join(sep));
    if (reason) throw new WorkspacePathError('path_protected', `Writing to "${requestedPath}" is not allowed: ${reason}.`, requestedPath);
    const protection = this.protectedPaths?.protectionOf(join(this.root, ...components));
    if (protection) {
      throw new WorkspacePathError('path_protected', `Writing to "${requestedPath}" is not allowed: it is a protected path (${protection.reason}).`, requestedPath);
    }
  }

  /** The path's components below the workspace, or a refusal when it names a place outside. */
  private componentsOf(requestedPath: string): string[] {
    if (requestedPath.trim() === '') throw new WorkspacePathError('path_invalid', 'The path is empty.', requestedPath);
    if (requestedPath.includes('\0')) {
      throw new WorkspacePathError('path_invalid', `The path "${requestedPath}" contains a NUL byte.`, requestedPath);
    }
    const components = this.insideComponents(resolve(this.root, requestedPath));
    if (components) return components;
    const rule = isAbsolute(requestedPath) ? 'absolute paths must lie inside the workspace' : 'a path may not climb out of the workspace with ".."';
    throw new WorkspacePathError('path_outside_workspace', `The path "${requestedPath}" is outside the workspace (${this.root}): ${rule}.`, requestedPath);
  }

  /** Components of an absolute, normalised path below the workspace (by its real or given name). */
  private insideComponents(absolute: string): string[] | undefined {
    for (const root of [this.root, this.givenRoot]) {
      if (isInside(root, absolute)) return relative(root, absolute).split(sep).filter((part) => part !== '');
    }
    return undefined;
  }

  /**
   * Walks to the folder holding the path's last component, following links inside the workspace
   * by restarting from the workspace folder with their targets. The caller closes `folder`.
   */
  private async reach(
    requestedPath: string,
    options: { followLast: boolean; createFolders?: (components: string[]) => void },
  ): Promise<{ folder: OpenFolder; name: string | undefined; components: string[] }> {
    let components = this.componentsOf(requestedPath);
    for (let hops = 0; ; hops += 1) {
      const step = await this.walk(components, options).catch((error) => {
        throw WorkspacePathError.isInstance(error) || ToolError.isInstance(error) ? error : fileError(error, display(components));
      });
      if ('folder' in step) return { ...step, components };
      if (hops >= maximumLinkHops) {
        throw new WorkspacePathError('path_unresolvable', `The path "${requestedPath}" passes through too many symbolic links.`, requestedPath);
      }
      components = this.linkTargetComponents(step.linkAt, step.target, step.rest, requestedPath);
    }
  }

  private async walk(
    components: string[],
    options: { followLast: boolean; createFolders?: (components: string[]) => void },
  ): Promise<{ folder: OpenFolder; name: string | undefined } | { linkAt: string[]; target: string; rest: string[] }> {
    let folder = await OpenFolder.open(this.root);
    let handedOver = false;
    try {
      for (let index = 0; index < components.length - 1; index += 1) {
        const name = components[index];
        const next = await descend(folder, name, options.createFolders && (() => options.createFolders?.(components.slice(0, index + 1))));
        if (typeof next === 'string') return { linkAt: components.slice(0, index), target: next, rest: components.slice(index + 1) };
        await folder.close();
        folder = next;
      }
      const name = components.at(-1);
      if (name !== undefined && options.followLast) {
        const information = await folder.entryStatus(name).catch(() => undefined);
        if (information?.isSymbolicLink()) {
          return { linkAt: components.slice(0, -1), target: await folder.readLink(name), rest: [] };
        }
      }
      handedOver = true;
      return { folder, name };
    } finally {
      if (!handedOver) await folder.close();
    }
  }

  /** Where a link leads, as components below the workspace; a target outside it is refused. */
  private linkTargetComponents(linkFolder: string[], target: string, rest: string[], requestedPath: string): string[] {
    const outside = () =>
      new WorkspacePathError(
        'path_outside_workspace',
        `The path "${requestedPath}" leads outside the workspace through a symbolic link (to ${target}).`,
        requestedPath,
      );
    if (isAbsolute(target)) {
      const components = this.insideComponents(resolve(target));
      if (!components) throw outside();
      return [...components, ...rest];
    }
    // The folders walked so far are real folders (no links), so ".." here is their real parent.
    const components = [...linkFolder];
    for (const part of target.split('/')) {
      if (part === '' || part === '.') continue;
      if (part === '..') {
        if (components.length === 0) throw outside();
        components.pop();
      } else {
        components.push(part);
      }
    }
    return [...components, ...rest];
  }
}

/** Opens the sub-folder `name`, or returns the target of a link in its place. */
async function descend(folder: OpenFolder, name: string, beforeCreate: (() => void) | undefined): Promise<OpenFolder | string> {
  try {
    return await folder.openFolder(name);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ELOOP' || code === 'ENOTDIR') {
      const information = await folder.entryStatus(name).catch(() => undefined);
      if (information?.isSymbolicLink()) return folder.readLink(name);
    }
    if (code !== 'ENOENT' || !beforeCreate) throw error;
  }
  beforeCreate();
  await folder.makeFolder(name).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'EEXIST') throw error;
  });
  return folder.openFolder(name);
}

async function writeData(handle: FileHandle, data: WorkspaceFileData): Promise<void> {
  if (typeof data === 'string' || data instanceof Uint8Array) {
    await handle.writeFile(data);
    return;
  }
  for await (const chunk of data) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    for (let offset = 0; offset < bytes.length; ) offset += (await handle.write(bytes, offset)).bytesWritten;
  }
}

async function readOpenedFile(handle: FileHandle, path: string, options: WorkspaceReadOptions): Promise<Buffer> {
  try {
    const information = await handle.stat();
    if (information.isDirectory()) throw new ToolError(`${path} is a directory; a file is needed.`, 'is_directory');
    if (!information.isFile()) throw new ToolError(`${path} is not a regular file.`, 'not_a_regular_file');
    if (information.nlink > 1 && !hardLinksRestricted()) {
      throw new WorkspacePathError(
        'path_hard_linked',
        `Reading "${path}" is not allowed: the file has ${information.nlink} hard links, and this system lets anyone link files they do not own.`,
        path,
      );
    }
    if (options.maximumBytes !== undefined && information.size > options.maximumBytes) {
      throw new ToolError(`${path} is ${information.size} bytes, over the limit of ${options.maximumBytes}.`, 'file_too_large');
    }
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}

let hardLinksRestrictedValue: boolean | undefined;

/**
 * Linux's fs.protected_hardlinks: when set, a user can link only files it owns or may read and
 * write, so a link in the workspace exposes nothing its maker could not read already.
 */
function hardLinksRestricted(): boolean {
  if (hardLinksRestrictedValue === undefined) {
    try {
      hardLinksRestrictedValue = readFileSync('/proc/sys/fs/protected_hardlinks', 'utf8').trim() === '1';
    } catch {
      hardLinksRestrictedValue = false;
    }
  }
  return hardLinksRestrictedValue;
}

function kindOf(information: Stats): WorkspaceEntryKind {
  if (information.isSymbolicLink()) return 'link';
  if (information.isDirectory()) return 'folder';
  if (information.isFile()) return 'file';
  return 'other';
}

function display(components: readonly string[]): string {
  return components.join('/') || '.';
}

function changedIntoLink(path: string): WorkspacePathError {
  return new WorkspacePathError('path_unresolvable', `${path} changed into a symbolic link while it was being opened; it was not followed.`, path);
}

/** A file system error as a tool error naming the workspace path, never the descriptor path. */
function fileError(error: unknown, path: string): Error {
  if (WorkspacePathError.isInstance(error) || ToolError.isInstance(error)) return error;
  const code = (error as NodeJS.ErrnoException).code;
  switch (code) {
    case 'ENOENT':
      return new ToolError(`The path ${path} does not exist.`, 'file_not_found');
    case 'EEXIST':
      return new ToolError(`${path} already exists.`, 'file_exists');
    case 'ENOTDIR':
      return new ToolError(`A part of the path ${path} is a file, not a folder.`, 'not_a_directory');
    case 'EISDIR':
      return new ToolError(`${path} is a directory; a file is needed.`, 'is_directory');
    case 'ELOOP':
      return changedIntoLink(path);
    case 'EACCES':
    case 'EPERM':
      return new ToolError(`Permission denied for ${path}.`, 'access_denied');
    case 'ENXIO':
      return new ToolError(`${path} is not a regular file.`, 'not_a_regular_file');
    default:
      return new ToolError(`${path}: ${code ?? (error as Error).message}`, 'file_system_error');
  }
}
