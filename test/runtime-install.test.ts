import { execFileSync, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { packScaffold } from '../cli/pack-scaffold.js';
import { makeFixture, repositoryRoot, runCli } from './support/run-cli.js';
import { npmEnvironment, runtimeDependenciesMissing, runtimeTarball, scratchProject } from './support/scratch-project.js';

const missing = runtimeDependenciesMissing();
if (missing) process.stdout.write(`installing the runtime's tarball is not tested: ${missing}\n`);

describe("the runtime's tarball", () => {
  it('holds the built command, its schemas, agents and built-in plugins, and none of the tests', () => {
    const entries = execFileSync('tar', ['-tzf', runtimeTarball()], { encoding: 'utf8' }).split('\n');
    for (const file of ['dist/bundle/main.js', 'dist/bundle/manus.cjs', 'dist/bundle/index.mjs', 'dist/bundle/plugin-manifest.json', 'dist/runtime/index.d.ts', 'schemas/recipe.schema.json', 'agents.yaml', 'plugins/files/index.ts', 'recipes/recordings/swe.jsonl', 'README.md']) {
      expect(entries, file).toContain(`package/${file}`);
    }
    expect(entries.filter((entry) => /^package\/(test|bench|scripts|\.ci)\//.test(entry))).toEqual([]);
    // The build's module graph is for the benchmark; the package does without it.
    expect(entries).not.toContain('package/dist/bundle-metafile.json');
  });

  it.skipIf(missing !== undefined)('installs into a new project, where `npx --no-install manus` runs the installed command: doctor and a replay', async () => {
    const project = scratchProject([runtimeTarball()], { runtimeDependencies: true });
    expect(realpathSync(join(project, 'node_modules', '.bin', 'manus'))).toBe(join(project, 'node_modules', 'manus-runtime', 'dist', 'bundle', 'main.js'));
    const npx = { cwd: project, command: ['npx', '--no-install', 'manus'], env: npmEnvironment(), timeoutMs: 90_000 };

    const doctor = await runCli(['doctor', '--json'], npx);
    // 7: something is missing on this machine (no model is configured here); the checks all ran.
    expect([0, 7], doctor.stderr).toContain(doctor.exitCode);
    expect(doctor.json.findings.map((finding: { check: string }) => finding.check)).toEqual(expect.arrayContaining(['model key', 'model endpoint']));

    const replay = await runCli(['replay', 'node_modules/manus-runtime/recipes/recordings/swe.jsonl', '--json'], npx);
    expect(replay.exitCode, replay.stderr).toBe(0);
    expect(replay.json).toMatchObject({ status: 'success', steps: 5 });
    expect(replay.json.runDirectory.startsWith(join(project, '.manus', 'runs'))).toBe(true);
    expect(replay.stderr).toContain('replay matched the recording (5 steps)');

    // A TypeScript plugin compiles with the esbuild executable the install brought, into the user's cache.
    writeFileSync(join(project, 'shout.ts'), "import { defineTool } from 'manus-runtime';\ninterface Input { text: string }\nexport default defineTool<Input>({ name: 'shout', description: 'Shouts.', parameters: { type: 'object' }, execute: ({ text }: Input) => text.toUpperCase() });\n");
    const cache = makeFixture({});
    const validated = await runCli(['validate', 'shout.ts'], { ...npx, env: { ...npx.env, MANUS_CACHE_DIR: cache } });
    expect(validated.exitCode, validated.stderr).toBe(0);
    expect(readdirSync(join(cache, 'compiled-plugins'))).toEqual([expect.stringMatching(/^[0-9a-f]{64}\.cjs$/)]);
  }, 240_000);
});

describe('the commands the README and docs give', () => {
  it('run manus with npx --no-install, which never fetches a package of that name from the registry', () => {
    const documents = [join(repositoryRoot, 'README.md'), ...readdirSync(join(repositoryRoot, 'docs')).filter((name) => name.endsWith('.md')).map((name) => join(repositoryRoot, 'docs', name))];
    const texts = [...documents.map((file) => [file, readFileSync(file, 'utf8')]), ['the README of manus pack init', packScaffold('@acme/greetings', '0.1.0')['README.md']]];
    for (const [name, text] of texts) {
      expect(text.match(/npx (?!--no-install )(?:-\S+ )*manus\b.*/g) ?? [], name).toEqual([]);
    }
    expect(readFileSync(join(repositoryRoot, 'README.md'), 'utf8')).toContain('## Install into your own project');
  });
});

/**
 * A folder laid out as the checkout, with a copy of its bundle: the sources and dependencies are
 * links to the checkout's, so the bundle can be built again there without touching the checkout's.
 */
function packageWithBundle(): string {
  const root = makeFixture({});
  for (const part of ['runtime', 'cli', 'plugins', 'schemas', 'node_modules', 'package.json']) symlinkSync(join(repositoryRoot, part), join(root, part));
  mkdirSync(join(root, 'dist'));
  symlinkSync(join(repositoryRoot, 'dist', 'schemas'), join(root, 'dist', 'schemas'));
  cpSync(join(repositoryRoot, 'dist', 'bundle'), join(root, 'dist', 'bundle'), { recursive: true });
  return root;
}

describe('building the bundle', () => {
  it('never leaves a file of dist/bundle missing, so a manus started from the folder while it builds runs', async () => {
    const root = packageWithBundle();
    const bundle = join(root, 'dist', 'bundle');
    const files = readdirSync(bundle);
    writeFileSync(join(bundle, 'left-over.cjs'), '');
    const build = spawn(process.execPath, [join(repositoryRoot, 'scripts', 'bundle.mjs')], { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    build.stderr.on('data', (chunk) => (stderr += chunk));
    const missing = new Set<string>();
    let looks = 0;
    const finished = new Promise<number | null>((resolve) => build.on('close', resolve));
    let done = false;
    void finished.then(() => (done = true));
    while (!done) {
      for (const file of files) if (!existsSync(join(bundle, file))) missing.add(file);
      looks += 1;
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    expect(await finished, stderr).toBe(0);
    expect(looks).toBeGreaterThan(10);
    expect([...missing]).toEqual([]);
    expect(readdirSync(bundle).sort()).toEqual([...files].sort());
    expect(readdirSync(join(root, 'dist')).sort()).toEqual(['bundle', 'bundle-metafile.json', 'schemas']);
    const version = await runCli(['--version'], { cwd: root, entry: join(bundle, 'main.js') });
    expect(version.exitCode, version.stderr).toBe(0);
  }, 60_000);
});
