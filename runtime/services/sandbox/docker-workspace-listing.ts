/**
 * A listing of a container's workspace, to find what a command changed before copying anything:
 * most commands change a few files or none, and copying the whole workspace back after each would
 * cost as much as the workspace is big. The listing comes from the container, so it only chooses
 * what to fetch; everything fetched is still checked as it is written (workspace-copy-back.ts).
 */
import { runsFolderName, sandboxFileSignature, type SyncedState } from './workspace-sync-state.js';

/** `find` prints, per entry: type, size, modification time, mode and number of names, then the path and a link's target, each ended by NUL. */
export const listingCommand = ['find', '.', '-mindepth', '1', '-printf', '%y %s %T@ %m %n\\0%P\\0%l\\0'];

export interface ListedChanges {
  /** Every path the workspace holds. */
  listed: Set<string>;
  /** Paths that differ from the state, outermost only (a new folder stands for what is in it). */
  changed: string[];
  /** Paths of the state the workspace no longer holds. */
  gone: string[];
  /** Sum of the sizes of changed files, as the listing gives them. */
  changedBytes: number;
  /** Changed files with more than one name: hard links, refused without being fetched. */
  hardLinked: string[];
}

/** Compares a listing with the state; undefined when the output is not a listing. */
export function compareListing(output: Buffer, state: SyncedState): ListedChanges | undefined {
  const fields = output.toString('utf8').split('\0');
  if (fields.at(-1) !== '') return undefined;
  fields.pop();
  if (fields.length % 3 !== 0) return undefined;
  const listed = new Set<string>();
  const changed: string[] = [];
  const hardLinked: string[] = [];
  let changedBytes = 0;
  for (let index = 0; index < fields.length; index += 3) {
    const match = /^([a-zA-Z]) (\d+) (\d+)(?:\.\d+)? ([0-7]+) (\d+)$/.exec(fields[index]);
    const path = fields[index + 1];
    // The listing chooses what is fetched: a path that climbs out would fetch the container's own files.
    if (!match || !isPlainPath(path)) return undefined;
    listed.add(path);
    const [, type, size, seconds, mode, names] = match;
    const known = state.get(path);
    const same =
      type === 'd'
        ? known?.kind === 'folder'
        : type === 'f'
          ? known?.sandbox === sandboxFileSignature(Number(size), new Date(Number(seconds) * 1000), Number.parseInt(mode, 8))
          : type === 'l' && known?.sandbox === `link:${fields[index + 2]}`;
    if (same) continue;
    // Fetched one by one, two names of one file would each look like a file of its own.
    if (type === 'f' && Number(names) > 1) {
      hardLinked.push(path);
      continue;
    }
    changed.push(path);
    if (type === 'f') changedBytes += Number(size);
  }
  const gone = [...state.keys()].filter((path) => !listed.has(path) && path.split('/')[0] !== runsFolderName);
  return { listed, changed: outermost(changed), gone, changedBytes, hardLinked };
}

function outermost(paths: string[]): string[] {
  const chosen = new Set<string>();
  for (const path of [...paths].sort((left, right) => left.split('/').length - right.split('/').length)) {
    const parts = path.split('/');
    if (parts.some((_, index) => index > 0 && chosen.has(parts.slice(0, index).join('/')))) continue;
    chosen.add(path);
  }
  return [...chosen];
}

/** A workspace-relative path as `find` prints it: components that are neither empty, "." nor "..". */
export function isPlainPath(path: string): boolean {
  return path !== '' && !path.includes('\0') && path.split('/').every((component) => component !== '' && component !== '.' && component !== '..');
}
