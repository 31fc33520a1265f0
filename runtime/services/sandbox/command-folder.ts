/**
 * Resolves the working folder a caller asked for. It must lie inside the workspace (symbolic
 * links included) and exist; sandboxes that mount the workspace elsewhere use the relative form.
 */
import { stat } from 'node:fs/promises';
import { relative, sep } from 'node:path';
import { ToolError } from '../../contract/errors.js';
import { resolveInWorkspace } from '../workspace-paths.js';

export interface CommandFolder {
  /** Absolute real path on the host. */
  hostPath: string;
  /** Path relative to the workspace with "/" separators; "" for the workspace itself. */
  relativePath: string;
}

export async function resolveCommandFolder(workspace: string, cwd: string | undefined): Promise<CommandFolder> {
  const hostPath = resolveInWorkspace(workspace, cwd ?? '.', { access: 'read' });
  const information = await stat(hostPath).catch(() => undefined);
  if (!information?.isDirectory()) {
    throw new ToolError(`The working folder "${cwd}" is not a folder in the workspace.`, 'folder_not_found');
  }
  return { hostPath, relativePath: relative(workspace, hostPath).split(sep).join('/') };
}
