import { extname } from 'node:path';
import type { ToolContext } from 'manus-runtime';

/**
 * Where the browser may read and write files: the run's workspace, minus its protected paths,
 * reached only through the context's race-free file operations, never by a path Chromium opens.
 */
export type WorkspaceFiles = ToolContext['files'];

const mediaTypes: Readonly<Record<string, string>> = {
  '.html': 'text/html',
  '.htm': 'text/html',
  '.txt': 'text/plain',
  '.md': 'text/plain',
  '.csv': 'text/csv',
  '.json': 'application/json',
  '.xml': 'application/xml',
  '.css': 'text/css',
  '.js': 'text/javascript',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.pdf': 'application/pdf',
};

/** The media type a workspace file is given to the browser with, by its extension. */
export function mediaTypeOf(path: string): string {
  return mediaTypes[extname(path).toLowerCase()] ?? 'application/octet-stream';
}
