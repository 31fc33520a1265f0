/**
 * The images among the files a run wrote (a data-analysis run's charts), read into the report as
 * data URLs: the page's policy loads images from nowhere else, and an artifact keeps them whole.
 * The workspace was the agent's to write, so a file read here must be a regular file inside it when
 * it is opened: the last part is opened without following a link, and the opened file's own path
 * (from /proc, where there is one) is checked, so a folder swapped for a link between the check
 * and the read cannot lead out. Anything else reads as no image.
 */
import { closeSync, constants, fstatSync, openSync, readFileSync, readlinkSync, realpathSync, statSync } from 'node:fs';
import { extname, resolve, sep } from 'node:path';

const imageTypes: Record<string, string> = {
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.svg': 'image/svg+xml',
};

/** Larger images stay links: the report is one file, opened whole. */
const largestImageBytes = 5 * 1024 * 1024;

export function isImageFile(file: string): boolean {
  return extname(file).toLowerCase() in imageTypes;
}

/** The image `file` of the workspace as a data URL, or undefined when it is not one, or not inside. */
export function workspaceImage(workspace: string, file: string): string | undefined {
  const mimeType = imageTypes[extname(file).toLowerCase()];
  if (!mimeType) return undefined;
  let descriptor: number | undefined;
  try {
    const root = realpathSync(workspace);
    const path = resolve(root, file);
    if (!path.startsWith(`${root}${sep}`)) return undefined;
    descriptor = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    const opened = fstatSync(descriptor);
    if (!opened.isFile() || opened.size > largestImageBytes) return undefined;
    if (!openedInside(descriptor, opened, path, root)) return undefined;
    return `data:${mimeType};base64,${readFileSync(descriptor).toString('base64')}`;
  } catch {
    return undefined;
  } finally {
    if (descriptor !== undefined) closeSync(descriptor);
  }
}

function openedInside(descriptor: number, opened: { dev: number; ino: number }, path: string, root: string): boolean {
  let real: string;
  try {
    real = readlinkSync(`/proc/self/fd/${descriptor}`);
  } catch {
    // No /proc: the path, resolved now, must still be the file that was opened.
    real = realpathSync(path);
    const now = statSync(real);
    if (now.dev !== opened.dev || now.ino !== opened.ino) return false;
  }
  return real.startsWith(`${root}${sep}`);
}
