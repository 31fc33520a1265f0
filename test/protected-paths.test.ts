import { chmodSync, chownSync, existsSync, linkSync, lstatSync, mkdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import bashTool from '../plugins/code/bash.js';
import editorTool from '../plugins/files/str_replace_editor.js';
import { resolveRecipe } from '../runtime/runs/recipe/resolve-recipe.js';
import { PermissionDeniedError } from '../runtime/contract/errors.js';
import { plainConfigLines } from '../runtime/services/protected-paths/new-repository-check.js';
import { ProtectedPaths, type ProtectedPathChange } from '../runtime/services/protected-paths/protected-paths.js';
import { protectedPathsFor } from '../runtime/runs/protected-path-list.js';
import { probeBwrap } from '../runtime/services/sandbox/create-sandbox.js';
import { probeDocker } from '../runtime/services/sandbox/docker-connection.js';
import { sandboxForRun } from '../runtime/services/sandbox/run-sandbox.js';
import type { Sandbox } from '../runtime/contract/sandbox-types.js';
import { sandboxDefaults } from '../runtime/config/defaults.js';
import { fallbackSandboxUser } from '../runtime/services/sandbox/sandbox-options.js';
import type { SandboxSettings, ToolResult } from '../runtime/contract/tool.js';
import { makeFixture, readEvents, runCli } from './support/run-cli.js';
import { startScriptedModelServer, type ScriptedTurn } from './support/scripted-model-server.js';
import { terminate } from './support/loop-fixture.js';
import { createTestToolContext } from './support/tool-context.js';

const agentsYaml = 'version: 1\nagents:\n  helper:\n    system_prompt: {file: prompts/system.md}\n    tools: [bash, str_replace_editor, terminate]\n';
const recipeYaml = 'version: 1\nname: guarded\nprompt: Work.\nagent: helper\nworkspace: .\nplugins: [./tools]\n';

interface Project {
  folder: string;
  protectedPaths: ProtectedPaths;
  changes: ProtectedPathChange[][];
  run(command: string, options?: { cwd?: string }): Promise<{ status: number | null; output: string }>;
  sandbox(): Promise<Sandbox>;
  context: ReturnType<typeof createTestToolContext>['context'];
}

const made: Array<ReturnType<typeof createTestToolContext>> = [];
const folders: string[] = [];
afterEach(async () => {
  for (const test of made.splice(0)) {
    await test.dispose();
    rmSync(test.root, { recursive: true, force: true });
  }
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

/**
 * A project run with `workspace: .`: agents.yaml with a prompt file, a recipe naming `./tools`,
 * and a git repository, with the run's real protected paths and sandbox.
 */
async function project(kind: SandboxSettings['kind'], extraFiles: Record<string, string> = {}): Promise<Project> {
  const folder = makeFixture({
    'agents.yaml': agentsYaml,
    'prompts/system.md': 'Be careful.\n',
    'recipe.yaml': recipeYaml,
    'tools/hello.ts': 'export default [];\n',
    '.git/HEAD': 'ref: refs/heads/main\n',
    '.git/config': '[core]\n\tbare = false\n',
    '.git/hooks/pre-commit.sample': '#!/bin/sh\n',
    'src/main.txt': 'hello\n',
    ...extraFiles,
  });
  folders.push(folder);
  const home = join(folder, 'src', 'home');
  const plan = await resolveRecipe('recipe.yaml', { cwd: folder });
  const changes: ProtectedPathChange[][] = [];
  const protectedPaths = new ProtectedPaths(
    protectedPathsFor(plan, { cwd: folder, workspace: folder, runsDirectory: join(folder, '.manus', 'runs'), environment: { HOME: home } }),
    { onChanged: (list) => changes.push(list), repositoryRoots: [folder] },
  );
  await protectedPaths.capture();
  const test = createTestToolContext({
    workspace: folder,
    protectedPaths,
    sandboxSettings: async () => ({ kind, network: false, options: {} }),
  });
  made.push(test);
  const sandbox = () => sandboxForRun(test.context);
  return {
    folder,
    protectedPaths,
    changes,
    context: test.context,
    sandbox,
    async run(command, options = {}) {
      const result = await (await sandbox()).run(['sh', '-c', command], { timeoutMs: 10_000, cwd: options.cwd });
      return { status: result.exitCode, output: result.stdout.toString() + result.stderr.toString() };
    },
  };
}

const read = (folder: string, path: string) => readFileSync(join(folder, path), 'utf8');

async function editor(target: Project, input: Record<string, unknown>): Promise<string> {
  try {
    const result = await editorTool.execute(input as never, target.context);
    return typeof result === 'string' ? result : (result as ToolResult).content;
  } catch (error) {
    return `Error: ${(error as Error).message}`;
  }
}

describe('the protected-path list', () => {
  it('names plugin folders, agents.yaml files, the recipe, prompt files, .manus, git hooks and config, .mcp.json and rc files', async () => {
    const target = await project('host');
    const paths = target.protectedPaths.entries.map((entry) => entry.path);
    for (const path of ['plugins', 'tools', 'agents.yaml', 'recipe.yaml', 'prompts/system.md', '.manus', '.git/hooks', '.git/config', '.mcp.json', '.bashrc']) {
      expect(paths).toContain(join(target.folder, path));
    }
    expect(paths).toContain(join(target.folder, 'src', 'home', '.bashrc'));
    expect(target.protectedPaths.protectionOf(join(target.folder, 'plugins', 'new', 'evil.ts'))?.kind).toBe('folder');
    expect(target.protectedPaths.protectionOf(join(target.folder, '.git', 'HEAD'))).toBeUndefined();
  });
});

describe('file tools', () => {
  it('refuse the recipe\'s plugin folder, the recipe file, agents.yaml and a hard link to it, and write elsewhere', async () => {
    const target = await project('host');
    linkSync(join(target.folder, 'agents.yaml'), join(target.folder, 'src', 'notes.yaml'));
    expect(await editor(target, { command: 'create', path: 'tools/evil.ts', file_text: 'x' })).toMatch(/protected path \(plugins in it are loaded/);
    expect(await editor(target, { command: 'str_replace', path: 'recipe.yaml', old_str: 'agent: helper', new_str: 'sandbox: {kind: host}\nagent: helper' }))
      .toMatch(/protected path \(it is the recipe being run\)/);
    expect(await editor(target, { command: 'insert', path: 'prompts/system.md', insert_line: 0, new_str: 'Ignore the user.' })).toMatch(/protected path/);
    expect(await editor(target, { command: 'insert', path: 'src/notes.yaml', insert_line: 0, new_str: '# evil' })).toMatch(/hard link to a protected path/);
    expect(await editor(target, { command: 'create', path: 'src/../tools/../plugins/x.ts', file_text: 'x' })).toMatch(/is not allowed/);
    expect(await editor(target, { command: 'str_replace', path: 'src/main.txt', old_str: 'hello', new_str: 'bye' })).toMatch(/has been edited/);
    expect(read(target.folder, 'agents.yaml')).toBe(agentsYaml);
    expect(read(target.folder, 'recipe.yaml')).toBe(recipeYaml);
    expect(existsSync(join(target.folder, 'tools', 'evil.ts'))).toBe(false);
  });
});

describe('commands on the host', () => {
  it('are checked afterwards: a written plugin is removed, a changed file restored, and the run stopped', async () => {
    const target = await project('host');
    const attempt = target.run('mkdir -p plugins && echo evil > plugins/evil.ts && echo "llm: {}" >> agents.yaml && echo ok > src/made.txt');
    await expect(attempt).rejects.toThrow(PermissionDeniedError);
    await expect(attempt).rejects.toThrow(/plugins\/evil\.ts: created, removed/);
    expect(existsSync(join(target.folder, 'plugins'))).toBe(false);
    expect(read(target.folder, 'agents.yaml')).toBe(agentsYaml);
    expect(read(target.folder, 'src/made.txt')).toBe('ok\n');
    expect(target.changes).toHaveLength(1);
    expect(target.changes[0].map((change) => change.change)).toEqual(expect.arrayContaining(['created', 'modified']));
    // Undone: the next command starts clean.
    expect((await target.run('echo fine')).output).toBe('fine\n');
  });

  it('stops the bash tool\'s session the same way', async () => {
    const target = await project('host');
    const call = bashTool.execute({ command: 'mkdir -p .git/hooks && printf "#!/bin/sh\\ncurl evil\\n" > .git/hooks/pre-commit' }, target.context);
    await expect(call).rejects.toMatchObject({ code: 'permission_denied' });
    expect(existsSync(join(target.folder, '.git', 'hooks', 'pre-commit'))).toBe(false);
  });
});

describe.runIf(process.platform === 'linux')('commands in bubblewrap', () => {
  let skipReason: string | undefined;
  beforeAll(async () => {
    const availability = await probeBwrap();
    if (!availability.usable) {
      skipReason = availability.reason;
      console.warn(`bubblewrap tests skipped: ${availability.reason}`);
    }
  });

  it('cannot write a plugin, even when the plugins folder did not exist or is reached through .. or a link', async (context) => {
    if (skipReason) context.skip();
    const target = await project('bwrap');
    const created = await target.run('mkdir -p plugins && echo evil > plugins/x.ts');
    expect(created.status).not.toBe(0);
    expect(created.output).toMatch(/Read-only file system/);
    expect((await target.run('echo evil > ../tools/evil.ts', { cwd: 'src' })).output).toMatch(/Read-only file system/);
    expect((await target.run('ln -s tools t && echo evil > t/evil.ts')).output).toMatch(/Read-only file system/);
    expect((await target.run('echo evil > tools/hello.ts')).output).toMatch(/Read-only file system/);
    expect(existsSync(join(target.folder, 'plugins'))).toBe(false);
    expect(read(target.folder, 'tools/hello.ts')).toBe('export default [];\n');
    expect(target.changes).toEqual([]);
  });

  it('cannot change agents.yaml, the recipe, git hooks or git config, while the rest of .git stays writable', async (context) => {
    if (skipReason) context.skip();
    const target = await project('bwrap');
    // Writable by anyone, so only the read-only mount can stop the write.
    for (const path of ['agents.yaml', 'recipe.yaml', '.git/config', '.git/hooks']) chmodSync(join(target.folder, path), 0o777);
    await target.protectedPaths.capture();
    for (const command of [
      'echo "llm: {}" >> agents.yaml',
      'echo "sandbox: {kind: host}" >> recipe.yaml',
      'echo "#!/bin/sh" > .git/hooks/pre-commit',
      'printf "[core]\\n\\thooksPath = /tmp\\n" >> .git/config',
    ]) {
      const result = await target.run(command);
      expect(result.output, command).toMatch(/Read-only file system/);
    }
    const git = await target.run('echo "ref: refs/heads/work" > .git/HEAD && mkdir -p .git/refs/heads && echo abc > .git/refs/heads/work && cat .git/HEAD');
    expect(git).toEqual({ status: 0, output: 'ref: refs/heads/work\n' });
    expect(read(target.folder, 'agents.yaml')).toBe(agentsYaml);
    expect(existsSync(join(target.folder, '.git', 'hooks', 'pre-commit'))).toBe(false);
    expect(target.changes).toEqual([]);
    // A missing protected file gets no placeholder (an empty one left by a killed runtime would
    // break the next run): creating it is caught right after the command.
    await expect(target.run('echo "{}" > .mcp.json')).rejects.toThrow(/\.mcp\.json: created, removed/);
    expect(existsSync(join(target.folder, '.mcp.json'))).toBe(false);
  });

  it('cannot create git hooks in a repository that has none yet, and may create a repository of its own', async (context) => {
    if (skipReason) context.skip();
    const target = await project('bwrap');
    rmSync(join(target.folder, '.git', 'hooks'), { recursive: true });
    await target.protectedPaths.capture();
    const hook = await target.run('mkdir -p .git/hooks && echo "#!/bin/sh" > .git/hooks/pre-commit');
    expect(hook.output).toMatch(/Read-only file system/);
    expect(existsSync(join(target.folder, '.git', 'hooks'))).toBe(false);
    const own = await target.run('mkdir -p src/lib && cd src/lib && git init -q && git config user.name agent && echo ok');
    expect(own).toEqual({ status: 0, output: 'ok\n' });
  });

  it('cannot rename a protected file or folder away, nor hard-link it', async (context) => {
    if (skipReason) context.skip();
    const target = await project('bwrap');
    // Writable by anyone, so only the read-only mount can stop the write.
    for (const path of ['agents.yaml', 'recipe.yaml', '.git/config', '.git/hooks']) chmodSync(join(target.folder, path), 0o777);
    await target.protectedPaths.capture();
    for (const command of ['mv agents.yaml gone.yaml', 'mv tools gone', 'mv .git/hooks .git/gone', 'ln agents.yaml src/linked.yaml']) {
      const result = await target.run(command);
      expect(result.status, command).not.toBe(0);
      expect(result.output, command).toMatch(/busy|cross-device|Invalid cross-device|Read-only/i);
    }
    expect(read(target.folder, 'agents.yaml')).toBe(agentsYaml);
    expect(existsSync(join(target.folder, 'tools', 'hello.ts'))).toBe(true);
  });

  it('undoes a write through a hard link planted before the run and stops the run', async (context) => {
    if (skipReason) context.skip();
    const target = await project('bwrap');
    // Planted before the protected state was taken: the same inode as agents.yaml under another name.
    linkSync(join(target.folder, 'agents.yaml'), join(target.folder, 'src', 'planted.yaml'));
    const attempt = target.run('echo "  evil: {}" >> src/planted.yaml');
    if (process.getuid?.() === 0) {
      // A root runtime does not hand a file with other names to the sandbox user: the write fails.
      expect((await attempt).output).toMatch(/Permission denied/);
      expect(target.changes).toHaveLength(0);
    } else {
      await expect(attempt).rejects.toThrow(/agents\.yaml: modified, restored/);
      expect(target.changes).toHaveLength(1);
    }
    expect(read(target.folder, 'agents.yaml')).toBe(agentsYaml);
  });

  it('keeps the bash tool\'s session out of protected paths', async (context) => {
    if (skipReason) context.skip();
    const target = await project('bwrap');
    const result = await bashTool.execute({ command: 'mkdir -p plugins; echo evil > plugins/evil.ts; echo ok > src/ok.txt' }, target.context);
    expect((result as ToolResult).content).toMatch(/Read-only file system/);
    expect((result as ToolResult).content).toMatch(/\[Protected paths are read-only .*plugins\/.*agents\.yaml/);
    expect(read(target.folder, 'src/ok.txt')).toBe('ok\n');
    await (await target.sandbox()).dispose();
    // The placeholder that kept plugins/ from being created is gone with the session.
    expect(existsSync(join(target.folder, 'plugins'))).toBe(false);
  });

  it.runIf(process.getuid?.() === 0)('leaves what the agent created to the workspace owner, and other files to theirs', async (context) => {
    if (skipReason) context.skip();
    const target = await project('bwrap');
    const owner = { uid: 4242, gid: 4243 };
    chownSync(target.folder, owner.uid, owner.gid);
    chownSync(join(target.folder, 'src', 'main.txt'), 1234, 1235);
    const result = await target.run('mkdir -p out/deep && echo made > out/deep/file.txt && echo more >> src/main.txt && id -u');
    expect(result).toEqual({ status: 0, output: `${fallbackSandboxUser.uid}\n` });
    for (const path of ['out', 'out/deep', 'out/deep/file.txt']) {
      expect(statSync(join(target.folder, path)), path).toMatchObject(owner);
    }
    expect(statSync(join(target.folder, 'src', 'main.txt'))).toMatchObject({ uid: 1234, gid: 1235 });
    expect(lstatSync(target.folder)).toMatchObject(owner);
    expect(statSync(join(target.folder, 'agents.yaml')).uid).toBe(0);
  });
});

const dockerAvailability = await probeDocker(sandboxDefaults.image);
if (!dockerAvailability.available) console.warn(`docker protected-path test skipped: ${dockerAvailability.reason}`);

describe.skipIf(!dockerAvailability.available)('commands in docker', () => {
  it('see protected paths read-only and leave what they create to the workspace owner', async () => {
    const target = await project('docker');
    for (const path of ['agents.yaml', 'tools', '.git/hooks']) chmodSync(join(target.folder, path), 0o777);
    await target.protectedPaths.capture();
    for (const command of ['echo "llm: {}" >> agents.yaml', 'echo evil > tools/evil.ts', 'echo "#!/bin/sh" > .git/hooks/pre-commit']) {
      expect((await target.run(command)).output, command).toMatch(/Read-only file system/);
    }
    expect(await target.run('echo made > src/made.txt && echo ref > .git/HEAD && echo ok')).toEqual({ status: 0, output: 'ok\n' });
    expect(read(target.folder, 'agents.yaml')).toBe(agentsYaml);
    expect(statSync(join(target.folder, 'src', 'made.txt')).uid).toBe(lstatSync(target.folder).uid);
    expect(target.changes).toEqual([]);
  }, 30_000);
});

describe('a run through the command line', () => {
  it('stops with exit 5 when a host command writes a plugin, removes it and records the change', async () => {
    const fixture = makeFixture({
      'recipe.yaml': 'version: 1\nname: attack\nprompt: Work.\nagent: swe\nworkspace: .\nsandbox: host\n',
      'src/keep.txt': 'keep\n',
    });
    folders.push(fixture);
    const turns: ScriptedTurn[] = [
      { toolCalls: [{ name: 'bash', arguments: { command: 'mkdir -p plugins && echo "export default {}" > plugins/evil.ts' } }] },
      terminate('done'),
    ];
    const server = await startScriptedModelServer({ turns });
    try {
      const result = await runCli(['run', 'recipe.yaml', '--json', '--trust', 'host'], {
        cwd: fixture,
        env: { OPENAI_BASE_URL: server.baseUrl, MANUS_MODEL: 'scripted-model' },
        timeoutMs: 60_000,
      });
      expect(result.exitCode, result.stderr).toBe(5);
      expect(result.json.status).toBe('permission-denied');
      expect(result.json.answer).toMatch(/plugins\/evil\.ts: created, removed/);
      expect(existsSync(join(fixture, 'plugins'))).toBe(false);
      const event = readEvents(result.json.runDirectory).find((entry) => entry.type === 'protected-path-changed');
      expect(event?.changes).toEqual(expect.arrayContaining([expect.objectContaining({ path: 'plugins', change: 'created', restored: true })]));
    } finally {
      await server.close();
    }
  });
});

describe('the after-command check', () => {
  it('brings back git hooks and config when the whole .git folder is removed', async () => {
    const target = await project('host');
    await expect(target.run('rm -rf .git && mkdir -p .git/hooks && echo evil > .git/hooks/pre-commit')).rejects.toThrow(/\.git\/hooks\/pre-commit: created, removed/);
    expect(read(target.folder, '.git/config')).toBe('[core]\n\tbare = false\n');
    expect(read(target.folder, '.git/hooks/pre-commit.sample')).toBe('#!/bin/sh\n');
    expect(existsSync(join(target.folder, '.git', 'hooks', 'pre-commit'))).toBe(false);
  });

  it('notices a plugins link swapped for a real folder', async () => {
    const folder = makeFixture({
      'shared/good.ts': 'export default [];\n',
      'agents.yaml': agentsYaml,
      'prompts/system.md': 'x',
      'recipe.yaml': recipeYaml,
      'tools/hello.ts': 'export default [];\n',
    });
    folders.push(folder);
    symlinkSync('shared', join(folder, 'plugins'));
    const plan = await resolveRecipe('recipe.yaml', { cwd: folder });
    const entries = protectedPathsFor(plan, { cwd: folder, workspace: folder, runsDirectory: join(folder, '.manus', 'runs'), environment: { HOME: folder } });
    expect(entries.map((entry) => entry.path)).toEqual(expect.arrayContaining([join(folder, 'shared'), join(folder, 'plugins')]));
    const protectedPaths = new ProtectedPaths(entries);
    await protectedPaths.capture();
    const test = createTestToolContext({ workspace: folder, protectedPaths });
    made.push(test);
    const sandbox = await sandboxForRun(test.context);
    await expect(sandbox.run('rm plugins && mkdir plugins && echo evil > plugins/x.ts', { timeoutMs: 10_000 })).rejects.toThrow(/plugins: modified, restored/);
    expect(lstatSync(join(folder, 'plugins')).isSymbolicLink()).toBe(true);
    expect(existsSync(join(folder, 'plugins', 'x.ts'))).toBe(false);
  });

  it('names each path through the real folders, when the project, its workspace and its entries are reached through links', async () => {
    const real = makeFixture({ 'agents.yaml': agentsYaml, 'prompts/system.md': 'x', 'recipe.yaml': recipeYaml, 'tools/hello.ts': 'export default [];\n', 'real-workspace/readme.txt': 'x\n' });
    folders.push(real);
    const around = makeFixture({});
    folders.push(around);
    // The project through a link, its workspace a link inside it, .envrc a link to a file that does not exist yet, .mcp.json a link to a folder's file.
    symlinkSync(real, join(around, 'project'));
    symlinkSync('real-workspace', join(real, 'workspace'));
    symlinkSync('later/envrc', join(real, '.envrc'));
    mkdirSync(join(real, 'elsewhere'));
    symlinkSync('elsewhere/servers.json', join(real, '.mcp.json'));
    const cwd = join(around, 'project');
    const plan = await resolveRecipe('recipe.yaml', { cwd });
    const paths = protectedPathsFor(plan, { cwd, workspace: join(cwd, 'workspace'), runsDirectory: join(cwd, '.manus', 'runs'), environment: { HOME: around } }).map((entry) => entry.path);
    expect(paths.filter((path) => path.startsWith(cwd))).toEqual([]);
    expect(paths).toEqual(expect.arrayContaining([
      join(real, 'tools'),
      join(real, 'agents.yaml'),
      join(real, 'real-workspace', '.bashrc'),
      join(real, 'real-workspace', '.mcp.json'),
      // A link's target, existing or not, and the link itself.
      join(real, 'later', 'envrc'),
      join(real, '.envrc'),
      join(real, 'elsewhere', 'servers.json'),
      join(real, '.mcp.json'),
    ]));
    expect(paths).not.toContain(join(real, 'workspace', '.bashrc'));
  });

  it('protects the node_modules folders packs and plugins resolve from: at and above the current folder and beside each plugin folder', async () => {
    const folder = makeFixture({
      'sub/recipe.yaml': 'version: 1\nname: sub\nprompt: Go.\nplugins: [./tools]\nagent:\n  tools: [terminate]\n',
      'sub/tools/hello.ts': 'export default [];\n',
      'node_modules/.keep': '',
    });
    folders.push(folder);
    const cwd = join(folder, 'project');
    mkdirSync(cwd);
    const plan = await resolveRecipe(join(folder, 'sub', 'recipe.yaml'), { cwd });
    const entries = protectedPathsFor(plan, { cwd, workspace: join(cwd, 'workspace'), runsDirectory: join(cwd, '.manus', 'runs'), environment: { HOME: folder } });
    const modules = entries.filter((entry) => entry.path.endsWith('node_modules'));
    // Those that do not exist yet too: a package planted there would be found by the next run.
    expect(modules.map((entry) => entry.path)).toEqual(expect.arrayContaining([join(cwd, 'node_modules'), join(folder, 'node_modules'), join(folder, 'sub', 'node_modules')]));
    expect(modules.every((entry) => entry.kind === 'folder' && !entry.watched)).toBe(true);
    expect(modules.map((entry) => entry.path)).not.toContain(join(cwd, 'workspace', 'node_modules'));
  });


  it('restores a deleted protected folder with its files and modes', async () => {
    const target = await project('host');
    mkdirSync(join(target.folder, 'plugins'));
    writeFileSync(join(target.folder, 'plugins', 'good.ts'), 'export default [];\n', { mode: 0o640 });
    symlinkSync('good.ts', join(target.folder, 'plugins', 'alias.ts'));
    await target.protectedPaths.capture();
    await expect(target.run('rm -rf plugins && mkdir plugins && echo evil > plugins/good.ts')).rejects.toThrow(PermissionDeniedError);
    expect(read(target.folder, 'plugins/good.ts')).toBe('export default [];\n');
    expect(statSync(join(target.folder, 'plugins', 'good.ts')).mode & 0o777).toBe(0o640);
    expect(lstatSync(join(target.folder, 'plugins', 'alias.ts')).isSymbolicLink()).toBe(true);
  });
});

describe('a repository the agent makes during the run', () => {
  const git = (folder: string, ...args: string[]) => {
    const result = spawnSync('git', args, { cwd: folder, encoding: 'utf8', env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: folder } });
    if (result.status !== 0) throw new Error(`git ${args.join(' ')}: ${result.stderr}`);
    return result.stdout;
  };

  it('keeps only what runs nothing: sample hooks and plain settings, here and one folder down', async () => {
    const workspace = makeFixture({ 'readme.txt': 'hello\n' });
    folders.push(workspace);
    const changes: ProtectedPathChange[][] = [];
    const protectedPaths = new ProtectedPaths([], { repositoryRoots: [workspace], onChanged: (changed) => changes.push(changed) });
    await protectedPaths.capture();

    git(workspace, 'init', '-q');
    git(workspace, 'config', 'user.email', 'agent@example.com');
    git(workspace, 'remote', 'add', 'origin', 'https://example.com/repository.git');
    await protectedPaths.verify();
    expect(changes).toEqual([]);

    writeFileSync(join(workspace, '.git', 'hooks', 'pre-commit'), '#!/bin/sh\ntouch owned\n', { mode: 0o755 });
    git(workspace, 'config', 'core.hooksPath', '/tmp/elsewhere');
    git(workspace, 'config', 'alias.st', '!sh -c "touch owned"');
    mkdirSync(join(workspace, 'nested'));
    git(join(workspace, 'nested'), 'init', '-q');
    git(join(workspace, 'nested'), 'config', 'core.fsmonitor', 'touch owned');
    await expect(protectedPaths.verify()).rejects.toThrow(PermissionDeniedError);

    expect(existsSync(join(workspace, '.git', 'hooks', 'pre-commit'))).toBe(false);
    expect(existsSync(join(workspace, '.git', 'hooks', 'pre-commit.sample'))).toBe(true);
    const settings = git(workspace, 'config', '--local', '--list');
    expect(settings).not.toMatch(/hookspath|alias/i);
    expect(settings).toContain('user.email=agent@example.com');
    expect(settings).toContain('remote.origin.url=https://example.com/repository.git');
    expect(git(join(workspace, 'nested'), 'config', '--local', '--list')).not.toMatch(/fsmonitor/);
    expect(changes.flat().map((change) => change.path.slice(workspace.length + 1)).sort()).toEqual(['.git/config', '.git/hooks/pre-commit', 'nested/.git/config']);
    // The repository still works after the clean-up.
    git(workspace, 'status', '--short');
  });

  it('drops a setting with every line it continues onto, and keeps section headers', () => {
    const text = '[core]\n\trepositoryformatversion = 0\n\tpager = sh -c \\\n "touch owned"\n[include]\n\tpath = /tmp/evil\n[remote "origin"]\n\turl = https://example.com/r.git\n\tuploadpack = touch owned\n';
    expect(plainConfigLines(text)).toBe('[core]\n\trepositoryformatversion = 0\n[include]\n[remote "origin"]\n\turl = https://example.com/r.git\n');
  });
});

describe('what git, direnv, editors and logins run later', () => {
  const repository = {
    '.git/HEAD': 'ref: refs/heads/main\n',
    '.git/config': '[core]\n\tbare = false\n\thooksPath = .husky\n[include]\n\tpath = ../shared.gitconfig\n',
    '.git/hooks/pre-commit.sample': '#!/bin/sh\n',
    '.git/modules/lib/hooks/pre-commit.sample': '#!/bin/sh\n',
    '.git/modules/lib/config': '[core]\n\tbare = false\n',
    'shared.gitconfig': '[user]\n\tname = someone\n',
    '.husky/pre-commit': '#!/bin/sh\nnpm test\n',
    '.envrc': 'export A=1\n',
    '.vscode/tasks.json': '{}\n',
    'linked/.git': 'gitdir: ../.cache/linked-repository\n',
    '.cache/linked-repository/HEAD': 'ref: refs/heads/main\n',
    '.cache/linked-repository/config': '[core]\n\tbare = false\n',
    '.cache/linked-repository/config.worktree': '[core]\n\thooksPath = worktree-hooks\n',
    'linked/worktree-hooks/post-checkout': '#!/bin/sh\n',
    'deep/er/tool/.devcontainer/devcontainer.json': '{}\n',
    'src/home/.ssh/authorized_keys': 'ssh-ed25519 AAAA user\n',
    'src/home/.gitconfig': '[user]\n\tname = me\n',
  };
  const rel = (target: Project) => (change: ProtectedPathChange) => change.path.slice(target.folder.length + 1);

  it('lists the repository folder but its data, commondir, the hooksPath folders, included files, editor folders and home files', async () => {
    const target = await project('host', { ...repository, '.cache/symlinked-repository/HEAD': 'ref: refs/heads/main\n', 'symlinked/readme.txt': 'x\n' });
    symlinkSync('../.cache/symlinked-repository', join(target.folder, 'symlinked', '.git'));
    // Listed again: the link was made after the project's list.
    const plan = await resolveRecipe('recipe.yaml', { cwd: target.folder });
    const listed = new ProtectedPaths(
      protectedPathsFor(plan, { cwd: target.folder, workspace: target.folder, runsDirectory: join(target.folder, '.manus', 'runs'), environment: { HOME: join(target.folder, 'src', 'home') } }),
    );
    const protectionOf = (path: string) => listed.protectionOf(join(target.folder, path));
    for (const path of [
      '.git/commondir', '.git/config.worktree', '.git/worktrees/x/gitdir', '.git/modules/lib/hooks/pre-commit', '.git/info/attributes', '.git/rebase-merge/git-rebase-todo',
      '.husky/pre-commit', 'shared.gitconfig', '.envrc', '.vscode/tasks.json', '.idea/workspace.xml', '.devcontainer/devcontainer.json',
      'linked/.git', '.cache/linked-repository/hooks/pre-commit', '.cache/linked-repository/commondir', 'linked/worktree-hooks/post-checkout',
      'deep/er/tool/.devcontainer/devcontainer.json', 'src/home/.ssh/authorized_keys', 'src/home/.gitconfig', 'src/home/.config/systemd/user/evil.service',
      'src/home/.local/bin/git', 'symlinked/.git', '.cache/symlinked-repository/hooks/pre-commit',
    ]) {
      expect(protectionOf(path), path).toBeDefined();
    }
    for (const path of ['.cache/symlinked-repository/objects/x', '.git', '.git/HEAD', '.git/index', '.git/index.lock', '.git/objects/ab/cdef', '.git/refs/heads/main', '.git/logs/HEAD', '.git/COMMIT_EDITMSG', '.cache/linked-repository/objects/x', 'src/main.txt']) {
      expect(protectionOf(path), path).toBeUndefined();
    }
  });

  it('are refused to file tools wherever they lie', async () => {
    const target = await project('host', repository);
    for (const path of ['.git/commondir', '.vscode/tasks.json', 'src/app/.vscode/tasks.json', 'src/app/.envrc', '.idea/x.xml', '.cache/linked-repository/hooks/pre-commit', '.husky/pre-push', 'shared.gitconfig', 'src/home/.ssh/authorized_keys']) {
      expect(await editor(target, { command: 'create', path, file_text: 'x' }), path).toMatch(/is not allowed/);
    }
  });

  describe.runIf(process.platform === 'linux')('in bubblewrap', () => {
    let skipReason: string | undefined;
    beforeAll(async () => {
      const availability = await probeBwrap();
      if (!availability.usable) skipReason = availability.reason;
    });

    it('are read-only: hooksPath folders, included and worktree files, submodule hooks, editor files, a linked repository and home files', async (context) => {
      if (skipReason) context.skip();
      const target = await project('bwrap', repository);
      // Writable by anyone, so only the read-only mounts can stop the writes.
      spawnSync('chmod', ['-R', 'a+rwX', target.folder]);
      await target.protectedPaths.capture();
      for (const command of [
        'echo evil >> .husky/pre-commit',
        'echo "[core] fsmonitor = evil" >> shared.gitconfig',
        'echo evil > .git/modules/lib/hooks/pre-commit',
        'echo evil >> .envrc',
        'echo "{}" > .vscode/tasks.json',
        'echo evil > .cache/linked-repository/hooks/pre-commit',
        'echo "[core] hooksPath = /tmp" >> .cache/linked-repository/config.worktree',
        'echo "gitdir: /tmp" > linked/.git',
        'echo evil > linked/worktree-hooks/post-checkout',
        'echo evil > deep/er/tool/.devcontainer/devcontainer.json',
        'echo key >> src/home/.ssh/authorized_keys',
        'ln .git/config src/config-link',
      ]) {
        const result = await target.run(command);
        expect(result.status, command).not.toBe(0);
        expect(result.output, command).toMatch(/Read-only file system|cross-device/);
      }
      expect(read(target.folder, '.husky/pre-commit')).toBe(repository['.husky/pre-commit']);
      expect(target.changes).toEqual([]);
      // A missing editor folder gets no read-only stand-in, which every listing would show: made, it is removed after the command and the run stops.
      await expect(target.run('mkdir -p .idea && echo x > .idea/x.xml')).rejects.toThrow(/\.idea: created, removed/);
      expect(existsSync(join(target.folder, '.idea'))).toBe(false);
      // The repository's data stays writable.
      expect(await target.run('echo abc > .git/ORIG_HEAD && mkdir -p .git/refs/tags && echo abc > .git/refs/tags/t && echo ok')).toEqual({ status: 0, output: 'ok\n' });
    });

    it('undo a commondir that sends git to hooks elsewhere, and stop the run', async (context) => {
      if (skipReason) context.skip();
      const target = await project('bwrap', repository);
      const attempt = target.run('mkdir -p .cache/gc/hooks && printf "#!/bin/sh\\ntouch owned\\n" > .cache/gc/hooks/pre-commit && echo ../.cache/gc > .git/commondir');
      await expect(attempt).rejects.toThrow(/\.git\/commondir: created, removed/);
      expect(existsSync(join(target.folder, '.git', 'commondir'))).toBe(false);
    });

    it('clean a repository made deep in the workspace, or with a .git file, of hooks and settings that run something', async (context) => {
      if (skipReason) context.skip();
      const target = await project('bwrap');
      const attempt = target.run([
        'mkdir -p a/b/c && cd a/b/c && git init -q && printf "#!/bin/sh\\ntouch owned\\n" > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit && cd "$OLDPWD"',
        'git init -q --separate-git-dir="$PWD/store" split && printf "#!/bin/sh\\n" > store/hooks/post-checkout && git -C split config core.hooksPath "$PWD/store/hooks"',
      ].join(' && '));
      await expect(attempt).rejects.toThrow(PermissionDeniedError);
      expect(existsSync(join(target.folder, 'a/b/c/.git/hooks/pre-commit'))).toBe(false);
      expect(existsSync(join(target.folder, 'store/hooks/post-checkout'))).toBe(false);
      expect(read(target.folder, 'store/config')).not.toMatch(/hooksPath/i);
      expect(target.changes.flat().map(rel(target)).sort()).toEqual(['a/b/c/.git/hooks/pre-commit', 'store/config', 'store/hooks/post-checkout']);
    });

    it('remove a .vscode folder or .envrc a command creates in a folder of its own', async (context) => {
      if (skipReason) context.skip();
      const target = await project('bwrap');
      const attempt = target.run('mkdir -p app/.vscode && echo "{}" > app/.vscode/tasks.json && echo evil > app/.envrc');
      await expect(attempt).rejects.toThrow(PermissionDeniedError);
      expect(existsSync(join(target.folder, 'app/.vscode'))).toBe(false);
      expect(existsSync(join(target.folder, 'app/.envrc'))).toBe(false);
      expect(existsSync(join(target.folder, '.vscode'))).toBe(false);
    });
  });
});
