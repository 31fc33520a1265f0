import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { loadPluginFiles, pluginFilesIn } from '../runtime/kernel/plugin-loading/load-plugins.js';
import { repositoryRoot, runCli } from './support/run-cli.js';

function filesUnder(folder: string, accept: (name: string) => boolean): string[] {
  return readdirSync(folder, { recursive: true, encoding: 'utf8' })
    .filter(accept)
    .map((path) => join(folder, path))
    .sort();
}

const yamlFiles = filesUnder(join(repositoryRoot, 'recipes'), (name) => /\.ya?ml$/.test(name));
// The example packs' agents files are agents files, `*.eval.yaml` files are evals; every other YAML file under recipes/ is a recipe.
const packAgentsFiles = yamlFiles.filter((file) => basename(file) === 'agents.yaml');
const evalFiles = yamlFiles.filter((file) => /\.eval\.ya?ml$/.test(file));
const recipeFiles = yamlFiles.filter((file) => !packAgentsFiles.includes(file) && !evalFiles.includes(file));
const packsFolder = join(repositoryRoot, 'recipes', 'packs');
const packPluginFolders = readdirSync(packsFolder).map((name) => join(packsFolder, name, 'plugins')).filter((folder) => existsSync(folder));
const pluginFiles = [join(repositoryRoot, 'plugins'), ...packPluginFolders].flatMap((folder) => pluginFilesIn(folder));
const shippedFiles = [join(repositoryRoot, 'agents.yaml'), ...yamlFiles, ...pluginFiles].map((file) => relative(repositoryRoot, file));

const schemaFolder = join(repositoryRoot, 'schemas');
const schemaComment = /^# yaml-language-server: \$schema=(\S+)$/m;

function readSchema(name: string): Record<string, unknown> {
  return JSON.parse(readFileSync(join(schemaFolder, name), 'utf8')) as Record<string, unknown>;
}

describe('shipped configuration and plugins', () => {
  it('ships recipes and plugins to check', () => {
    expect(recipeFiles.length).toBeGreaterThan(0);
    expect(pluginFiles.length).toBeGreaterThan(0);
  });

  it.each(shippedFiles)('%s validates with no errors', async (file) => {
    const result = await runCli(['validate', file], { cwd: repositoryRoot });
    expect(result.stderr.split('\n').filter((line) => line.includes(': error: '))).toEqual([]);
    expect(result.stderr).toMatch(/1 file\(s\) checked: 0 error\(s\), \d+ warning\(s\)/);
    expect(result.exitCode).toBe(0);
  });

  it.each(recipeFiles.map((file) => relative(repositoryRoot, file)))('%s names the recipe schema in its $schema comment', (file) => {
    const target = schemaComment.exec(readFileSync(join(repositoryRoot, file), 'utf8'))?.[1];
    expect(target).toBeDefined();
    const schema = resolve(dirname(join(repositoryRoot, file)), target!);
    expect(existsSync(schema)).toBe(true);
    expect(schema).toBe(join(schemaFolder, 'recipe.schema.json'));
  });

  it.each(evalFiles.map((file) => relative(repositoryRoot, file)))('%s names the eval schema in its $schema comment', (file) => {
    const target = schemaComment.exec(readFileSync(join(repositoryRoot, file), 'utf8'))?.[1];
    expect(resolve(dirname(join(repositoryRoot, file)), target!)).toBe(join(schemaFolder, 'eval.schema.json'));
  });

  it.each([join(repositoryRoot, 'agents.yaml'), ...packAgentsFiles].map((file) => relative(repositoryRoot, file)))('%s names the agents schema in its $schema comment', (file) => {
    const target = schemaComment.exec(readFileSync(join(repositoryRoot, file), 'utf8'))?.[1];
    expect(target).toBeDefined();
    expect(resolve(dirname(join(repositoryRoot, file)), target!)).toBe(join(schemaFolder, 'agents.schema.json'));
  });
});

describe('the JSON schemas', () => {
  // Strict mode catches unknown keywords and misplaced constraints; union types are valid draft-07.
  function strictAjv(): Ajv {
    const ajv = new Ajv({ strict: true, allowUnionTypes: true, allErrors: true });
    ajv.addSchema(readSchema('agents.schema.json'));
    ajv.addSchema(readSchema('recipe.schema.json'));
    ajv.addSchema(readSchema('user-config.schema.json'));
    ajv.addSchema(readSchema('eval.schema.json'));
    return ajv;
  }

  it.each(['agents.schema.json', 'recipe.schema.json', 'user-config.schema.json', 'eval.schema.json'])('%s is a valid draft-07 schema', (name) => {
    const schema = readSchema(name);
    expect(schema.$schema).toBe('http://json-schema.org/draft-07/schema#');
    const ajv = new Ajv({ strict: true, allowUnionTypes: true });
    expect(ajv.validateSchema(schema), JSON.stringify(ajv.errors)).toBe(true);
    expect(() => strictAjv().getSchema(name)).not.toThrow();
  });

  it('the agents schema accepts a minimal file and rejects an unknown top-level key', () => {
    const validate = strictAjv().getSchema('agents.schema.json')!;
    expect(validate({ version: 1, agents: { helper: { tools: ['terminate'] } } })).toBe(true);
    expect(validate({ version: 1, agent: {} })).toBe(false);
    expect(validate.errors).toContainEqual(expect.objectContaining({ keyword: 'additionalProperties', params: { additionalProperty: 'agent' } }));
  });

  it('the recipe schema accepts a minimal recipe and rejects an unknown top-level key', () => {
    const validate = strictAjv().getSchema('recipe.schema.json')!;
    expect(validate({ version: 1, name: 'minimal', agent: 'assistant', prompt: 'Hi' })).toBe(true);
    expect(validate({ version: 1, name: 'minimal', agent: 'assistant', promt: 'Hi' })).toBe(false);
    expect(validate.errors).toContainEqual(expect.objectContaining({ keyword: 'additionalProperties', params: { additionalProperty: 'promt' } }));
  });
});

describe('built-in plugins', () => {
  it('are each a family folder, loaded through its index, defining every built-in tool once', async () => {
    const plugins = pluginFilesIn(join(repositoryRoot, 'plugins'));
    expect(plugins.map((file) => relative(join(repositoryRoot, 'plugins'), file))).toEqual(
      ['ask_human/index.ts', 'browser/index.ts', 'charts/index.ts', 'code/index.ts', 'computer/index.ts', 'files/index.ts', 'planning/index.ts', 'web/index.ts'],
    );
    const loaded = await loadPluginFiles(plugins);
    expect(loaded.diagnostics).toEqual([]);
    expect(loaded.tools.size + loaded.contextProviders.size).toBe(14);
  });
});
