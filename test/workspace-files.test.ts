import { execFileSync } from 'node:child_process';
import { existsSync, linkSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ToolError } from '../runtime/contract/errors.js';
import { WorkspaceFiles } from '../runtime/services/workspace-files.js';
import { startFolderSwapper, type FolderSwapper } from './support/folder-swapper.js';

let root: string;
let workspace: string;
let outside: string;
let files: WorkspaceFiles;

beforeEach(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'manus-workspace-files-')));
  workspace = join(root, 'workspace');
  outside = join(root, 'outside');
  mkdirSync(workspace);
  mkdirSync(outside, { mode: 0o700 });
  writeFileSync(join(outside, 'secret.txt'), 'outside secret\n');
  files = new WorkspaceFiles(workspace);
});

afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

async function failureCode(action: Promise<unknown>): Promise<string> {
  const error = await action.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!ToolError.isInstance(error)) throw new Error(`expected a tool error, got ${String(error)}`);
  return error.code;
}

function outsideEntries(): string[] {
  return readdirSync(outside).sort();
}

describe('WorkspaceFiles', () => {
  it('creates, reads, rewrites, lists and removes files inside the workspace', async () => {
    expect(await files.createFile('notes/today.txt', 'first\n', { parents: true })).toBe('notes/today.txt');
    expect(await failureCode(files.createFile('notes/today.txt', 'again'))).toBe('file_exists');
    await files.writeFile(join(workspace, 'notes', 'today.txt'), 'second\n');
    expect((await files.readFile('notes/today.txt')).toString()).toBe('second\n');
    expect(await files.inspect('notes')).toEqual({ path: 'notes', kind: 'folder', size: expect.any(Number) });
    const folder = await files.openFolder('notes');
    try {
      expect(await folder.list()).toEqual([{ name: 'today.txt', kind: 'file', size: 7 }]);
      expect((await folder.readFile('today.txt')).toString()).toBe('second\n');
    } finally {
      await folder.close();
    }
    await files.remove('notes/today.txt');
    expect(existsSync(join(workspace, 'notes', 'today.txt'))).toBe(false);
  });

  it('refuses ".." out of the workspace and absolute paths outside it', async () => {
    expect(await failureCode(files.readFile('../outside/secret.txt'))).toBe('path_outside_workspace');
    expect(await failureCode(files.readFile(join(outside, 'secret.txt')))).toBe('path_outside_workspace');
    expect(await failureCode(files.createFile('a/../../outside/new.txt', 'x', { parents: true }))).toBe('path_outside_workspace');
    expect(outsideEntries()).toEqual(['secret.txt']);
  });

  it('refuses a link leading outside as the last component, in the middle, and dangling', async () => {
    symlinkSync(join(outside, 'secret.txt'), join(workspace, 'last'));
    symlinkSync(outside, join(workspace, 'middle'));
    symlinkSync(join(outside, 'planted.txt'), join(workspace, 'dangling'));
    symlinkSync('../outside', join(workspace, 'relative'));
    expect(await failureCode(files.readFile('last'))).toBe('path_outside_workspace');
    expect(await failureCode(files.writeFile('last', 'x'))).toBe('path_outside_workspace');
    expect(await failureCode(files.readFile('middle/secret.txt'))).toBe('path_outside_workspace');
    expect(await failureCode(files.createFile('middle/new.txt', 'x'))).toBe('path_outside_workspace');
    expect(await failureCode(files.createFile('dangling', 'x'))).toBe('path_outside_workspace');
    expect(await failureCode(files.writeFile('relative/secret.txt', 'x'))).toBe('path_outside_workspace');
    expect(await failureCode(files.openFolder('middle'))).toBe('path_outside_workspace');
    expect(outsideEntries()).toEqual(['secret.txt']);
    expect(readFileSync(join(outside, 'secret.txt'), 'utf8')).toBe('outside secret\n');
  });

  it('follows links that stay inside the workspace, as RESOLVE_BENEATH does', async () => {
    mkdirSync(join(workspace, 'real'));
    writeFileSync(join(workspace, 'real', 'file.txt'), 'inside\n');
    symlinkSync('real', join(workspace, 'alias'));
    symlinkSync(join(workspace, 'real', 'file.txt'), join(workspace, 'absolute-alias'));
    expect((await files.readFile('alias/file.txt')).toString()).toBe('inside\n');
    expect((await files.inspect('absolute-alias')).path).toBe('real/file.txt');
    await files.writeFile('absolute-alias', 'changed\n');
    expect(readFileSync(join(workspace, 'real', 'file.txt'), 'utf8')).toBe('changed\n');
  });

  it('lists links without following them', async () => {
    symlinkSync(outside, join(workspace, 'exit'));
    const folder = await files.openFolder('.');
    try {
      expect(await folder.list()).toEqual([{ name: 'exit', kind: 'link', size: expect.any(Number), linkTarget: outside }]);
      expect(await failureCode(folder.folder('exit'))).toBe('path_unresolvable');
      expect(await failureCode(folder.readFile('exit'))).toBe('path_unresolvable');
    } finally {
      await folder.close();
    }
  });

  it('refuses to write a file with another hard link, which may be a file outside', async () => {
    writeFileSync(join(workspace, 'own.txt'), 'own\n');
    linkSync(join(workspace, 'own.txt'), join(outside, 'other-name.txt'));
    expect(await failureCode(files.writeFile('own.txt', 'changed\n'))).toBe('path_hard_linked');
    expect(readFileSync(join(outside, 'other-name.txt'), 'utf8')).toBe('own\n');
  });

  it('refuses the workspace rules of protected files before creating any folder', async () => {
    expect(await failureCode(files.createFile('.git/hooks/pre-commit', 'x', { parents: true }))).toBe('path_protected');
    expect(existsSync(join(workspace, '.git'))).toBe(false);
    mkdirSync(join(workspace, '.git'));
    symlinkSync('.git', join(workspace, 'innocent'));
    expect(await failureCode(files.createFile('innocent/config', 'x'))).toBe('path_protected');
  });

  it('does not hang on a named pipe', async () => {
    execFileSync('mkfifo', [join(workspace, 'pipe')]);
    expect(await failureCode(files.readFile('pipe'))).toBe('not_a_regular_file');
    expect(await failureCode(files.writeFile('pipe', 'x'))).toBe('not_a_regular_file');
  });
});

describe('WorkspaceFiles against a folder swapped for a link in a loop', () => {
  const python = process.env.MANUS_PYTHON ?? 'python3';
  let swapper: FolderSwapper | undefined;

  beforeEach(async () => {
    mkdirSync(join(workspace, 'sub', 'd'), { recursive: true });
    writeFileSync(join(workspace, 'sub', 'd', 'inside.txt'), 'inside\n');
    symlinkSync(outside, join(workspace, 'sub', 'link'));
    swapper = await startFolderSwapper(python, join(workspace, 'sub', 'd'), join(workspace, 'sub', 'link'));
  });

  afterEach(async () => {
    await swapper?.stop();
    swapper = undefined;
  });

  it('the swapping is real: plain path strings land outside', async () => {
    const attempts = Array.from({ length: 200 }, (_, index) => writeFile(join(workspace, 'sub', 'd', `control-${index}.txt`), 'x').catch(() => undefined));
    await Promise.all(attempts);
    expect(outsideEntries().filter((name) => name.startsWith('control-')).length).toBeGreaterThan(0);
  });

  it('creates, reads, rewrites and removes only inside the workspace', async () => {
    const operations: Array<Promise<unknown>> = [];
    const read: string[] = [];
    for (let index = 0; index < 150; index += 1) {
      const settle = (action: Promise<unknown>) => operations.push(action.catch(() => undefined));
      settle(files.createFile(`sub/d/created-${index}.txt`, 'created'));
      settle(files.writeFile(`sub/d/written-${index}.txt`, 'written'));
      settle(files.writeFile('sub/d/inside.txt', 'rewritten\n'));
      settle(files.readFile('sub/d/secret.txt').then((bytes) => read.push(bytes.toString())));
      settle(files.readFile('sub/d/inside.txt').then((bytes) => read.push(bytes.toString())));
      settle(files.remove('sub/d/secret.txt'));
      settle(files.makeFolder(`sub/d/folder-${index}`));
      settle(files.inspect('sub/d/secret.txt').then((information) => read.push(`size ${information.size}`)));
      settle(files.openFolder('sub/d').then(async (folder) => {
        try {
          for (const entry of await folder.list()) read.push(entry.name);
        } finally {
          await folder.close();
        }
      }));
    }
    await Promise.all(operations);
    await swapper?.stop();
    swapper = undefined;
    expect(outsideEntries()).toEqual(['secret.txt']);
    expect(readFileSync(join(outside, 'secret.txt'), 'utf8')).toBe('outside secret\n');
    expect(read.join('\n')).not.toContain('outside secret');
    expect(read).not.toContain('secret.txt');
    expect(read).not.toContain('size 15');
  });
});
