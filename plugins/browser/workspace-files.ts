import type { ToolContext } from 'manus-runtime';

/** The part of a tool's context that says where the browser may read and write files. */
export type WorkspaceFiles = Pick<ToolContext, 'workspace' | 'protectedPaths'>;
