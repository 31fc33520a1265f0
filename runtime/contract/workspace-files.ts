/**
 * What a tool may do with the workspace's files (`context.files`): operations that open the
 * workspace once and walk each path relative to what they opened, so no checked path is resolved
 * again. services/workspace-files.ts implements them.
 */

/** What a workspace file can be written from: text, bytes, or a stream of them (a download). */
export type WorkspaceFileData = string | Uint8Array | AsyncIterable<string | Uint8Array>;

export type WorkspaceEntryKind = 'file' | 'folder' | 'link' | 'other';

export interface WorkspaceEntryInformation {
  /** Workspace-relative path with "/" separators, links resolved; "." for the workspace itself. */
  path: string;
  /** Never 'link': links are followed (inside the workspace) before the entry is looked at. */
  kind: Exclude<WorkspaceEntryKind, 'link'>;
  size: number;
}

export interface WorkspaceFolderEntry {
  name: string;
  kind: WorkspaceEntryKind;
  size: number;
  /** What a link points to, as written in it; links in a listing are shown, never followed. */
  linkTarget?: string;
}

export interface WorkspaceReadOptions {
  /** Larger files are refused with the code `file_too_large` before they are read. */
  maximumBytes?: number;
}

export interface WorkspaceWriteOptions {
  /** Create missing parent folders (each checked like the file). Default: false. */
  parents?: boolean;
}

/** A folder of the workspace held open; names given to it are single entries of it. */
export interface WorkspaceFolder {
  /** Workspace-relative path with "/" separators; "." for the workspace itself. */
  readonly path: string;
  list(): Promise<WorkspaceFolderEntry[]>;
  folder(name: string): Promise<WorkspaceFolder>;
  readFile(name: string, options?: WorkspaceReadOptions): Promise<Buffer>;
  close(): Promise<void>;
}

/** The workspace's files; every path is relative to the workspace, or absolute inside it. */
export interface WorkspaceFiles {
  readonly root: string;
  /** The path as the model is shown it: relative to the workspace, with "/" separators. */
  relativePath(requestedPath: string): string;
  inspect(requestedPath: string): Promise<WorkspaceEntryInformation>;
  readFile(requestedPath: string, options?: WorkspaceReadOptions): Promise<Buffer>;
  openFolder(requestedPath: string): Promise<WorkspaceFolder>;
  /** Creates a new file, never replacing one; returns its workspace-relative path. */
  createFile(requestedPath: string, data: WorkspaceFileData, options?: WorkspaceWriteOptions): Promise<string>;
  writeFile(requestedPath: string, data: WorkspaceFileData, options?: WorkspaceWriteOptions): Promise<string>;
  remove(requestedPath: string): Promise<void>;
  makeFolder(requestedPath: string): Promise<string>;
}
