import { existsSync, mkdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadAgentsConfig, packageAgentsFile } from '../runtime/runs/recipe/resolve-recipe.js';
import { installedPacks } from '../runtime/features/packs/installed-packs.js';
import { protectedPathsFor } from '../runtime/runs/protected-path-list.js';
import { probeBwrap } from '../runtime/services/sandbox/create-sandbox.js';
import { makeFixture, runCli } from './support/run-cli.js';
import { packTarball, scratchProject } from './support/scratch-project.js';
import { scriptedModelName, startScriptedModelServer, type RecordedChatRequest, type ScriptedModelServer } from './support/scripted-model-server.js';

const bwrap = await probeBwrap();
if (!bwrap.usable) console.warn(`the test of a command writing into an installed pack is skipped: bubblewrap is not usable here (${bwrap.reason})`);

let server: ScriptedModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A pack folder: package.json with a "manus" field, an agents file, a plugin defining `tool`, and recipes. */
function packFiles(name: string, options: { tool: string; reply: string; agent?: string; agentExtra?: string; recipes?: Record<string, string>; manus?: unknown }): Record<string, string> {
  const agent = options.agent ?? 'forecaster';
  const files: Record<string, string> = {
    'package.json': JSON.stringify({ name, version: '1.2.3', description: `The ${name} pack.`, manus: options.manus ?? {} }, null, 2),
    'agents.yaml': `version: 1\nagents:\n  ${agent}:\n    description: Forecasts from ${name}.\n    system_prompt: You are the ${name} forecaster.\n    tools: [${options.tool}, terminate]\n${options.agentExtra ?? ''}`,
    [`plugins/${options.tool}.ts`]: `import { defineTool } from 'manus-runtime';\nexport default defineTool({\n  name: '${options.tool}',\n  description: 'Weather from ${name}.',\n  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },\n  async execute({ city }) { return '${options.reply} in ' + String(city); },\n});\n`,
  };
  for (const [recipe, text] of Object.entries(options.recipes ?? { forecast: `version: 1\nname: forecast\ndescription: A forecast for a city.\nparameters:\n  city: { type: string, default: Oslo }\nprompt: The weather in {{city}}?\nagent: ${agent}\n` })) {
    files[`recipes/${recipe}.yaml`] = text;
  }
  return files;
}

const model = (baseUrl: string) => ({ OPENAI_BASE_URL: baseUrl, MANUS_MODEL: scriptedModelName });
const chats = (scripted: ScriptedModelServer) => scripted.requests.filter((request) => request.path === '/v1/chat/completions') as RecordedChatRequest[];

describe('a pack installed from a tarball into a fresh project', () => {
  const source = makeFixture(Object.fromEntries(Object.entries(packFiles('acme-weather', { tool: 'weather', reply: 'Sunny' })).map(([path, text]) => [`acme-weather/${path}`, text])));
  const tarball = packTarball(join(source, 'acme-weather'), source);
  const project = scratchProject([tarball]);

  it('is installed by npm, copied into node_modules and pinned in the lock file', () => {
    expect(existsSync(join(project, 'node_modules', 'acme-weather', 'plugins', 'weather.ts'))).toBe(true);
    const lock = JSON.parse(readFileSync(join(project, 'package-lock.json'), 'utf8'));
    expect(lock.packages['node_modules/acme-weather']).toMatchObject({ version: '1.2.3', integrity: expect.stringMatching(/^sha512-/) });
  });

  it('runs as <package>/<recipe>, with its own agent and plugin', async () => {
    server = await startScriptedModelServer({
      turns: [
        { toolCalls: [{ id: 'call_1', name: 'weather', arguments: { city: 'Bergen' } }] },
        { toolCalls: [{ id: 'call_2', name: 'terminate', arguments: { status: 'success', message: 'Sunny in Bergen.' } }] },
      ],
    });
    const run = await runCli(['run', 'acme-weather/forecast', '--param', 'city=Bergen', '--json', '--quiet'], { cwd: project, env: model(server.baseUrl) });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.json).toMatchObject({ status: 'success', answer: 'Sunny in Bergen.' });
    const [first, second] = chats(server);
    expect(first.body.messages[0]).toMatchObject({ role: 'system', content: expect.stringContaining('You are the acme-weather forecaster.') });
    expect(first.body.messages[1]).toMatchObject({ role: 'user', content: 'The weather in Bergen?' });
    expect(first.body.tools?.map((tool) => (tool as { function: { name: string } }).function.name).sort()).toEqual(['terminate', 'weather']);
    expect(second.body.messages.find((message) => message.role === 'tool')).toMatchObject({ content: expect.stringContaining('Sunny in Bergen') });
  });

  it('is listed by manus packs with its recipes, agents and tools', async () => {
    const text = await runCli(['packs'], { cwd: project });
    expect(text.exitCode, text.stderr).toBe(0);
    expect(text.stdout).toContain('acme-weather 1.2.3: The acme-weather pack.');
    expect(text.stdout).toContain('recipe acme-weather/forecast: A forecast for a city.');
    expect(text.stdout).toContain('agents: forecaster');
    expect(text.stdout).toContain('tools: weather');
    const json = await runCli(['packs', '--json'], { cwd: project });
    expect(json.json).toEqual([expect.objectContaining({
      name: 'acme-weather',
      version: '1.2.3',
      recipes: [expect.objectContaining({ name: 'forecast', run: 'acme-weather/forecast' })],
      agents: ['forecaster'],
      tools: ['weather'],
    })]);
  });

  it('validates whole, by name or by folder', async () => {
    for (const target of ['acme-weather', 'node_modules/acme-weather']) {
      const result = await runCli(['validate', target], { cwd: project });
      expect(result.stderr).toContain('0 error(s)');
      expect(result.exitCode).toBe(0);
    }
  });

  it('is protected whole: its folder and the link to it are on the protected-path list', () => {
    const plan = { agentsConfig: loadAgentsConfig([packageAgentsFile]).config };
    const entries = protectedPathsFor(plan, { cwd: project, workspace: join(project, 'workspace'), runsDirectory: join(project, '.manus', 'runs'), environment: {} });
    expect(entries).toContainEqual(expect.objectContaining({ path: join(project, 'node_modules', 'acme-weather'), kind: 'folder', watched: true, reason: expect.stringContaining('pack acme-weather') }));
  });

  it('cannot be written by a file tool, even with the workspace at the project', async () => {
    server = await startScriptedModelServer({
      turns: [
        { toolCalls: [{ id: 'call_1', name: 'str_replace_editor', arguments: { command: 'create', path: 'node_modules/acme-weather/plugins/evil.ts', file_text: 'export default {}' } }] },
        { toolCalls: [{ id: 'call_2', name: 'terminate', arguments: { status: 'success', message: 'Tried.' } }] },
      ],
    });
    const recipe = 'version: 1\nname: writer\nprompt: Write.\nagent:\n  tools: [str_replace_editor, terminate]\n';
    writeFileSync(join(project, 'writer.yaml'), recipe);
    const run = await runCli(['run', 'writer.yaml', '--workspace', '.', '--json', '--quiet'], { cwd: project, env: model(server.baseUrl) });
    expect(run.exitCode, run.stderr).toBe(0);
    const result = chats(server)[1].body.messages.find((message) => message.role === 'tool');
    expect(String(result?.content)).toMatch(/protected/i);
    expect(existsSync(join(project, 'node_modules', 'acme-weather', 'plugins', 'evil.ts'))).toBe(false);
  });

  it.skipIf(!bwrap.usable)('cannot be written by a command in bubblewrap, even with the workspace at the project', async () => {
    server = await startScriptedModelServer({
      turns: [
        { toolCalls: [{ id: 'call_1', name: 'bash', arguments: { command: 'echo "export default []" > node_modules/acme-weather/plugins/evil.ts; echo "exit $?"' } }] },
        { toolCalls: [{ id: 'call_2', name: 'terminate', arguments: { status: 'success', message: 'Tried.' } }] },
      ],
    });
    writeFileSync(join(project, 'shell.yaml'), 'version: 1\nname: shell\nprompt: Write.\nagent:\n  tools: [bash, terminate]\n');
    const run = await runCli(['run', 'shell.yaml', '--workspace', '.', '--sandbox', 'bwrap', '--json', '--quiet'], { cwd: project, env: model(server.baseUrl) });
    expect(run.exitCode, run.stderr).toBe(0);
    const result = String(chats(server)[1].body.messages.find((message) => message.role === 'tool')?.content);
    expect(result).toMatch(/Read-only file system/);
    expect(result).toContain('exit 1');
    expect(existsSync(join(project, 'node_modules', 'acme-weather', 'plugins', 'evil.ts'))).toBe(false);
  });
  it('cannot be shadowed by a nearer pack the agent plants in a node_modules below, by file tool or by command', async () => {
    const below = join(project, 'below');
    mkdirSync(below, { recursive: true });
    const planted = join(below, 'node_modules', 'acme-weather', 'package.json');
    server = await startScriptedModelServer({
      turns: [
        { toolCalls: [{ id: 'call_1', name: 'str_replace_editor', arguments: { command: 'create', path: 'node_modules/acme-weather/package.json', file_text: '{"name":"acme-weather","manus":{}}' } }] },
        ...(bwrap.usable ? [{ toolCalls: [{ id: 'call_2', name: 'bash', arguments: { command: 'mkdir -p node_modules/acme-weather && echo "{}" > node_modules/acme-weather/package.json; echo "exit $?"' } }] }] : []),
        { toolCalls: [{ id: 'call_3', name: 'terminate', arguments: { status: 'success', message: 'Tried.' } }] },
      ],
    });
    writeFileSync(join(below, 'plant.yaml'), 'version: 1\nname: plant\nprompt: Plant.\nagent:\n  tools: [str_replace_editor, bash, terminate]\n');
    const run = await runCli(['run', 'plant.yaml', '--workspace', '.', ...(bwrap.usable ? ['--sandbox', 'bwrap'] : ['--sandbox', 'host', '--trust', 'host']), '--json', '--quiet'], { cwd: below, env: model(server.baseUrl) });
    expect(run.exitCode, run.stderr).toBe(0);
    const results = chats(server).slice(1).map((request) => String(request.body.messages.at(-1)?.content));
    expect(results[0]).toMatch(/protected/i);
    if (bwrap.usable) expect(results[1]).toMatch(/Read-only file system|exit 1/);
    expect(existsSync(planted)).toBe(false);
    expect(protectedPathsFor({ agentsConfig: loadAgentsConfig([packageAgentsFile]).config }, { cwd: below, workspace: below, runsDirectory: join(below, '.manus', 'runs'), environment: {} }))
      .toEqual(expect.arrayContaining([
        expect.objectContaining({ path: join(below, 'node_modules'), kind: 'folder', watched: false }),
        expect.objectContaining({ path: join(project, 'node_modules'), kind: 'folder', watched: false }),
      ]));
  });
});

describe('manus validate of a pack', () => {
  it('reports a "manus" field it cannot read, and a missing recipes folder', async () => {
    const folder = makeFixture({ 'broken/package.json': JSON.stringify({ name: 'broken-pack', manus: { recipe: 'flows', plugins: '../elsewhere' } }) });
    const result = await runCli(['validate', 'broken'], { cwd: folder });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain(`broken/package.json: error: "manus" has an unknown key 'recipe' (did you mean 'recipes'?); it may name recipes, agents, plugins`);
    expect(result.stderr).toContain('broken/package.json: error: "manus".plugins must be a path inside the pack, such as "plugins"');
    expect(result.stderr).toContain(`broken/package.json: error: the pack's recipes folder ${join(folder, 'broken', 'recipes')} is missing`);
  });

  it('says what it looked for when the argument is neither a file nor an installed pack', async () => {
    const result = await runCli(['validate', 'acme-nothing'], { cwd: makeFixture({}) });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toMatch(/error: no file .*acme-nothing, and no pack 'acme-nothing' is installed here/);
  });
});

describe('what a recipe argument names', () => {
  const project = makeFixture({
    ...Object.fromEntries(Object.entries(packFiles('acme-weather', { tool: 'weather', reply: 'Sunny' })).map(([path, text]) => [`node_modules/acme-weather/${path}`, text])),
    ...Object.fromEntries(Object.entries(packFiles('@acme/tides', { tool: 'tide', reply: 'High tide' })).map(([path, text]) => [`node_modules/@acme/tides/${path}`, text])),
  });

  it('is the file when one exists by that name, before any pack', async () => {
    writeFileSync(join(project, 'local.yaml'), 'version: 1\nname: local\nprompt: Hi.\nagent:\n  tools: [terminate]\n');
    const result = await runCli(['validate', 'local.yaml'], { cwd: project });
    expect(result.exitCode).toBe(0);
  });

  it('finds scoped packs', async () => {
    server = await startScriptedModelServer({ turns: [{ toolCalls: [{ id: 'call_1', name: 'terminate', arguments: { status: 'success', message: 'Tides.' } }] }] });
    const run = await runCli(['run', '@acme/tides/forecast', '--json', '--quiet'], { cwd: project, env: model(server.baseUrl) });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(chats(server)[0].body.messages[0].content).toContain('You are the @acme/tides forecaster.');
  });

  it('says what file and what pack it looked for when neither exists', async () => {
    const missingPack = await runCli(['run', 'acme-wether/forecast'], { cwd: project });
    expect(missingPack.exitCode).toBe(2);
    expect(missingPack.stderr).toContain(`no file ${join(project, 'acme-wether', 'forecast')}`);
    expect(missingPack.stderr).toContain(`no pack 'acme-wether' is installed in ${join(project, 'node_modules')}`);
    expect(missingPack.stderr).toContain("(did you mean 'acme-weather'?)");
    const missingRecipe = await runCli(['run', 'acme-weather/forcast'], { cwd: project });
    expect(missingRecipe.exitCode).toBe(2);
    expect(missingRecipe.stderr).toContain(`no file ${join(project, 'acme-weather', 'forcast')}`);
    expect(missingRecipe.stderr).toContain("the pack acme-weather");
    expect(missingRecipe.stderr).toContain("has no recipe 'forcast' (did you mean 'forecast'?); its recipes: forecast");
  });

  it('names the recipes of a pack given without one', async () => {
    const result = await runCli(['run', 'acme-weather'], { cwd: project });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('acme-weather is an installed pack: name one of its recipes: acme-weather/forecast');
  });

  it('finds packs installed in a node_modules above the current folder, the nearest first', () => {
    const nested = makeFixture({
      'node_modules/acme-weather/package.json': JSON.stringify({ name: 'acme-weather', version: '9.0.0', manus: {} }),
      'app/node_modules/acme-weather/package.json': JSON.stringify({ name: 'acme-weather', version: '1.0.0', manus: {} }),
      'app/src/.keep': '',
    });
    expect(installedPacks(join(nested, 'app', 'src')).map((pack) => `${pack.name}@${pack.version}`)).toEqual(['acme-weather@1.0.0']);
  });
});

describe('two packs with the same names', () => {
  const recipeUsing = (tools: string, agent = 'inline') => agent === 'inline'
    ? `version: 1\nname: both\nprompt: The weather?\npacks: [acme-weather, other-weather]\nagent:\n  tools: [${tools}, terminate]\n`
    : `version: 1\nname: both\nprompt: The weather?\npacks: [acme-weather, other-weather]\nagent: ${agent}\n`;
  const project = makeFixture({
    ...Object.fromEntries(Object.entries(packFiles('acme-weather', { tool: 'weather', reply: 'Sunny' })).map(([path, text]) => [`node_modules/acme-weather/${path}`, text])),
    ...Object.fromEntries(Object.entries(packFiles('other-weather', { tool: 'weather', reply: 'Rain' })).map(([path, text]) => [`node_modules/other-weather/${path}`, text])),
    'ambiguous.yaml': recipeUsing('weather'),
    'chosen.yaml': recipeUsing('weather@other-weather'),
    'ambiguous-agent.yaml': recipeUsing('', 'forecaster'),
    'chosen-agent.yaml': recipeUsing('', 'forecaster@acme-weather'),
    'unknown-pack.yaml': recipeUsing('weather@acme-wether'),
  });

  it('is an error naming both packs when a recipe uses the tool without saying which', async () => {
    const result = await runCli(['run', 'ambiguous.yaml'], { cwd: project, env: { OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' } });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toMatch(/ambiguous\.yaml:6:11: error: agent 'both \(inline\)' lists the tool 'weather', which two packs define: acme-weather \(.*acme-weather\/plugins\/weather\.ts:3:3\) and other-weather \(.*other-weather\/plugins\/weather\.ts:3:3\); name the one you mean: weather@acme-weather or weather@other-weather/);
  });

  it('runs the one the recipe names as tool@pack', async () => {
    server = await startScriptedModelServer({
      turns: [
        { toolCalls: [{ id: 'call_1', name: 'weather', arguments: { city: 'Oslo' } }] },
        { toolCalls: [{ id: 'call_2', name: 'terminate', arguments: { status: 'success', message: 'Rain.' } }] },
      ],
    });
    const run = await runCli(['run', 'chosen.yaml', '--json', '--quiet'], { cwd: project, env: model(server.baseUrl) });
    expect(run.exitCode, run.stderr).toBe(0);
    const [first, second] = chats(server);
    // The model sees the tool by its own name.
    expect(first.body.tools?.map((tool) => (tool as { function: { name: string } }).function.name).sort()).toEqual(['terminate', 'weather']);
    expect(second.body.messages.find((message) => message.role === 'tool')).toMatchObject({ content: expect.stringContaining('Rain in Oslo') });
  });

  it('is an error naming both packs for an agent, and agent@pack chooses', async () => {
    const ambiguous = await runCli(['validate', 'ambiguous-agent.yaml'], { cwd: project });
    expect(ambiguous.exitCode).toBe(2);
    expect(ambiguous.stderr).toMatch(/error: two packs define the agent 'forecaster': acme-weather \(.*acme-weather\/agents\.yaml:4:5\) and other-weather \(.*other-weather\/agents\.yaml:4:5\); name the one you mean: forecaster@acme-weather or forecaster@other-weather/);
    server = await startScriptedModelServer({ turns: [{ toolCalls: [{ id: 'call_1', name: 'terminate', arguments: { status: 'success', message: 'Done.' } }] }] });
    const chosen = await runCli(['run', 'chosen-agent.yaml', '--json', '--quiet'], { cwd: project, env: model(server.baseUrl) });
    expect(chosen.exitCode, chosen.stderr).toBe(0);
    expect(chats(server)[0].body.messages[0].content).toContain('You are the acme-weather forecaster.');
  });

  it('is found by manus inspect too, which reads the plugins without running them, and shows the one chosen', async () => {
    const ambiguous = await runCli(['inspect', 'ambiguous.yaml'], { cwd: project });
    expect(ambiguous.exitCode).toBe(2);
    expect(ambiguous.stderr).toContain("lists the tool 'weather', which two packs define: acme-weather (");
    const chosen = await runCli(['inspect', 'chosen.yaml'], { cwd: project });
    expect(chosen.exitCode, chosen.stderr).toBe(0);
    expect(chosen.stdout).toContain('    tool weather: plugin node_modules/other-weather/plugins/weather.ts, pack other-weather');
  });

  it('says which packs the run has when tool@pack names another', async () => {
    const result = await runCli(['validate', 'unknown-pack.yaml'], { cwd: project });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain("lists the tool 'weather@acme-wether', but no pack 'acme-wether' is part of this run (did you mean 'acme-weather'?)");
  });

  it('a pack named under packs: does not replace an agent of the same name; agent@pack reaches it', async () => {
    const shadow = packFiles('shadow-pack', { tool: 'shadow_tool', reply: 'Shadow', agent: 'assistant' });
    for (const [path, text] of Object.entries(shadow)) {
      mkdirSync(dirname(join(project, 'node_modules', 'shadow-pack', path)), { recursive: true });
      writeFileSync(join(project, 'node_modules', 'shadow-pack', path), text);
    }
    writeFileSync(join(project, 'plain.yaml'), 'version: 1\nname: plain\nprompt: Hi.\npacks: [shadow-pack]\nagent: assistant\n');
    writeFileSync(join(project, 'shadowed.yaml'), 'version: 1\nname: shadowed\nprompt: Hi.\npacks: [shadow-pack]\nagent: assistant@shadow-pack\n');
    const systemPrompt = async (file: string) => {
      server = await startScriptedModelServer({ turns: [{ toolCalls: [{ id: 'call_1', name: 'terminate', arguments: { status: 'success', message: 'Done.' } }] }] });
      const run = await runCli(['run', file, '--json', '--quiet'], { cwd: project, env: model(server.baseUrl) });
      expect(run.exitCode, run.stderr).toBe(0);
      const content = String(chats(server)[0].body.messages[0].content);
      await server.close();
      server = undefined;
      return content;
    };
    expect(await systemPrompt('plain.yaml')).not.toContain('shadow-pack');
    expect(await systemPrompt('shadowed.yaml')).toContain('You are the shadow-pack forecaster.');
  });

  it('a recipe naming a pack that is not installed is an error at the entry', async () => {
    writeFileSync(join(project, 'missing.yaml'), 'version: 1\nname: missing\nprompt: Hi.\npacks: [acme-clouds]\nagent:\n  tools: [terminate]\n');
    const result = await runCli(['validate', 'missing.yaml'], { cwd: project });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toMatch(/missing\.yaml:4:9: error: packs: no pack 'acme-clouds' is installed here; installed packs: acme-weather, other-weather/);
  });
});

describe('a pack recipe is trusted no more than any recipe', () => {
  const recipes = {
    'on-host': 'version: 1\nname: on-host\nprompt: Run.\nagent: forecaster\nsandbox: host\n',
    loosen: 'version: 1\nname: loosen\nprompt: Run.\nagent: forecaster\npermissions:\n  deny: []\n',
  };
  const agentExtra = '    permissions:\n      deny: [weather]\n';
  const project = makeFixture({
    ...Object.fromEntries(Object.entries(packFiles('acme-weather', { tool: 'weather', reply: 'Sunny', recipes, agentExtra })).map(([path, text]) => [`node_modules/acme-weather/${path}`, text])),
  });

  it('asks for the host, and without --trust host stops before the model is called', async () => {
    const run = await runCli(['run', 'acme-weather/on-host', '--ci'], { cwd: project, env: { OPENAI_BASE_URL: 'http://127.0.0.1:9/v1', MANUS_MODEL: scriptedModelName } });
    expect(run.exitCode).toBe(5);
    expect(run.stderr).toContain('run code on the host without a sandbox (sandbox: host at ');
    expect(run.stderr).toContain('rerun with --trust host');
  });

  it('cannot remove a permission its agent has, and validate of the pack says what a run needs', async () => {
    const result = await runCli(['validate', 'acme-weather'], { cwd: project });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toMatch(/loosen\.yaml:6:\d+: error: permissions\.deny leaves out 'weather', which agent 'forecaster' denies; a recipe can add to its agent's permissions, never remove them/);
    expect(result.stderr).toMatch(/on-host\.yaml:5:10: note: asks to run code on the host without a sandbox \(sandbox: host\); a run needs --trust host/);
  });
});

describe('a pack reached through a link', () => {
  it('is protected at the folder it links to, and the link itself', () => {
    const outside = makeFixture(packFiles('linked-pack', { tool: 'linked', reply: 'Linked' }));
    const project = makeFixture({ 'node_modules/.keep': '' });
    symlinkSync(outside, join(project, 'node_modules', 'linked-pack'));
    const plan = { agentsConfig: loadAgentsConfig([packageAgentsFile]).config };
    const paths = protectedPathsFor(plan, { cwd: project, workspace: join(project, 'workspace'), runsDirectory: join(project, '.manus', 'runs'), environment: {} }).map((entry) => entry.path);
    expect(paths).toContain(realpathSync(outside));
    expect(paths).toContain(join(project, 'node_modules', 'linked-pack'));
  });
});
