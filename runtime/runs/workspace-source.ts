/**
 * Starting a workspace as a copy of a folder (`--workspace-from`), so a run, and later its replay,
 * begin from the same files. It copies only into a new or empty folder, so no one's files are
 * overwritten.
 */
import { cpSync, existsSync, readdirSync, statSync } from 'node:fs';
import { UsageError } from '../contract/errors.js';

export function copyWorkspaceSource(source: string, workspace: string): void {
  if (!existsSync(source) || !statSync(source).isDirectory()) throw new UsageError(`the workspace source ${source} is not a folder`);
  if (existsSync(workspace) && readdirSync(workspace).length > 0) {
    throw new UsageError(`the workspace ${workspace} is not empty; a copy of ${source} goes only into a new or empty folder`);
  }
  cpSync(source, workspace, { recursive: true });
}
