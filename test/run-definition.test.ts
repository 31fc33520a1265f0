/**
 * A queued batch's run definition carries the npm packages its plugins import: found as Node finds
 * them, with what they depend on, placed so that a worker's copy resolves the same packages, and
 * nothing else from node_modules.
 */
import { mkdirSync, mkdtempSync, realpathSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { collectRunDefinition, materialiseRunDefinition, type RunDefinition, type RunDefinitionOptions } from '../runtime/applications/batch/run-definition.js';
import { importedPackages } from '../runtime/applications/batch/imported-packages.js';
import { resolveRecipe } from '../runtime/runs/recipe/resolve-recipe.js';
import { UsageError } from '../runtime/contract/errors.js';
import { loadPluginFiles } from '../runtime/kernel/plugin-loading/load-plugins.js';
import { removedAfterEach } from './support/removed-folders.js';

const { fixture, remove } = removedAfterEach();

/** A package folder's files: package.json with `manifest` and an entry module. */
function npmPackage(folder: string, name: string, manifest: Record<string, unknown>, files: Record<string, string>): Record<string, string> {
  const entries: Record<string, string> = { [`${folder}/package.json`]: JSON.stringify({ name, version: '1.0.0', ...manifest }) };
  for (const [path, text] of Object.entries(files)) entries[`${folder}/${path}`] = text;
  return entries;
}

function recipe(tools: string[], extra = ''): string {
  return `version: 1\nname: dependencies\nprompt: Do it.\n${extra}agent:\n  tools: [${[...tools, 'terminate'].join(', ')}]\n`;
}

async function definitionOf(folder: string, options: RunDefinitionOptions = {}): Promise<RunDefinition> {
  const plan = await resolveRecipe('recipe.yaml', { cwd: folder, environment: { XDG_CONFIG_HOME: join(folder, 'no-config') } });
  return collectRunDefinition(plan, folder, options);
}

function shippedPackages(definition: RunDefinition): string[] {
  const packages = new Set<string>();
  for (const { path } of definition.files) {
    const match = /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\/package\.json$/.exec(path);
    if (match) packages.add(match[1]);
  }
  return [...packages].sort();
}

/** Materialises the definition in a fresh cache, with the original folder moved away first. */
function materialiseWithoutOriginal(definition: RunDefinition, original: string): string {
  renameSync(original, `${original}.moved`);
  remove(`${original}.moved`);
  const cache = realpathSync(mkdtempSync(join(tmpdir(), 'manus-test-definition-cache-')));
  remove(cache);
  return materialiseRunDefinition(definition, definition.hash, cache);
}

async function runTool(pluginFile: string, name: string, input: Record<string, unknown>): Promise<unknown> {
  const loaded = await loadPluginFiles([pluginFile]);
  expect(loaded.diagnostics).toEqual([]);
  const tool = loaded.tools.get(name)?.tool;
  expect(tool, `${name} from ${pluginFile}`).toBeDefined();
  return tool!.execute(input as never, {} as never);
}

/**
 * A project whose plugin imports an ES module package (with a nested and a hoisted dependency, an
 * optional one and a missing peer), a scoped package through a subpath, a CommonJS package by
 * `require` and one by `import()`; node_modules also holds packages nothing imports.
 */
function projectWithImports(): string {
  return fixture({
    'recipe.yaml': recipe(['decorate']),
    'plugins/decorate/index.ts': [
      "import { defineTool } from 'manus-runtime';",
      "import { readFileSync } from 'node:fs';",
      "import { join } from 'path';",
      "import { frame } from 'frame-kit';",
      "import { upper } from '@acme/letters/upper';",
      "import { pad } from './pad.cjs';",
      "// import 'commented-kit';",
      "const note = \"require('quoted-kit')\";",
      '',
      'interface Input { text: string }',
      '',
      'export default defineTool<Input>({',
      "  name: 'decorate',",
      "  description: 'Decorates a text.',",
      "  parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },",
      '  async execute({ text }: Input): Promise<string> {',
      "    const { stamp } = await import('stamp-kit');",
      "    return [frame(upper(text)), pad(text), stamp(text), typeof readFileSync, typeof join, note.length].join(' ');",
      '  },',
      '});',
      '',
    ].join('\n'),
    'plugins/decorate/pad.cjs': "const padKit = require('pad-kit');\nexports.pad = (text) => padKit.pad(text);\n",
    ...npmPackage('node_modules/frame-kit', 'frame-kit', {
      type: 'module',
      main: 'index.js',
      dependencies: { 'edge-chars': '1.0.0', 'case-kit': '2.0.0' },
      optionalDependencies: { 'shine-kit': '1.0.0' },
      peerDependencies: { 'absent-peer': '1.0.0' },
    }, { 'index.js': "import { edge } from 'edge-chars';\nimport { version } from 'case-kit';\nimport { shine } from 'shine-kit';\nexport const frame = (text) => edge() + shine(text) + edge() + version;\n" }),
    // frame-kit's own copy of case-kit, a version other than the hoisted one nothing here imports.
    ...npmPackage('node_modules/frame-kit/node_modules/case-kit', 'case-kit', { main: 'index.js' }, { 'index.js': "exports.version = 'v2';\n" }),
    ...npmPackage('node_modules/case-kit', 'case-kit', { main: 'index.js' }, { 'index.js': "exports.version = 'v1';\n" }),
    ...npmPackage('node_modules/edge-chars', 'edge-chars', { main: 'index.js', dependencies: { 'bar-chars': '1.0.0' } }, { 'index.js': "exports.edge = () => require('bar-chars').bar;\n" }),
    ...npmPackage('node_modules/bar-chars', 'bar-chars', { main: 'index.js' }, { 'index.js': "exports.bar = '|';\n", '.git/HEAD': 'ref: refs/heads/main\n' }),
    ...npmPackage('node_modules/shine-kit', 'shine-kit', { main: 'index.js' }, { 'index.js': "exports.shine = (text) => '*' + text + '*';\n" }),
    ...npmPackage('node_modules/@acme/letters', '@acme/letters', { exports: { './upper': './upper.js' } }, { 'upper.js': 'exports.upper = (text) => text.toUpperCase();\n' }),
    ...npmPackage('node_modules/pad-kit', 'pad-kit', { main: 'index.js' }, { 'index.js': "exports.pad = (text) => '[' + text + ']';\n" }),
    ...npmPackage('node_modules/stamp-kit', 'stamp-kit', { type: 'module', exports: './stamp.mjs' }, { 'stamp.mjs': "export const stamp = (text) => text.length + ' letters';\n" }),
    ...npmPackage('node_modules/commented-kit', 'commented-kit', { main: 'index.js' }, { 'index.js': '' }),
    ...npmPackage('node_modules/quoted-kit', 'quoted-kit', { main: 'index.js' }, { 'index.js': '' }),
    ...npmPackage('node_modules/unrelated-kit', 'unrelated-kit', { main: 'index.js' }, { 'index.js': '' }),
    ...npmPackage('node_modules/manus-runtime', 'manus-runtime', { main: 'index.js' }, { 'index.js': "throw new Error('not the runtime');\n" }),
  });
}

describe('the npm packages a project plugin imports', () => {
  it('are shipped with their dependencies, nested and hoisted, and nothing else from node_modules', async () => {
    const project = projectWithImports();
    const definition = await definitionOf(project);
    expect(shippedPackages(definition)).toEqual([
      'node_modules/@acme/letters',
      'node_modules/bar-chars',
      'node_modules/edge-chars',
      'node_modules/frame-kit',
      'node_modules/frame-kit/node_modules/case-kit',
      'node_modules/pad-kit',
      'node_modules/shine-kit',
      'node_modules/stamp-kit',
    ]);
    const paths = definition.files.map((file) => file.path);
    expect(paths).toContain('node_modules/frame-kit/index.js');
    expect(paths).toContain('node_modules/@acme/letters/upper.js');
    expect(paths).toContain('plugins/decorate/pad.cjs');
    expect(paths.filter((path) => path.includes('.git/'))).toEqual([]);
  });

  it('load from the materialised definition alone, with the original project gone', async () => {
    const project = projectWithImports();
    const definition = await definitionOf(project);
    const folder = materialiseWithoutOriginal(definition, project);
    await expect(runTool(join(folder, 'plugins/decorate/index.ts'), 'decorate', { text: 'owl' })).resolves.toBe('|*OWL*|v2 [owl] 3 letters function function 21');
  });

  it('are not read for a definition that goes nowhere (a batch on this machine)', async () => {
    const project = projectWithImports();
    const definition = await definitionOf(project, { shipped: false });
    expect(shippedPackages(definition)).toEqual([]);
    expect(definition.files.map((file) => file.path)).toContain('plugins/decorate/pad.cjs');
  });

  it('are part of the hash: changing a dependency changes the definition', async () => {
    const project = projectWithImports();
    const before = await definitionOf(project);
    writeFileSync(join(project, 'node_modules/bar-chars/index.js'), "exports.bar = '#';\n");
    const after = await definitionOf(project);
    expect(after.hash).not.toBe(before.hash);
  });

  it('over the size limit stop the batch with the largest packages named', async () => {
    const project = fixture({
      'recipe.yaml': recipe(['weigh']),
      'plugins/weigh.ts': "import { defineTool } from 'manus-runtime';\nimport heavy from 'heavy-kit';\nexport default defineTool({ name: 'weigh', description: 'Weighs.', parameters: { type: 'object' }, execute: () => String(heavy.length) });\n",
      ...npmPackage('node_modules/heavy-kit', 'heavy-kit', { main: 'index.js', dependencies: { 'light-kit': '1.0.0' } }, { 'index.js': `module.exports = '${'x'.repeat(8000)}';\n` }),
      ...npmPackage('node_modules/light-kit', 'light-kit', { main: 'index.js' }, { 'index.js': '' }),
    });
    const error = await definitionOf(project, { dependencySizeLimit: 4096 }).catch((failure: unknown) => failure);
    expect(UsageError.isInstance(error), String(error)).toBe(true);
    expect((error as Error).message).toMatch(/come to \d\.\d KB .*over the 4\.0 KB a queued batch ships: heavy-kit 7\.\d KB, light-kit \d+ bytes; trim the plugins' dependencies/);
    await expect(definitionOf(project, { dependencySizeLimit: 64 * 1024 })).resolves.toMatchObject({ hash: expect.stringMatching(/^sha256:/) });
  });
});

describe('a pack with dependencies of its own', () => {
  it('ships the nested dependency its plugin imports and the hoisted one it declares, and they resolve', async () => {
    const project = fixture({
      'recipe.yaml': recipe(['greet'], 'packs: [acme-greetings]\n'),
      ...npmPackage('node_modules/acme-greetings', 'acme-greetings', { manus: {}, dependencies: { 'greeting-words': '1.0.0', 'declared-kit': '1.0.0' }, peerDependencies: { 'manus-runtime': '*' } }, {
        'agents.yaml': 'version: 1\nagents: {}\n',
        'plugins/greet.ts': "import { defineTool } from 'manus-runtime';\nimport { hello } from 'greeting-words';\nexport default defineTool({ name: 'greet', description: 'Greets.', parameters: { type: 'object', properties: { name: { type: 'string' } } }, execute: ({ name }: { name: string }) => hello(name) });\n",
      }),
      ...npmPackage('node_modules/acme-greetings/node_modules/greeting-words', 'greeting-words', { main: 'index.js' }, { 'index.js': "exports.hello = (name) => 'Hello, ' + name;\n" }),
      ...npmPackage('node_modules/declared-kit', 'declared-kit', { main: 'index.js' }, { 'index.js': '' }),
      ...npmPackage('node_modules/manus-runtime', 'manus-runtime', { main: 'index.js' }, { 'index.js': '' }),
    });
    const definition = await definitionOf(project);
    expect(shippedPackages(definition)).toEqual(['node_modules/acme-greetings', 'node_modules/acme-greetings/node_modules/greeting-words', 'node_modules/declared-kit']);
    const folder = materialiseWithoutOriginal(definition, project);
    await expect(runTool(join(folder, 'node_modules/acme-greetings/plugins/greet.ts'), 'greet', { name: 'Ada' })).resolves.toBe('Hello, Ada');
  });
});

describe("a pack's declared dependencies", () => {
  it('are package names only: a key that is a path ships nothing from where it leads', async () => {
    const project = fixture({
      'recipe.yaml': recipe(['greet'], 'packs: [acme-paths]\n'),
      ...npmPackage('node_modules/acme-paths', 'acme-paths', { manus: {}, dependencies: { '../private': '1.0.0', '../../private': '1.0.0', '@acme/../../private': '1.0.0', '..': '1.0.0' } }, {
        'plugins/greet.ts': "import { defineTool } from 'manus-runtime';\nexport default defineTool({ name: 'greet', description: 'Greets.', parameters: { type: 'object' }, execute: () => 'hello' });\n",
      }),
      ...npmPackage('private', 'private-notes', { main: 'index.js' }, { 'notes.txt': 'not for the queue' }),
    });
    const definition = await definitionOf(project);
    expect(definition.files.map((file) => file.path).filter((path) => path.includes('notes') || path.startsWith('private'))).toEqual([]);
    expect(JSON.stringify(definition)).not.toContain(Buffer.from('not for the queue').toString('base64'));
  });
});

describe('packages outside the ordinary layout', () => {
  it('a package hoisted above the batch folder goes into its node_modules; another copy there sends the hoisted one nested', async () => {
    const monorepo = fixture({
      ...npmPackage('node_modules/hoisted-kit', 'hoisted-kit', { main: 'index.js', dependencies: { 'version-kit': '1.0.0' } }, { 'index.js': "exports.describe = () => 'hoisted with ' + require('version-kit').version;\n" }),
      ...npmPackage('node_modules/version-kit', 'version-kit', { main: 'index.js' }, { 'index.js': "exports.version = 'v1';\n" }),
      'packages/app/recipe.yaml': recipe(['describe']),
      'packages/app/plugins/describe.ts': "import { defineTool } from 'manus-runtime';\nimport { describe } from 'hoisted-kit';\nimport { version } from 'version-kit';\nexport default defineTool({ name: 'describe', description: 'Describes.', parameters: { type: 'object' }, execute: () => describe() + ', app with ' + version });\n",
      ...npmPackage('packages/app/node_modules/version-kit', 'version-kit', { main: 'index.js' }, { 'index.js': "exports.version = 'v2';\n" }),
    });
    const app = join(monorepo, 'packages/app');
    const definition = await definitionOf(app);
    expect(shippedPackages(definition)).toEqual(['node_modules/hoisted-kit', 'node_modules/hoisted-kit/node_modules/version-kit', 'node_modules/version-kit']);
    const folder = materialiseWithoutOriginal(definition, monorepo);
    await expect(runTool(join(folder, 'plugins/describe.ts'), 'describe', {})).resolves.toBe('hoisted with v1, app with v2');
  });

  it('a linked package is shipped with its real contents where the link is', async () => {
    const elsewhere = fixture({
      ...npmPackage('linked-kit', 'linked-kit', { main: 'index.js', dependencies: { 'linked-dependency': '1.0.0' } }, { 'index.js': "exports.linked = () => 'linked ' + require('linked-dependency').word;\n" }),
      ...npmPackage('linked-kit/node_modules/linked-dependency', 'linked-dependency', { main: 'index.js' }, { 'index.js': "exports.word = 'here';\n" }),
    });
    const project = fixture({
      'recipe.yaml': recipe(['link_check']),
      'plugins/link-check.ts': "import { defineTool } from 'manus-runtime';\nimport { linked } from 'linked-kit';\nexport default defineTool({ name: 'link_check', description: 'Checks.', parameters: { type: 'object' }, execute: () => linked() });\n",
    });
    mkdirSync(join(project, 'node_modules'));
    symlinkSync(join(elsewhere, 'linked-kit'), join(project, 'node_modules/linked-kit'));
    const definition = await definitionOf(project);
    expect(shippedPackages(definition)).toEqual(['node_modules/linked-kit', 'node_modules/linked-kit/node_modules/linked-dependency']);
    rmSync(elsewhere, { recursive: true });
    const folder = materialiseWithoutOriginal(definition, project);
    await expect(runTool(join(folder, 'plugins/link-check.ts'), 'link_check', {})).resolves.toBe('linked here');
  });

  it('a folder in node_modules without a package.json, such as a link to a private folder, is not shipped', async () => {
    const privateFolder = fixture({ 'id_ed25519': 'a private key\n', 'index.js': "exports.key = 'none';\n" });
    const project = fixture({
      'recipe.yaml': recipe(['peek']),
      'plugins/peek.ts': "import { defineTool } from 'manus-runtime';\nexport default defineTool({ name: 'peek', description: 'Peeks.', parameters: { type: 'object' }, execute: async () => (await import('keys-kit')).key });\n",
    });
    mkdirSync(join(project, 'node_modules'));
    symlinkSync(privateFolder, join(project, 'node_modules/keys-kit'));
    const definition = await definitionOf(project);
    expect(definition.files.map((file) => file.path).filter((path) => path.startsWith('node_modules/'))).toEqual([]);
  });
});

describe('links in what a definition ships', () => {
  it("a user's plugin file linked from elsewhere in the project ships, and runs from the definition", async () => {
    const project = fixture({
      'recipe.yaml': recipe(['shared_greet']),
      'shared/tools/greet.ts': "import { defineTool } from 'manus-runtime';\nexport default defineTool({ name: 'shared_greet', description: 'Greets.', parameters: { type: 'object' }, execute: () => 'hello from shared' });\n",
    });
    mkdirSync(join(project, 'plugins'));
    symlinkSync('../shared/tools/greet.ts', join(project, 'plugins/greet.ts'));
    const definition = await definitionOf(project);
    expect(definition.files.map((file) => file.path)).toContain('plugins/greet.ts');
    const folder = materialiseWithoutOriginal(definition, project);
    await expect(runTool(join(folder, 'plugins/greet.ts'), 'shared_greet', {})).resolves.toBe('hello from shared');
  });

  it("a package's own link to a file inside it ships that file's contents, and the package loads from the definition", async () => {
    const project = fixture({
      'recipe.yaml': recipe(['inner_link']),
      'plugins/inner-link.ts': "import { defineTool } from 'manus-runtime';\nimport { word } from 'inner-kit';\nexport default defineTool({ name: 'inner_link', description: 'Checks.', parameters: { type: 'object' }, execute: () => word });\n",
      ...npmPackage('node_modules/inner-kit', 'inner-kit', { main: 'index.js' }, { 'lib/implementation.js': "exports.word = 'linked inside';\n" }),
    });
    symlinkSync('lib/implementation.js', join(project, 'node_modules/inner-kit/index.js'));
    const definition = await definitionOf(project);
    const shipped = definition.files.find((file) => file.path === 'node_modules/inner-kit/index.js');
    expect(Buffer.from(shipped?.content ?? '', 'base64').toString('utf8')).toBe("exports.word = 'linked inside';\n");
    const folder = materialiseWithoutOriginal(definition, project);
    await expect(runTool(join(folder, 'plugins/inner-link.ts'), 'inner_link', {})).resolves.toBe('linked inside');
  });

  it("a pack whose plugins folder leads outside the pack stops the batch, naming the folder", async () => {
    const outside = fixture({ 'id_ed25519': 'a private key\n' });
    const project = fixture({
      'recipe.yaml': 'version: 1\nname: linked-pack\nprompt: Do it.\npacks: [acme-pack]\nagent:\n  tools: [terminate]\n',
      ...npmPackage('node_modules/acme-pack', 'acme-pack', { manus: {}, peerDependencies: { 'manus-runtime': '*' } }, {}),
    });
    symlinkSync(outside, join(project, 'node_modules/acme-pack/plugins'));
    const plan = await resolveRecipe('recipe.yaml', { cwd: project, environment: { XDG_CONFIG_HOME: join(project, 'no-config') } });
    expect(() => collectRunDefinition(plan, project)).toThrow(/acme-pack[\\/]plugins leads outside/);
  });
});

describe('reading the packages a plugin imports', () => {
  it('finds every form of import, and none in comments, strings, templates or regular expressions', () => {
    const source = [
      '#!/usr/bin/env node',
      "import def, { a } from '@scope/kit/deep/file.js';",
      "import type { Shape } from 'types-only-kit';",
      "export * from 'reexport-kit';",
      "export { b } from \"named-reexport-kit\";",
      "import 'side-effect-kit';",
      "import legacy = require('ts-require-kit');",
      "const lazy = await import('lazy-kit/sub');",
      'const computed = await import(name);',
      "const found = require.resolve('resolved-kit/package.json');",
      "const plain = require(`template-kit`);",
      "/* require('block-comment-kit') */ const ratio = 1 / 2; const after = require('after-division-kit');",
      "const text = `require('template-text-kit') ${require('substitution-kit')} ${ { c: 1 }.c }`;",
      "const pattern = /import('regex-kit')/g; Array.from('abc'); object.require('member-kit');",
      "import fs from 'node:fs'; import path from 'path'; import promises from 'fs/promises'; import './local.js'; import { defineTool } from 'manus-runtime';",
    ].join('\n');
    expect(importedPackages(source).sort()).toEqual([
      '@scope/kit', 'after-division-kit', 'lazy-kit', 'named-reexport-kit', 'reexport-kit', 'resolved-kit', 'side-effect-kit', 'substitution-kit', 'template-kit', 'ts-require-kit',
    ]);
  });
});
