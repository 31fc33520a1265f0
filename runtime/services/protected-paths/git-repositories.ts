/**
 * What git reads from a repository that can make it run a program on the host, wherever the
 * repository lies: the folder its `.git` names (a folder, or a file saying `gitdir: <path>`), the
 * common folder a `commondir` file in it names, and the folder `core.hooksPath` names in any of
 * the configuration files git reads (`config`, `config.worktree`, the files they include, and the
 * user's and the system's). A repository's folder is protected whole except its data: objects,
 * refs, logs, the index and the files that name commits or hold a message, which git writes on
 * every commit and which run nothing.
 */
import { readFileSync, realpathSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';

/**
 * Entries directly inside a repository's folder that run nothing and that ordinary git commands
 * write. Everything else there is protected: hooks/, config, config.worktree, commondir,
 * worktrees/, modules/, info/, and rebase-merge/, whose to-do list may hold `exec` lines.
 */
export const repositoryDataEntries: readonly string[] = [
  'objects',
  'refs',
  'logs',
  'index',
  'packed-refs',
  'shallow',
  'HEAD',
  'ORIG_HEAD',
  'FETCH_HEAD',
  'COMMIT_EDITMSG',
  'MERGE_HEAD',
  'MERGE_MSG',
  'MERGE_MODE',
  'AUTO_MERGE',
  'SQUASH_MSG',
  'CHERRY_PICK_HEAD',
  'REVERT_HEAD',
  'REBASE_HEAD',
  // Lock files, which git makes beside the file it rewrites and renames over it.
  '*.lock',
];

/** The protected parts of a repository's folder that a command must not create where they are missing. */
export const repositoryControlFolders: readonly string[] = ['hooks', 'worktrees', 'modules', 'info'];
export const repositoryControlFiles: readonly string[] = ['config', 'config.worktree', 'commondir'];

/** Whether `name` matches one of `patterns`: a name, or `*` and a suffix. */
export function matchesEntryName(patterns: readonly string[], name: string): boolean {
  return patterns.some((pattern) => (pattern.startsWith('*') ? name.endsWith(pattern.slice(1)) : name === pattern));
}

/**
 * The repository folder a `.git` entry stands for: the folder itself, or the one a `.git` file
 * names with `gitdir:` (relative to the file's folder). Undefined for anything else.
 */
export function repositoryFolderOf(dotGit: string): string | undefined {
  // git follows a link named .git, so its target is the repository's folder.
  const information = statSync(dotGit, { throwIfNoEntry: false });
  if (information?.isDirectory()) return realpathSync(dotGit);
  if (!information?.isFile()) return undefined;
  return pointedFolder(dotGit, /^gitdir:\s*(.+?)\s*$/m);
}

/** The common folder a repository folder's `commondir` names (a linked worktree's main repository), if any. */
export function commonFolderOf(repositoryFolder: string): string | undefined {
  return pointedFolder(join(repositoryFolder, 'commondir'), /^(.+?)\s*$/m, repositoryFolder);
}

function pointedFolder(file: string, pattern: RegExp, base = dirname(file)): string | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  const named = pattern.exec(text)?.[1];
  return named ? canonicalFolder(resolve(base, named)) : undefined;
}

function canonicalFolder(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/** The configuration files git reads for the repository, and the folders `core.hooksPath` names in any of them. */
export interface RepositoryConfiguration {
  /** Files included with `[include] path` or `[includeIf ...] path`, whatever their condition. */
  includedFiles: string[];
  hooksFolders: string[];
}

/**
 * Reads `core.hooksPath` and the included files of the repository's configuration files, and of
 * the user's and the system's, which name the hooks of every repository. A relative hooks path is
 * taken from the working tree's root, as git runs hooks there.
 */
export function repositoryConfiguration(workTree: string, repositoryFolders: readonly string[], environment: Record<string, string | undefined>, home: string): RepositoryConfiguration {
  const start = repositoryFolders.flatMap((folder) => [join(folder, 'config'), join(folder, 'config.worktree')]);
  const configHome = environment.XDG_CONFIG_HOME ?? join(home, '.config');
  start.push(join(home, '.gitconfig'), join(configHome, 'git', 'config'), '/etc/gitconfig');
  const seen = new Set<string>();
  const includedFiles: string[] = [];
  const hooksFolders: string[] = [];
  const pending = [...start];
  while (pending.length > 0 && seen.size < maximumConfigurationFiles) {
    const file = pending.shift() as string;
    if (seen.has(file)) continue;
    seen.add(file);
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const { section, key, value } of configurationSettings(text)) {
      const path = expandHome(value, home);
      if (section === 'core' && key === 'hookspath' && path) hooksFolders.push(resolve(workTree, path));
      if ((section === 'include' || section === 'includeif') && key === 'path' && path) {
        const included = isAbsolute(path) ? path : resolve(dirname(file), path);
        includedFiles.push(included);
        pending.push(included);
      }
    }
  }
  return { includedFiles, hooksFolders };
}

/** git stops at ten levels of includes; this bounds a cycle or a fan of them. */
const maximumConfigurationFiles = 64;

function expandHome(value: string, home: string): string {
  return value.startsWith('~/') ? join(home, value.slice(2)) : value;
}

/**
 * The settings of a git configuration text as (section, key, value), section and key in lower
 * case without the subsection. Enough to find paths: quotes are removed, escapes kept as written.
 */
export function configurationSettings(text: string): Array<{ section: string; key: string; value: string }> {
  const settings: Array<{ section: string; key: string; value: string }> = [];
  let section = '';
  for (const rawLine of text.split('\n')) {
    let line = rawLine.trim();
    const header = /^\[\s*([A-Za-z0-9.-]+)(?:\s+"(?:[^"\\]|\\.)*")?\s*\]\s*(.*)$/.exec(line);
    if (header) {
      section = header[1].split('.')[0].toLowerCase();
      line = header[2];
    }
    const setting = /^([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*))?$/.exec(line);
    if (!setting) continue;
    const value = (setting[2] ?? '').replace(/\s+[#;].*$/, '').replace(/"/g, '').trim();
    settings.push({ section, key: setting[1].toLowerCase(), value });
  }
  return settings;
}
