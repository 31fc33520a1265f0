import { execFile } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { makeFixture, repositoryRoot, runCli } from './support/run-cli.js';
import { addRuntimeDependencies, installForDevelopment, manusOnPath, packTarball, runtimeDependenciesMissing, runtimeTarball, scratchProject } from './support/scratch-project.js';
import { scriptedModelName, startScriptedModelServer, type ScriptedModelServer } from './support/scripted-model-server.js';

const run = promisify(execFile);

let server: ScriptedModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const missing = runtimeDependenciesMissing();
if (missing) process.stdout.write(`the pack's test with the runtime installed is not run: ${missing}\n`);

describe('manus pack init', () => {
  const root = makeFixture({});
  const made = runCli(['pack', 'init', '@acme/greetings'], { cwd: root });
  const folder = join(root, 'greetings');

  it('writes a package.json with a manus field, a recipe, an agent, a plugin and a test', async () => {
    const result = await made;
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stderr).toContain('made the pack @acme/greetings in greetings');
    for (const file of ['package.json', 'agents.yaml', 'recipes/hello.yaml', 'plugins/greet.ts', 'test/hello.test.mjs', 'README.md']) {
      expect(existsSync(join(folder, file)), file).toBe(true);
    }
    const manifest = JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8'));
    expect(manifest).toMatchObject({
      name: '@acme/greetings',
      manus: { recipes: 'recipes', agents: 'agents.yaml', plugins: 'plugins' },
      scripts: { test: 'node --test test/' },
      peerDependenciesMeta: { 'manus-runtime': { optional: true } },
    });
    expect(manifest.dependencies).toBeUndefined();
  });

  it("uses in its recipe only check kinds that the README's section on checks documents", async () => {
    await made;
    const readme = readFileSync(join(repositoryRoot, 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('## Checks, budgets and CI'), readme.indexOf('\n## ', readme.indexOf('## Checks, budgets and CI') + 1));
    const kinds = [...readFileSync(join(folder, 'recipes', 'hello.yaml'), 'utf8').matchAll(/^ {2}- (\w+):/gm)].map((match) => match[1]);
    expect(kinds).toEqual(['answer_matches']);
    for (const kind of kinds) expect(section).toContain(`- ${kind}:`);
  });

  it('passes manus validate', async () => {
    await made;
    const result = await runCli(['validate', 'greetings'], { cwd: root });
    expect(result.stderr).toBe('1 file(s) checked: 0 error(s), 0 warning(s)\n');
    expect(result.exitCode).toBe(0);
  });

  it('passes its own test, which runs the recipe against a scripted model', async () => {
    await made;
    const { stdout } = await run(process.execPath, ['--test', 'test/'], {
      cwd: folder,
      env: { PATH: `${manusOnPath()}:${process.env.PATH}`, HOME: process.env.HOME },
      timeout: 60_000,
    });
    expect(stdout).toContain('# pass 1');
    expect(stdout).toContain('# fail 0');
  });

  it.skipIf(missing !== undefined)('passes its own test right after the runtime is installed into it from its tarball, with no manus on PATH', async () => {
    const fresh = makeFixture({});
    const init = await runCli(['pack', 'init', 'greetings'], { cwd: fresh });
    expect(init.exitCode, init.stderr).toBe(0);
    const pack = join(fresh, 'greetings');
    // As `node --test` is run by hand: no manus on PATH (`npm test` would add node_modules/.bin).
    const nodeTest = () => run(process.execPath, ['--test', 'test/'], {
      cwd: pack,
      env: { PATH: `${dirname(process.execPath)}:/usr/bin:/bin`, HOME: process.env.HOME },
      timeout: 60_000,
    }).catch((error: { stdout: string }) => error);
    const before = await nodeTest();
    expect(before.stdout).toContain('no manus command: install the runtime into this pack');
    addRuntimeDependencies(pack);
    installForDevelopment(pack, [runtimeTarball()]);
    expect(JSON.parse(readFileSync(join(pack, 'package.json'), 'utf8')).devDependencies['manus-runtime']).toBeDefined();
    const { stdout } = await nodeTest();
    expect(stdout).toContain('# pass 1');
    expect(stdout).toContain('# fail 0');
  }, 240_000);

  it('installs from its tarball and runs as <package>/<recipe>', async () => {
    await made;
    const project = scratchProject([packTarball(folder, root)]);
    server = await startScriptedModelServer({
      turns: [
        { toolCalls: [{ id: 'call_1', name: 'greet', arguments: { name: 'Grace' } }] },
        { toolCalls: [{ id: 'call_2', name: 'terminate', arguments: { status: 'success', message: 'Hello, Grace!' } }] },
      ],
    });
    const result = await runCli(['run', '@acme/greetings/hello', '--param', 'name=Grace', '--json', '--quiet'], { cwd: project, env: { OPENAI_BASE_URL: server.baseUrl, MANUS_MODEL: scriptedModelName } });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.json).toMatchObject({ status: 'success', answer: 'Hello, Grace!', checks: [expect.objectContaining({ passed: true })] });
    expect(JSON.stringify(server.requests[1].body)).toContain('Hello, Grace!');
  });

  it('refuses a folder that is not empty, and a name npm would not take', async () => {
    await made;
    writeFileSync(join(root, 'greetings', 'extra.txt'), 'mine');
    const again = await runCli(['pack', 'init', 'greetings'], { cwd: root });
    expect(again.exitCode).toBe(2);
    expect(again.stderr).toContain('already exists and is not empty; choose another folder with --dir');
    const badName = await runCli(['pack', 'init', 'Not A Name'], { cwd: root });
    expect(badName.exitCode).toBe(2);
    expect(badName.stderr).toContain("'Not A Name' is not an npm package name");
    const elsewhere = await runCli(['pack', 'init', 'greetings', '--dir', 'packs/second'], { cwd: root });
    expect(elsewhere.exitCode, elsewhere.stderr).toBe(0);
    expect(existsSync(join(root, 'packs', 'second', 'recipes', 'hello.yaml'))).toBe(true);
  });
});
