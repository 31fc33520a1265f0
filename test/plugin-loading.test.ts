import { readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadPluginFiles, pluginFilesIn } from '../runtime/kernel/plugin-loading/load-plugins.js';
import { stepKindExportName } from '../runtime/contract/step-kind.js';
import { makeFixture, repositoryRoot, runCli, type CliResult } from './support/run-cli.js';
import {
  scriptedModelName,
  startScriptedModelServer,
  type RecordedChatRequest,
  type ScriptedModelServer,
} from './support/scripted-model-server.js';

/** The `file:line:column: severity: message` lines of the command's stderr. */
function diagnosticLines(result: CliResult): string[] {
  return result.stderr.split('\n').filter((line) => /: (error|warning): /.test(line));
}

// TypeScript-only syntax (an interface, annotations) proves the file is transpiled, not just imported.
const shoutPlugin = `import { defineTool } from 'manus-runtime';

interface ShoutInput {
  text: string;
}

export default defineTool<ShoutInput>({
  name: 'shout',
  description: 'Upper-cases a text.',
  parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false },
  execute({ text }: ShoutInput): string {
    return text.toUpperCase();
  },
});
`;

const whisperPlugin = `export default {
  name: 'whisper',
  description: 'Lower-cases a text.',
  parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  execute({ text }) {
    return text.toLowerCase();
  },
};
`;

const pairPlugin = `import { defineTool } from 'manus-runtime';

const noArguments = { type: 'object', properties: {}, additionalProperties: false } as const;

export default [
  defineTool({ name: 'count_letters', description: 'Counts letters.', parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] }, execute: ({ text }: { text: string }) => String(text.length) }),
  defineTool({ name: 'say_ready', description: 'Says ready.', parameters: noArguments, execute: () => 'ready' }),
];
`;

function twinPlugin(description: string): string {
  return `import { defineTool } from 'manus-runtime';\nexport default defineTool({ name: 'twin', description: '${description}', parameters: { type: 'object' }, execute: () => 'twin' });\n`;
}

async function validate(files: Record<string, string>, ...paths: string[]): Promise<CliResult & { diagnostics: string[] }> {
  const result = await runCli(['validate', ...paths], { cwd: makeFixture(files) });
  return { ...result, diagnostics: diagnosticLines(result) };
}

describe('plugins in a recipe folder run without a build step', () => {
  let server: ScriptedModelServer;

  beforeEach(async () => {
    server = await startScriptedModelServer({
      turns: [
        {
          toolCalls: [
            { id: 'call_shout', name: 'shout', arguments: { text: 'Hello' } },
            { id: 'call_whisper', name: 'whisper', arguments: { text: 'HeLLo' } },
            { id: 'call_count', name: 'count_letters', arguments: { text: 'plugin' } },
            { id: 'call_ready', name: 'say_ready', arguments: {} },
          ],
        },
        { toolCalls: [{ id: 'call_end', name: 'terminate', arguments: { status: 'success', message: 'All four tools ran.' } }] },
      ],
    });
  });

  afterEach(async () => {
    await server.close();
  });

  it('loads a .ts plugin importing manus-runtime, a .mjs plugin and a file exporting a list of tools, and runs them', async () => {
    const fixture = makeFixture({
      'recipes/tools/shout.ts': shoutPlugin,
      'recipes/tools/whisper.mjs': whisperPlugin,
      'recipes/tools/pair.ts': pairPlugin,
      'recipes/loud.yaml': [
        'version: 1',
        'name: loud',
        'prompt: Use every tool once.',
        'plugins: [tools]',
        'agent:',
        '  tools: [shout, whisper, count_letters, say_ready, terminate]',
        '',
      ].join('\n'),
    });
    const result = await runCli(['run', 'recipes/loud.yaml', '--quiet'], {
      cwd: fixture,
      env: { OPENAI_BASE_URL: server.baseUrl, MANUS_MODEL: scriptedModelName },
    });
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe('All four tools ran.\n');
    expect(result.exitCode).toBe(0);

    const chat = server.requests.filter((request) => request.path === '/v1/chat/completions') as RecordedChatRequest[];
    expect(chat).toHaveLength(2);
    const offered = (chat[0].body.tools ?? []).map((tool) => (tool.type === 'function' ? tool.function.name : '')).sort();
    expect(offered).toEqual(['count_letters', 'say_ready', 'shout', 'terminate', 'whisper']);
    const results = new Map(
      chat[1].body.messages.filter((message) => message.role === 'tool').map((message) => [message.tool_call_id, String(message.content)]),
    );
    expect(results.get('call_shout')).toContain('HELLO');
    expect(results.get('call_whisper')).toContain('hello');
    expect(results.get('call_count')).toContain('6');
    expect(results.get('call_ready')).toContain('ready');
  });
});

describe('plugin problems are reported with the file', () => {
  it('fails a run on two plugins defining the same tool, naming both files, before any model call', async () => {
    const server = await startScriptedModelServer({ turns: [{ content: 'unused' }] });
    try {
      const fixture = makeFixture({
        'twins/first.ts': twinPlugin('First.'),
        'twins/second.ts': twinPlugin('Second.'),
        'recipe.yaml': 'version: 1\nname: twins\nprompt: Hi\nplugins: [twins]\nagent: assistant\n',
      });
      const result = await runCli(['run', 'recipe.yaml'], { cwd: fixture, env: { OPENAI_BASE_URL: server.baseUrl, MANUS_MODEL: scriptedModelName } });
      expect(result.exitCode).toBe(2);
      expect(diagnosticLines(result)).toEqual(["twins/second.ts:2:29: error: two plugins define the tool 'twin': twins/first.ts:2:29 and twins/second.ts:2:29"]);
      expect(server.requests).toEqual([]);
    } finally {
      await server.close();
    }
  });

  it("reports a plugin that takes the name of the runtime's own terminate tool", async () => {
    const result = await validate(
      {
        'tools/terminate.mjs': "export default { name: 'terminate', description: 'Ends.', parameters: { type: 'object' }, execute: () => 'end' };\n",
        'recipe.yaml': 'version: 1\nname: clash\nprompt: Hi\nplugins: [tools]\nagent: assistant\n',
      },
      'recipe.yaml',
    );
    expect(result.exitCode).toBe(2);
    expect(result.diagnostics).toEqual([
      "tools/terminate.mjs:1:18: error: the tool 'terminate' is the runtime's own; a plugin cannot define it",
    ]);
  });

  it('reports an export that is not a tool: a bad name and no execute', async () => {
    const result = await validate({ 'not-a-tool.mjs': "export default { name: 'has space', description: 'Nothing.', parameters: { type: 'object' } };\n" }, 'not-a-tool.mjs');
    expect(result.exitCode).toBe(2);
    expect(result.diagnostics).toEqual([
      "not-a-tool.mjs: error: plugin does not export a valid tool: tool 'has space': 'name' must be 1-64 letters, digits, '_' or '-' (got \"has space\"); tool 'has space': 'execute' must be a function",
    ]);
  });

  it('reports each bad entry of a list of tools', async () => {
    const list = "export default [\n  { name: 'fine', description: 'Fine.', parameters: { type: 'object' }, execute: () => 'ok' },\n  'not a tool',\n];\n";
    const result = await validate({ 'list.mjs': list }, 'list.mjs');
    expect(result.exitCode).toBe(2);
    expect(result.diagnostics).toEqual(['list.mjs: error: plugin does not export a valid tool: expected a tool object made with defineTool, got string']);
  });

  it('reports a file with no default export', async () => {
    const result = await validate({ 'helpers.ts': 'export const answer = 42;\n' }, 'helpers.ts');
    expect(result.exitCode).toBe(2);
    expect(result.diagnostics).toEqual([
      'helpers.ts: error: the plugin has no default export: export default a tool made with defineTool, or a list of tools',
    ]);
  });

  it('reports a syntax error in a .ts plugin at its position', async () => {
    const result = await validate({ 'broken.ts': "import { defineTool } from 'manus-runtime';\nconst value = ;\nexport default value;\n" }, 'broken.ts');
    expect(result.exitCode).toBe(2);
    expect(result.diagnostics).toEqual(['broken.ts:2:15: error: plugin failed to load: Unexpected ";"']);
  });

  it('reports a syntax error in a module of a plugin folder at its position in that module', async () => {
    const result = await validate({
      'family/index.ts': "import { defineTool } from 'manus-runtime';\nimport { describe } from './describe.js';\nexport default defineTool({ name: 'family', description: describe(), parameters: { type: 'object' }, execute: () => 'ok' });\n",
      'family/describe.ts': "export function describe(): string {\n  return 'A tool' +;\n}\n",
    }, 'family/index.ts');
    expect(result.exitCode).toBe(2);
    expect(result.diagnostics).toEqual(['family/describe.ts:2:20: error: plugin failed to load: Unexpected ";"']);
  });

  it('loads a TypeScript plugin with top-level await, or importing a module that has one, which CommonJS cannot express', async () => {
    const plugin = "import { defineTool } from 'manus-runtime';\nconst description: string = await Promise.resolve('Waits.');\nexport default defineTool({ name: 'waits', description, parameters: { type: 'object' }, execute: () => 'ok' });\n";
    const importsWaiting = "import { defineTool } from 'manus-runtime';\nimport { description } from './waiting.mjs';\nexport default defineTool({ name: 'imports_waiting', description, parameters: { type: 'object' }, execute: () => 'ok' });\n";
    const cwd = makeFixture({
      'waits.ts': plugin,
      'imports-waiting.ts': importsWaiting,
      'waiting.mjs': "export const description = await Promise.resolve('Imports a module that waits.');\n",
    });
    // jiti, which loads these, would keep what it compiled in <tmp>/jiti, a folder every user shares.
    const temporary = makeFixture({});
    const result = await runCli(['validate', 'waits.ts', 'imports-waiting.ts'], { cwd, env: { TMPDIR: temporary } });
    expect(diagnosticLines(result)).toEqual([]);
    expect(result.stderr).toContain('2 file(s) checked: 0 error(s)');
    expect(result.exitCode).toBe(0);
    expect(readdirSync(temporary)).toEqual([]);
  });

  it('reports a syntax error in a .mjs plugin with the file', async () => {
    const result = await validate({ 'broken.mjs': "export default { name: 'x', execute() { return 1 ) };\n" }, 'broken.mjs');
    expect(result.exitCode).toBe(2);
    expect(result.diagnostics).toEqual(["broken.mjs: error: plugin failed to load: Unexpected token ')'"]);
  });

  it('reports a plugin that throws while loading, with the first line of the error only', async () => {
    const result = await validate({ 'throws.ts': "import './missing-helper.js';\nexport default 1;\n" }, 'throws.ts');
    expect(result.exitCode).toBe(2);
    expect(result.diagnostics).toEqual(["throws.ts: error: plugin failed to load: Cannot find module './missing-helper.js'"]);
  });

  it('reports an invalid parameters schema when validating the plugin file', async () => {
    const plugin = "import { defineTool } from 'manus-runtime';\nexport default defineTool({ name: 'typo_schema', description: 'Bad schema.', parameters: { type: 'object', properties: { count: { type: 'integr' } } }, execute: () => 'x' });\n";
    const result = await validate({ 'typo-schema.ts': plugin }, 'typo-schema.ts');
    expect(result.exitCode).toBe(2);
    expect(result.diagnostics).toHaveLength(1);
    expect(result.diagnostics[0]).toMatch(/^typo-schema\.ts: error: tool 'typo_schema' has an invalid parameters schema: .*properties\/count\/type/);
  });

  it('accepts a good plugin file', async () => {
    const result = await validate({ 'shout.ts': shoutPlugin }, 'shout.ts');
    expect(result.diagnostics).toEqual([]);
    expect(result.stderr).toContain('1 file(s) checked: 0 error(s), 0 warning(s)');
    expect(result.exitCode).toBe(0);
  });

  it('accepts JavaScript plugins in every module form: ES module, CommonJS, and top-level await', async () => {
    const tool = (name: string) => `{ name: '${name}', description: 'A tool.', parameters: { type: 'object' }, execute: () => 'ok' }`;
    const result = await validate(
      {
        'esm.mjs': `export default ${tool('from_esm')};\n`,
        'common.cjs.js': `module.exports = ${tool('from_common')};\n`,
        'awaits.mjs': `const name = await Promise.resolve('from_await');\nexport default { ...${tool('placeholder')}, name };\n`,
      },
      'esm.mjs',
      'common.cjs.js',
      'awaits.mjs',
    );
    expect(result.diagnostics).toEqual([]);
    expect(result.stderr).toContain('3 file(s) checked: 0 error(s), 0 warning(s)');
    expect(result.exitCode).toBe(0);
  });

  it("reports a plugin folder that does not exist at the recipe's plugins entry", async () => {
    const result = await validate(
      {
        'tools/shout.ts': shoutPlugin,
        'recipe.yaml': 'version: 1\nname: missing-folder\nprompt: Hi\nplugins:\n  - tools\n  - not-here\nagent: assistant\n',
      },
      'recipe.yaml',
    );
    expect(result.exitCode).toBe(2);
    expect(result.diagnostics).toEqual(['recipe.yaml:6:5: error: plugin folder not found: not-here']);
  });
});

describe('the built-in plugins compiled with the runtime', () => {
  it('are exactly the plugins in plugins/, each defining the names the generated manifest lists', async () => {
    const manifest = JSON.parse(readFileSync(join(repositoryRoot, 'dist', 'bundle', 'plugin-manifest.json'), 'utf8')) as Record<string, string[]>;
    const plugins = pluginFilesIn(join(repositoryRoot, 'plugins'));
    expect(Object.keys(manifest).sort()).toEqual(plugins.map(pluginKey).sort());
    for (const file of plugins) {
      const loaded = await loadPluginFiles([file]);
      expect(loaded.diagnostics).toEqual([]);
      const names = [...loaded.tools.keys(), ...loaded.contextProviders.keys(), ...[...loaded.stepKinds.keys()].map(stepKindExportName)];
      expect(names.sort(), file).toEqual([...manifest[pluginKey(file)]].sort());
    }
  });
});

/** A family folder is keyed by its name, a single file by its name without the extension. */
function pluginKey(file: string): string {
  return basename(file).startsWith('index.') ? basename(dirname(file)) : basename(file, extname(file));
}
