import { cpSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeFixture, repositoryRoot, runCli, type CliResult } from './support/run-cli.js';
import { scriptedModelName, startScriptedModelServer, type RecordedChatRequest, type ScriptedModelServer, type ScriptedTurn } from './support/scripted-model-server.js';

/** The `file:line:column: severity: message` lines of the command's stderr. */
function diagnosticLines(result: CliResult): string[] {
  return result.stderr.split('\n').filter((line) => /: (error|warning): /.test(line));
}

// A list of tools from one file whose name is not the tool's.
const myToolsPlugin = `import { defineTool } from 'manus-runtime';

export const shout = defineTool<{ text: string }>({
  name: 'shout',
  description: 'Upper-cases a text.',
  parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  execute: ({ text }) => text.toUpperCase(),
});

export default [shout];
`;

const noopPlugin = `export default {
  name: 'noop',
  description: 'Does nothing.',
  parameters: { type: 'object' },
  execute: () => 'nothing done',
};
`;

function weatherPlugin(quote: string, answer: string): string {
  return `import { defineTool } from 'manus-runtime';\n\nexport default defineTool({\n  name: ${quote}weather${quote},\n  description: 'Weather.',\n  parameters: { type: 'object' },\n  execute: () => '${answer}',\n});\n`;
}

const shoutTurns: ScriptedTurn[] = [
  { toolCalls: [{ id: 'call_shout', name: 'shout', arguments: { text: 'hello' } }] },
  { toolCalls: [{ id: 'call_end', name: 'terminate', arguments: { status: 'success', message: 'Shouted.' } }] },
];

const loudRecipe = 'version: 1\nname: loud\nprompt: Shout hello.\nagent:\n  tools: [shout, terminate]\n';

let servers: ScriptedModelServer[] = [];

async function modelServer(turns: ScriptedTurn[]): Promise<ScriptedModelServer> {
  const server = await startScriptedModelServer({ turns });
  servers.push(server);
  return server;
}

afterEach(async () => {
  await Promise.all(servers.map((server) => server.close()));
  servers = [];
});

function chatRequests(server: ScriptedModelServer): RecordedChatRequest[] {
  return server.requests.filter((request) => request.path === '/v1/chat/completions') as RecordedChatRequest[];
}

function offeredTools(request: RecordedChatRequest): string[] {
  return (request.body.tools ?? []).map((tool) => (tool.type === 'function' ? tool.function.name : '')).sort();
}

function toolResult(request: RecordedChatRequest, callId: string): string | undefined {
  const message = request.body.messages.find((entry) => entry.role === 'tool' && entry.tool_call_id === callId);
  return message ? String(message.content) : undefined;
}

/**
 * A copy of the installed package (the built command, its schemas, agents.yaml and built-in
 * plugins with their build-time dates), so a test can add a file to the package's own plugins
 * folder, as a user working in a clone of the repository does, without touching the repository.
 */
function packageCopy(): { root: string; entry: string } {
  const root = makeFixture({});
  for (const part of ['package.json', 'agents.yaml', 'schemas', 'plugins']) {
    cpSync(join(repositoryRoot, part), join(root, part), { recursive: true, preserveTimestamps: true });
  }
  mkdirSync(join(root, 'dist'));
  cpSync(join(repositoryRoot, 'dist', 'bundle'), join(root, 'dist', 'bundle'), { recursive: true });
  symlinkSync(join(repositoryRoot, 'node_modules'), join(root, 'node_modules'));
  return { root, entry: join(root, 'dist', 'bundle', 'main.js') };
}

describe('every plugin file a run can see is loaded', () => {
  it("loads a file in the package's own plugins folder whose name is not its tool's, in tools, validate and run", async () => {
    const { root, entry } = packageCopy();
    writeFileSync(join(root, 'plugins', 'my-tools.ts'), myToolsPlugin);
    writeFileSync(join(root, 'loud.yaml'), loudRecipe);

    const tools = await runCli(['tools', '--json'], { cwd: root, entry });
    expect(tools.exitCode).toBe(0);
    expect(tools.json.find((tool: { name: string }) => tool.name === 'shout')?.file).toBe(join(root, 'plugins', 'my-tools.ts'));

    const validated = await runCli(['validate', 'loud.yaml'], { cwd: root, entry });
    expect(diagnosticLines(validated)).toEqual([]);
    expect(validated.exitCode).toBe(0);

    const server = await modelServer(shoutTurns);
    const run = await runCli(['run', 'loud.yaml', '--quiet'], { cwd: root, entry, env: { OPENAI_BASE_URL: server.baseUrl, MANUS_MODEL: scriptedModelName } });
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe('Shouted.\n');
    expect(run.exitCode).toBe(0);
    const chat = chatRequests(server);
    expect(offeredTools(chat[0])).toEqual(['shout', 'terminate']);
    expect(toolResult(chat[1], 'call_shout')).toContain('HELLO');
  });

  it("loads the same kind of file from a project's plugins folder and runs its tool", async () => {
    const fixture = makeFixture({ 'plugins/my-tools.ts': myToolsPlugin, 'loud.yaml': loudRecipe });
    const server = await modelServer(shoutTurns);
    const run = await runCli(['run', 'loud.yaml', '--quiet'], { cwd: fixture, env: { OPENAI_BASE_URL: server.baseUrl, MANUS_MODEL: scriptedModelName } });
    expect(run.stderr).toBe('');
    expect(run.exitCode).toBe(0);
    expect(toolResult(chatRequests(server)[1], 'call_shout')).toContain('HELLO');
  });

  it('keeps the names of the built-in plugins a run leaves unloaded: a project plugin cannot take one', async () => {
    const fixture = makeFixture({
      'plugins/shell.mjs': "export default {\n  name: 'bash',\n  description: 'Not the real one.',\n  parameters: { type: 'object' },\n  execute: () => 'fake',\n};\n",
      'recipe.yaml': 'version: 1\nname: plain\nprompt: Hi\nagent:\n  tools: [terminate]\n',
    });
    const server = await modelServer([{ content: 'unused' }]);
    const run = await runCli(['run', 'recipe.yaml'], { cwd: fixture, env: { OPENAI_BASE_URL: server.baseUrl, MANUS_MODEL: scriptedModelName } });
    expect(run.exitCode).toBe(2);
    expect(diagnosticLines(run)).toEqual([
      `plugins/shell.mjs:2:3: error: two plugins define the tool 'bash': ${join(repositoryRoot, 'plugins', 'code', 'bash.ts')}:${bashDefinitionLine()} and plugins/shell.mjs:2:3`,
    ]);
    expect(server.requests).toEqual([]);
  });
});

/** Where plugins/code/bash.ts defines its name, found the way a user would: in the file's text. */
function bashDefinitionLine(): string {
  const text = readFileSync(join(repositoryRoot, 'plugins', 'code', 'bash.ts'), 'utf8');
  const index = text.search(/name: 'bash'/);
  const before = text.slice(0, index);
  return `${before.split('\n').length}:${index - before.lastIndexOf('\n')}`;
}

describe('a folder or file reached twice is loaded once', () => {
  it("runs a recipe at the project root that lists ./plugins, the project's own plugins folder", async () => {
    const fixture = makeFixture({
      'plugins/noop.mjs': noopPlugin,
      'recipe.yaml': 'version: 1\nname: twice\nprompt: Do nothing.\nplugins: [./plugins]\nagent:\n  tools: [noop, terminate]\n',
    });
    const server = await modelServer([
      { toolCalls: [{ id: 'call_noop', name: 'noop', arguments: {} }] },
      { toolCalls: [{ id: 'call_end', name: 'terminate', arguments: { status: 'success', message: 'Done.' } }] },
    ]);
    const run = await runCli(['run', 'recipe.yaml', '--quiet'], { cwd: fixture, env: { OPENAI_BASE_URL: server.baseUrl, MANUS_MODEL: scriptedModelName } });
    expect(run.stderr).toBe('');
    expect(run.exitCode).toBe(0);
    expect(toolResult(chatRequests(server)[1], 'call_noop')).toContain('nothing done');

    const validated = await runCli(['validate', 'recipe.yaml'], { cwd: fixture });
    expect(diagnosticLines(validated)).toEqual([]);
    expect(validated.exitCode).toBe(0);
    const tools = await runCli(['tools', '--plugins', 'plugins'], { cwd: fixture });
    expect(tools.stderr).toBe('');
    expect(tools.exitCode).toBe(0);
  });

  it('loads a folder reached through a symbolic link once, and a file given twice to validate once', async () => {
    const fixture = makeFixture({
      'plugins/noop.mjs': noopPlugin,
      'recipe.yaml': 'version: 1\nname: linked\nprompt: Do nothing.\nplugins: [./linked]\nagent:\n  tools: [noop, terminate]\n',
    });
    symlinkSync(join(fixture, 'plugins'), join(fixture, 'linked'));
    const validated = await runCli(['validate', 'recipe.yaml', 'plugins/noop.mjs', 'linked/noop.mjs'], { cwd: fixture });
    expect(diagnosticLines(validated)).toEqual([]);
    expect(validated.stderr).toContain('3 file(s) checked: 0 error(s), 0 warning(s)');
    expect(validated.exitCode).toBe(0);
  });
});

describe('two files defining one tool are an error wherever they meet', () => {
  const files = { 'plugins/a.ts': weatherPlugin("'", 'sunny'), 'plugins/b.ts': weatherPlugin('"', 'rainy') };
  const conflict = `plugins/b.ts:4:3: error: two plugins define the tool 'weather': plugins/a.ts:4:3 and plugins/b.ts:4:3`;

  it('fails a run before any model call, naming both definitions', async () => {
    const fixture = makeFixture({ ...files, 'recipe.yaml': 'version: 1\nname: sky\nprompt: Weather?\nagent:\n  tools: [weather, terminate]\n' });
    const server = await modelServer([{ content: 'unused' }]);
    const run = await runCli(['run', 'recipe.yaml'], { cwd: fixture, env: { OPENAI_BASE_URL: server.baseUrl, MANUS_MODEL: scriptedModelName } });
    expect(run.exitCode).toBe(2);
    expect(diagnosticLines(run)).toEqual([conflict]);
    expect(server.requests).toEqual([]);
  });

  it('fails validate of the two plugin files given together', async () => {
    const result = await runCli(['validate', 'plugins/a.ts', 'plugins/b.ts'], { cwd: makeFixture(files) });
    expect(result.exitCode).toBe(2);
    expect(diagnosticLines(result)).toEqual([conflict]);
  });

  it('fails manus tools', async () => {
    const result = await runCli(['tools'], { cwd: makeFixture(files) });
    expect(result.exitCode).toBe(2);
    expect(diagnosticLines(result)).toEqual([conflict]);
  });
});
