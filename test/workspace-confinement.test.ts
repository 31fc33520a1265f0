import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ToolError } from '../runtime/contract/errors.js';
import { listWorkspaceFiles, resolveInWorkspace, WorkspacePathError } from '../runtime/services/workspace-paths.js';

let root: string;
let workspace: string;
let outside: string;

beforeEach(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'manus-confinement-')));
  workspace = join(root, 'workspace');
  outside = join(root, 'outside');
  mkdirSync(join(workspace, 'src'), { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(workspace, 'src', 'main.ts'), 'export {};\n');
  writeFileSync(join(outside, 'secret.txt'), 'secret\n');
});

afterEach(() => rmSync(root, { recursive: true, force: true }));

function refusal(requestedPath: string, access: 'read' | 'write'): WorkspacePathError {
  try {
    resolveInWorkspace(workspace, requestedPath, { access });
  } catch (error) {
    expect(error).toBeInstanceOf(WorkspacePathError);
    return error as WorkspacePathError;
  }
  throw new Error(`expected ${requestedPath} to be refused for ${access}`);
}

describe('paths that stay inside the workspace', () => {
  it('resolves relative paths against the workspace', () => {
    expect(resolveInWorkspace(workspace, 'src/main.ts', { access: 'read' })).toBe(join(workspace, 'src', 'main.ts'));
    expect(resolveInWorkspace(workspace, '.', { access: 'read' })).toBe(workspace);
  });

  it('accepts an absolute path inside the workspace and a new file in a new folder', () => {
    const absolute = join(workspace, 'src', 'main.ts');
    expect(resolveInWorkspace(workspace, absolute, { access: 'write' })).toBe(absolute);
    expect(resolveInWorkspace(workspace, 'new/deeper/file.txt', { access: 'write' })).toBe(
      join(workspace, 'new', 'deeper', 'file.txt'),
    );
  });

  it('accepts ".." that stays inside', () => {
    expect(resolveInWorkspace(workspace, 'src/../notes.md', { access: 'write' })).toBe(join(workspace, 'notes.md'));
  });

  it('follows a symbolic link that points inside and returns the real target', () => {
    symlinkSync(join(workspace, 'src'), join(workspace, 'source-link'));
    expect(resolveInWorkspace(workspace, 'source-link/main.ts', { access: 'write' })).toBe(
      join(workspace, 'src', 'main.ts'),
    );
  });

  it('accepts an absolute path written with the workspace name given through a link', () => {
    const linkedWorkspace = join(root, 'workspace-link');
    symlinkSync(workspace, linkedWorkspace);
    expect(resolveInWorkspace(linkedWorkspace, join(linkedWorkspace, 'src', 'main.ts'), { access: 'read' })).toBe(
      join(workspace, 'src', 'main.ts'),
    );
  });

  it('allows reading protected files and writing files that only resemble protected names', () => {
    mkdirSync(join(workspace, '.git'));
    writeFileSync(join(workspace, '.git', 'config'), '[core]\n');
    expect(resolveInWorkspace(workspace, '.git/config', { access: 'read' })).toBe(join(workspace, '.git', 'config'));
    expect(resolveInWorkspace(workspace, 'docs/agents.yaml', { access: 'write' })).toBe(
      join(workspace, 'docs', 'agents.yaml'),
    );
    expect(resolveInWorkspace(workspace, 'src/plugins/tool.ts', { access: 'write' })).toBe(
      join(workspace, 'src', 'plugins', 'tool.ts'),
    );
    expect(resolveInWorkspace(workspace, '.gitignore', { access: 'write' })).toBe(join(workspace, '.gitignore'));
  });
});

describe('paths that leave the workspace', () => {
  it('refuses ../ traversal and names the path as given', () => {
    const error = refusal('../outside/secret.txt', 'read');
    expect(error.code).toBe('path_outside_workspace');
    expect(error.message).toContain('"../outside/secret.txt"');
    expect(error.message).toContain('..');
    expect(error.requestedPath).toBe('../outside/secret.txt');
    expect(error).toBeInstanceOf(ToolError);
    expect(refusal('src/../../outside', 'write').code).toBe('path_outside_workspace');
  });

  it('refuses an absolute path outside, including a sibling that shares the prefix', () => {
    expect(refusal(join(outside, 'secret.txt'), 'read').message).toContain('absolute paths must lie inside');
    mkdirSync(`${workspace}-other`);
    expect(refusal(`${workspace}-other/file`, 'write').code).toBe('path_outside_workspace');
  });

  it('refuses a symbolic link to a file outside, for reading and for writing', () => {
    symlinkSync(join(outside, 'secret.txt'), join(workspace, 'secret-link'));
    for (const access of ['read', 'write'] as const) {
      const error = refusal('secret-link', access);
      expect(error.code).toBe('path_outside_workspace');
      expect(error.message).toContain('symbolic link');
    }
  });

  it('refuses a new file under a symlinked folder that points outside', () => {
    symlinkSync(outside, join(workspace, 'exit'));
    expect(refusal('exit/new-file.txt', 'write').code).toBe('path_outside_workspace');
    expect(refusal('exit/not/yet/there.txt', 'write').code).toBe('path_outside_workspace');
  });

  it('refuses a dangling link whose target would be outside', () => {
    symlinkSync(join(outside, 'does-not-exist.txt'), join(workspace, 'dangling'));
    expect(refusal('dangling', 'write').code).toBe('path_outside_workspace');
    symlinkSync(join(outside, 'missing-folder'), join(workspace, 'dangling-folder'));
    expect(refusal('dangling-folder/file.txt', 'write').code).toBe('path_outside_workspace');
  });

  it('accepts a dangling link whose target would be inside', () => {
    symlinkSync(join(workspace, 'later.txt'), join(workspace, 'later-link'));
    expect(resolveInWorkspace(workspace, 'later-link', { access: 'write' })).toBe(join(workspace, 'later.txt'));
  });

  it('ends a cycle of links with an error instead of looping', () => {
    symlinkSync(join(workspace, 'loop-b'), join(workspace, 'loop-a'));
    symlinkSync(join(workspace, 'loop-a'), join(workspace, 'loop-b'));
    expect(refusal('loop-a/file', 'write').code).toBe('path_unresolvable');
  });

  it('refuses empty paths and NUL bytes', () => {
    expect(refusal('', 'read').code).toBe('path_invalid');
    expect(refusal('src/main.ts\0.txt', 'read').code).toBe('path_invalid');
  });
});

describe('protected files inside the workspace', () => {
  it('refuses writes into .git at any depth', () => {
    mkdirSync(join(workspace, '.git'));
    writeFileSync(join(workspace, '.git', 'config'), '[core]\n');
    const error = refusal('.git/config', 'write');
    expect(error.code).toBe('path_protected');
    expect(error.message).toContain('.git');
    expect(refusal('vendor/library/.git/hooks/pre-commit', 'write').code).toBe('path_protected');
    expect(refusal('.GIT/config', 'write').code).toBe('path_protected');
  });

  it('refuses writes to shell start-up files anywhere', () => {
    expect(refusal('.bashrc', 'write').message).toContain('shell start-up file');
    for (const name of ['.bash_profile', '.profile', '.zshrc', '.zprofile', '.bash_logout', '.inputrc', 'home/.bashrc']) {
      expect(refusal(name, 'write').code).toBe('path_protected');
    }
    expect(refusal('.config/fish/config.fish', 'write').code).toBe('path_protected');
  });

  it("refuses writes to the runtime's own configuration at the root", () => {
    expect(refusal('agents.yaml', 'write').message).toContain('agents.yaml');
    expect(refusal('.manus/runs/run-1/events.jsonl', 'write').code).toBe('path_protected');
    expect(refusal('plugins/evil.ts', 'write').code).toBe('path_protected');
    expect(refusal(join(workspace, 'agents.yaml'), 'write').code).toBe('path_protected');
  });

  it('refuses a write that reaches a protected file through a link inside', () => {
    mkdirSync(join(workspace, '.git'));
    symlinkSync(join(workspace, '.git'), join(workspace, 'innocent'));
    symlinkSync(join(workspace, 'agents.yaml'), join(workspace, 'settings.yaml'));
    expect(refusal('innocent/config', 'write').code).toBe('path_protected');
    expect(refusal('settings.yaml', 'write').code).toBe('path_protected');
  });
});

describe('listWorkspaceFiles', () => {
  it('lists files as sorted relative paths, skipping .git and .manus and not following links', async () => {
    mkdirSync(join(workspace, '.git', 'objects'), { recursive: true });
    writeFileSync(join(workspace, '.git', 'objects', 'blob'), 'x');
    mkdirSync(join(workspace, '.manus', 'runs'), { recursive: true });
    writeFileSync(join(workspace, '.manus', 'runs', 'events.jsonl'), '{}\n');
    mkdirSync(join(workspace, 'out', 'charts'), { recursive: true });
    writeFileSync(join(workspace, 'out', 'charts', 'sales.png'), 'png');
    writeFileSync(join(workspace, 'README.md'), '# hi\n');
    symlinkSync(outside, join(workspace, 'exit'));
    expect(await listWorkspaceFiles(workspace)).toEqual(['README.md', 'out/charts/sales.png', 'src/main.ts']);
  });
});
