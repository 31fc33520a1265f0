import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeFixture, runCli, type CliResult } from './support/run-cli.js';
import { scriptedModelName, startScriptedModelServer, type ScriptedModelServer } from './support/scripted-model-server.js';

/** The `file:line:column: severity: message` lines of the command's stderr. */
function diagnosticLines(result: CliResult): string[] {
  return result.stderr.split('\n').filter((line) => /: (error|warning): /.test(line));
}

let server: ScriptedModelServer;

beforeEach(async () => {
  server = await startScriptedModelServer({ turns: [{ content: 'Done.' }] });
});

afterEach(async () => {
  await server.close();
});

async function run(fixture: string, ...args: string[]): Promise<CliResult> {
  return runCli(['run', ...args], { cwd: fixture, env: { OPENAI_BASE_URL: server.baseUrl, MANUS_MODEL: scriptedModelName } });
}

const weatherPlugin = "export default {\n  name: 'weather',\n  description: 'Weather.',\n  parameters: { type: 'object' },\n  execute: () => 'sunny',\n};\n";

describe('a tool the agent lists that no plugin defines', () => {
  const files = {
    'plugins/weather.mjs': weatherPlugin,
    'agents.yaml': 'version: 1\nagents:\n  forecaster:\n    description: Forecasts.\n    tools: [wether, terminate]\n',
    'recipe.yaml': 'version: 1\nname: forecast\nprompt: Weather in Oslo?\nagent: forecaster\n',
  };
  const typo = "agents.yaml:5:13: error: agent 'forecaster' lists the tool 'wether', which no plugin defines (did you mean 'weather'?)";

  it('fails the run before any model call, with a suggestion', async () => {
    const result = await run(makeFixture(files), 'recipe.yaml');
    expect(result.exitCode).toBe(2);
    expect(diagnosticLines(result)).toEqual([typo]);
    expect(server.requests).toEqual([]);
  });

  it('fails validate of the recipe that uses the agent', async () => {
    const result = await runCli(['validate', 'recipe.yaml'], { cwd: makeFixture(files) });
    expect(result.exitCode).toBe(2);
    expect(diagnosticLines(result)).toEqual([typo]);
  });

  it('only warns when the agents file is validated on its own, since a recipe may add the plugin folder', async () => {
    const result = await runCli(['validate', 'agents.yaml'], { cwd: makeFixture(files) });
    expect(diagnosticLines(result)).toEqual([
      "agents.yaml:5:13: warning: agent 'forecaster' lists the tool 'wether', which no plugin here defines (did you mean 'weather'?); a recipe using this agent must add a plugin folder that does",
    ]);
    expect(result.exitCode).toBe(0);
  });

  it('says it once when the agents file and a recipe using it are validated together: the error, not also the warning', async () => {
    const result = await runCli(['validate', 'agents.yaml', 'recipe.yaml'], { cwd: makeFixture(files) });
    expect(result.exitCode).toBe(2);
    expect(diagnosticLines(result)).toEqual([typo]);
  });

  it('runs an agent whose tool comes from a plugin folder its recipe adds', async () => {
    const fixture = makeFixture({
      'tools/weather.mjs': weatherPlugin,
      'recipe.yaml': 'version: 1\nname: forecast\nprompt: Weather in Oslo?\nplugins: [./tools]\nagent:\n  tools: [weather, terminate]\n',
    });
    const result = await run(fixture, 'recipe.yaml', '--quiet');
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe('Done.\n');
    expect(result.exitCode).toBe(0);
  });
});

describe('validate reports every kind of problem in one pass', () => {
  it('reports template and parameter problems of a recipe the schema rejects', async () => {
    const recipe = [
      'version: 1',
      'name: memo',
      'description: 7',
      'parameters:',
      '  urgent: {type: bool, default: two}',
      '  sender: {type: string, default: Ann}',
      'prompt: "From {{sender}} to {{boss}}, urgent: {{urgent}}."',
      'agent: assistant',
      '',
    ].join('\n');
    const result = await runCli(['validate', 'recipe.yaml'], { cwd: makeFixture({ 'recipe.yaml': recipe }) });
    expect(result.exitCode).toBe(2);
    expect(diagnosticLines(result)).toEqual([
      "recipe.yaml:3:14: error: 'description' must be a string, not a whole number",
      "recipe.yaml:5:18: error: 'parameters.urgent.type' must be one of: string, number, boolean, enum, list",
      `recipe.yaml:5:3: error: parameter 'urgent' default "two" is not a boolean`,
      "recipe.yaml:7:29: error: the prompt uses {{boss}} but the recipe declares no parameter 'boss'",
    ]);
    expect(result.stderr).toContain('1 file(s) checked: 4 error(s), 0 warning(s)');
  });

  it('still finds every problem a recipe with a clean schema has (the control)', async () => {
    const recipe = 'version: 1\nname: memo\nparameters:\n  urgent: {type: boolean, default: two}\nprompt: "To {{boss}}: {{urgent}}."\nagent: assistant\n';
    const result = await runCli(['validate', 'recipe.yaml'], { cwd: makeFixture({ 'recipe.yaml': recipe }) });
    expect(diagnosticLines(result)).toEqual([
      `recipe.yaml:4:3: error: parameter 'urgent' default "two" is not a boolean`,
      "recipe.yaml:5:13: error: the prompt uses {{boss}} but the recipe declares no parameter 'boss'",
    ]);
  });
});

describe('an optional parameter needs a default', () => {
  const files = {
    'recipe.yaml': 'version: 1\nname: note\nparameters:\n  tone: {type: string, required: false}\nprompt: "Write a note, tone: {{tone}}."\nagent: assistant\n',
  };
  const problem = "recipe.yaml:4:3: error: parameter 'tone' is optional (required: false) but has no default: an optional parameter needs a default";

  it('is rejected by validate', async () => {
    const result = await runCli(['validate', 'recipe.yaml'], { cwd: makeFixture(files) });
    expect(result.exitCode).toBe(2);
    expect(diagnosticLines(result)).toEqual([problem]);
  });

  it('is rejected by run with the same message, whether or not the value is given', async () => {
    const without = await run(makeFixture(files), 'recipe.yaml');
    expect(without.exitCode).toBe(2);
    expect(diagnosticLines(without)).toEqual([problem]);
    const given = await run(makeFixture(files), 'recipe.yaml', '--param', 'tone=dry');
    expect(given.exitCode).toBe(2);
    expect(diagnosticLines(given)).toEqual([problem]);
    expect(server.requests).toEqual([]);
  });

  it('is accepted with a default, and the run gets the default (the control)', async () => {
    const fixture = makeFixture({ 'recipe.yaml': files['recipe.yaml'].replace('required: false}', 'required: false, default: warm}') });
    const result = await run(fixture, 'recipe.yaml', '--quiet');
    expect(result.exitCode).toBe(0);
    expect(JSON.stringify(server.requests[0]?.body)).toContain('Write a note, tone: warm.');
  });
});

describe('a {{...}} form the template language does not know', () => {
  const unknownForm = 'which is not a placeholder: a placeholder is {{name}} with the name of a parameter, and nothing else goes between {{ and }}';

  it('is an error at its line and column in an inline prompt, in validate and in run, and never reaches the model', async () => {
    const recipe = 'version: 1\nname: dotted\nparameters:\n  p: {type: string, default: x}\nprompt: |\n  Use {{p}}\n  and {{p.x}} here.\nagent: assistant\n';
    const fixture = makeFixture({ 'recipe.yaml': recipe });
    const expected = [`recipe.yaml:7:7: error: the prompt uses {{p.x}}, ${unknownForm}`];
    const validated = await runCli(['validate', 'recipe.yaml'], { cwd: fixture });
    expect(validated.exitCode).toBe(2);
    expect(diagnosticLines(validated)).toEqual(expected);
    const result = await run(fixture, 'recipe.yaml');
    expect(result.exitCode).toBe(2);
    expect(diagnosticLines(result)).toEqual(expected);
    expect(server.requests).toEqual([]);
  });

  it('is an error at its position in a prompt file, spaces and all', async () => {
    const fixture = makeFixture({
      'prompts/task.md': 'First line.\nThen {{ steps.plan.answer }} and {{}}.\n',
      'recipe.yaml': 'version: 1\nname: from-file\nprompt: {file: prompts/task.md}\nagent: assistant\n',
    });
    const result = await runCli(['validate', 'recipe.yaml'], { cwd: fixture });
    expect(result.exitCode).toBe(2);
    expect(diagnosticLines(result)).toEqual([
      `prompts/task.md:2:6: error: the prompt uses {{ steps.plan.answer }}, ${unknownForm}`,
      `prompts/task.md:2:34: error: the prompt uses {{}}, ${unknownForm}`,
    ]);
  });

  it('is an error in the workspace template too', async () => {
    const recipe = 'version: 1\nname: place\nparameters:\n  p: {type: string, default: x}\nprompt: "{{p}}"\nworkspace: "out/{{ p | upper }}"\nagent: assistant\n';
    const result = await runCli(['validate', 'recipe.yaml'], { cwd: makeFixture({ 'recipe.yaml': recipe }) });
    expect(result.exitCode).toBe(2);
    expect(diagnosticLines(result)).toEqual([`recipe.yaml:6:12: error: the workspace uses {{ p | upper }}, ${unknownForm}`]);
  });
});

describe('what validate notes a run would need the user\'s grant for', () => {
  const noteLines = (result: CliResult) => result.stderr.split('\n').filter((line) => line.includes(': note: '));

  it('notes the endpoints of every profile and search engine that would receive a key, and the sandbox user', async () => {
    const fixture = makeFixture({
      'agents.yaml': 'version: 1\nllm:\n  far:\n    base_url: http://127.0.0.1:9/v1\nagents:\n  helper:\n    llm: far\n    tools: [terminate]\n',
      'recipe.yaml': [
        'version: 1', 'name: reaching', 'prompt: Go.',
        'agent:', '  tools: [agent:helper, browser_use, terminate]',
        // browser_use searches through web_search, whose settings' grants count though it is not listed.
        'tool_settings:', '  web_search: { endpoints: { brave: "http://127.0.0.1:9/brave" } }',
        'sandbox:', '  kind: bwrap', '  user: "2000"', '',
      ].join('\n'),
    });
    const result = await runCli(['validate', 'recipe.yaml'], { cwd: fixture });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(noteLines(result)).toEqual(expect.arrayContaining([
      expect.stringMatching(/^recipe\.yaml:10:9: note: asks to run sandboxed commands as a user it chose.*\(sandbox\.user: 2000, .*\); a run needs --trust user$/),
      expect.stringMatching(/^recipe\.yaml:7:37: note: asks to .*\(tool_settings\.web_search\.endpoints\.brave: http:\/\/127\.0\.0\.1:9\/brave, which would receive BRAVE_API_KEY\); a run needs --trust env$/),
      expect.stringMatching(/^agents\.yaml:4:5: note: asks to .*\(llm\.far\.base_url: http:\/\/127\.0\.0\.1:9\/v1, which would receive OPENAI_API_KEY\); a run needs --trust env$/),
    ]));
    expect(noteLines(result)).toHaveLength(3);
  });

  it('notes a profile\'s endpoint in an agents.yaml validated on its own', async () => {
    const fixture = makeFixture({ 'agents.yaml': 'version: 1\nllm:\n  default:\n    base_url: http://127.0.0.1:9/v1\n    headers_env: { X-Org: ORG_TOKEN }\n' });
    const result = await runCli(['validate', 'agents.yaml'], { cwd: fixture });
    expect(noteLines(result)).toEqual([
      'agents.yaml:4:5: note: asks to pass environment variables into the sandbox or to an MCP server it declares, or send a key to a model endpoint it chose (llm.default.base_url: http://127.0.0.1:9/v1, which would receive OPENAI_API_KEY, ORG_TOKEN); a run needs --trust env',
    ]);
  });

  it('makes root, the root group and a system group errors at their place', async () => {
    for (const user of ['1001:0', '0:0', 'root', 'nobody:root', '1001:42']) {
      const fixture = makeFixture({ 'recipe.yaml': `version: 1\nname: who\nprompt: Go.\nagent: assistant\nsandbox: { kind: bwrap, user: "${user}" }\n` });
      const result = await runCli(['validate', 'recipe.yaml'], { cwd: fixture });
      expect(result.exitCode).toBe(2);
      expect(diagnosticLines(result)).toEqual([expect.stringContaining(`recipe.yaml:5:31: error: sandbox.user: sandbox user "${user}"`)]);
    }
  });

  it('makes a prompt file outside the recipe\'s folder an error naming it', async () => {
    const fixture = makeFixture({ 'recipe.yaml': 'version: 1\nname: peek\nprompt: Go.\nagent:\n  system_prompt: {file: /etc/hostname}\n' });
    const result = await runCli(['validate', 'recipe.yaml'], { cwd: fixture });
    expect(result.exitCode).toBe(2);
    expect(diagnosticLines(result)).toEqual([
      `recipe.yaml:5:25: error: prompt file '/etc/hostname' cannot be read: /etc/hostname is outside ${fixture}; a prompt file must be inside the folder of the file that names it (${fixture})`,
    ]);
  });
});
