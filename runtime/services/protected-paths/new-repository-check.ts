/**
 * A repository the agent creates during a run (`git init` in the workspace) is its own work, and
 * protecting its `.git` outright would stop every such run. Its hooks and settings would still run
 * on the host the first time the user types a git command there, so such a repository may hold
 * only what `git init` and ordinary work write: sample hooks, and settings that run nothing.
 * Anything else is removed and reported like a change to a protected path.
 */
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ProtectedPathChange } from './protected-path-snapshot.js';

/** Settings that configure a repository without naming a program, a file to include or a path to hooks. */
const plainSettings = new Set([
  'core.repositoryformatversion',
  'core.filemode',
  'core.bare',
  'core.logallrefupdates',
  'core.ignorecase',
  'core.precomposeunicode',
  'core.symlinks',
  'core.autocrlf',
  'core.eol',
  'extensions.objectformat',
  'init.defaultbranch',
  'user.name',
  'user.email',
]);
/** Per-remote and per-branch settings (`remote.origin.url`), by their section and key. */
const plainSubsectionSettings = new Set(['remote.url', 'remote.fetch', 'remote.pushurl', 'branch.remote', 'branch.merge', 'branch.rebase']);

/** The `.git` folders a check looks at: each root's own, and those of the folders directly inside it. */
export function repositoryFolders(roots: readonly string[]): string[] {
  const folders: string[] = [];
  for (const root of roots) {
    folders.push(join(root, '.git'));
    let entries;
    try {
      entries = readdirSync(root, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) {
      if (entry.isDirectory() && entry.name !== '.git') folders.push(join(root, entry.name, '.git'));
    }
  }
  return folders.filter((folder) => existsSync(folder));
}

/**
 * Checks each `.git` folder of `roots` (see `repositoryFolders`) that was not there when the run
 * started; removes non-sample hooks and settings that could run something, and returns what it changed.
 */
export function checkNewRepositories(roots: readonly string[], existingAtStart: ReadonlySet<string>): ProtectedPathChange[] {
  return repositoryFolders(roots)
    .filter((gitFolder) => !existingAtStart.has(gitFolder))
    .flatMap((gitFolder) => [...removeActiveHooks(join(gitFolder, 'hooks')), ...removeActiveSettings(join(gitFolder, 'config'))]);
}

function removeActiveHooks(hooksFolder: string): ProtectedPathChange[] {
  let names: string[];
  try {
    names = readdirSync(hooksFolder);
  } catch {
    return [];
  }
  return names
    .filter((name) => !name.endsWith('.sample'))
    .map((name) => {
      const path = join(hooksFolder, name);
      rmSync(path, { recursive: true, force: true });
      return { path, change: 'created' as const, restored: !existsSync(path) };
    });
}

function removeActiveSettings(configFile: string): ProtectedPathChange[] {
  let text: string;
  try {
    text = readFileSync(configFile, 'utf8');
  } catch {
    return [];
  }
  const kept = plainConfigLines(text);
  if (kept === text) return [];
  writeFileSync(configFile, kept);
  return [{ path: configFile, change: 'modified', restored: true }];
}

/**
 * The config text with every setting that is not plain dropped, and with it any line it
 * continues onto. Section headers stay, so the file remains valid.
 */
export function plainConfigLines(text: string): string {
  const output: string[] = [];
  let section = '';
  let subsection: string | undefined;
  let dropping = false;
  for (const line of text.split('\n')) {
    const continued = dropping;
    dropping = false;
    if (continued) {
      dropping = line.endsWith('\\');
      continue;
    }
    const trimmed = line.trim();
    const header = /^\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]\s*(.*)$/.exec(trimmed);
    if (header) {
      section = header[1].toLowerCase();
      subsection = header[2];
      // A header may be followed by a setting on the same line; keep such a line only when it is plain.
      if (header[3] !== '' && !/^[#;]/.test(header[3]) && !isPlain(section, subsection, header[3])) {
        output.push(`[${header[1]}${subsection === undefined ? '' : ` "${subsection}"`}]`);
        dropping = header[3].endsWith('\\');
        continue;
      }
      output.push(line);
      continue;
    }
    if (trimmed === '' || /^[#;]/.test(trimmed) || isPlain(section, subsection, trimmed)) {
      output.push(line);
      continue;
    }
    dropping = line.endsWith('\\');
  }
  return output.join('\n');
}

function isPlain(section: string, subsection: string | undefined, setting: string): boolean {
  const key = /^([A-Za-z][A-Za-z0-9-]*)/.exec(setting)?.[1]?.toLowerCase();
  if (!key) return false;
  if (subsection === undefined && section.includes('.')) {
    // The old form `[remote.origin]` names a subsection with a dot.
    const [outer] = section.split('.');
    return plainSubsectionSettings.has(`${outer}.${key}`);
  }
  if (subsection !== undefined) return plainSubsectionSettings.has(`${section}.${key}`);
  return plainSettings.has(`${section}.${key}`);
}
