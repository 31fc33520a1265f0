import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeFixture, repositoryRoot, runCli, type CliResult } from './support/run-cli.js';
import { scriptedModelName, startScriptedModelServer, type ScriptedModelServer } from './support/scripted-model-server.js';

const packageAgents = join(repositoryRoot, 'agents.yaml');
const shippedAgentNames = 'assistant, manus, browser, swe, data_analysis, planner';

/** The `file:line:column: severity: message` lines of the command's stderr. */
function diagnosticLines(result: CliResult): string[] {
  return result.stderr.split('\n').filter((line) => /: (error|warning): /.test(line));
}

async function validate(files: Record<string, string>, ...paths: string[]): Promise<CliResult & { diagnostics: string[] }> {
  const result = await runCli(['validate', ...paths], { cwd: makeFixture(files) });
  return { ...result, diagnostics: diagnosticLines(result) };
}

describe('YAML syntax errors', () => {
  it('reports a duplicated key at the second occurrence', async () => {
    const result = await validate({ 'recipe.yaml': 'version: 1\nname: first\nname: second\nagent: assistant\nprompt: Hi\n' }, 'recipe.yaml');
    expect(result.exitCode).toBe(2);
    expect(result.diagnostics).toEqual(['recipe.yaml:3:1: error: YAML syntax: Map keys must be unique']);
  });

  it('reports a mapping nested in a plain value at its line and column', async () => {
    const result = await validate({ 'recipe.yaml': 'version: 1\nname: nested\nagent: assistant\n  prompt: Hi\n' }, 'recipe.yaml');
    expect(result.exitCode).toBe(2);
    expect(result.diagnostics[0]).toBe('recipe.yaml:3:8: error: YAML syntax: Nested mappings are not allowed in compact mappings');
  });

  it('reports a syntax error in the agents.yaml a recipe depends on', async () => {
    const result = await validate(
      {
        'agents.yaml': 'version: 1\nagents:\n  helper:\n    tools: [terminate\n',
        'recipe.yaml': 'version: 1\nname: uses-helper\nagent: helper\nprompt: Hi\n',
      },
      'recipe.yaml',
    );
    expect(result.exitCode).toBe(2);
    expect(result.diagnostics[0]).toBe(
      'agents.yaml:5:1: error: YAML syntax: Flow sequence in block collection must be sufficiently indented and end with a ]',
    );
  });
});

describe('unknown keys', () => {
  it('points at a misspelt agent key in agents.yaml and suggests the right one', async () => {
    const result = await validate(
      { 'agents.yaml': 'version: 1\nagents:\n  helper:\n    description: Helps.\n    max_step: 5\n' },
      'agents.yaml',
    );
    expect(result.exitCode).toBe(2);
    expect(result.diagnostics).toEqual([
      "agents.yaml:5:5: error: unknown key 'max_step' in 'agents.helper' (did you mean 'max_steps'?)",
    ]);
  });

  it('points at a misspelt rate limit key and at a limit below one', async () => {
    const result = await validate(
      { 'agents.yaml': 'version: 1\nllm:\n  default:\n    rate_limit:\n      request_per_minute: 10\n      max_concurrent: 0\n' },
      'agents.yaml',
    );
    expect(result.exitCode).toBe(2);
    expect(result.diagnostics).toContain(
      "agents.yaml:5:7: error: unknown key 'request_per_minute' in 'llm.default.rate_limit' (did you mean 'requests_per_minute'?)",
    );
    expect(result.diagnostics.some((line) => line.startsWith('agents.yaml:6:23: error:') && line.includes('max_concurrent'))).toBe(true);
  });

  it('points at a misspelt top-level recipe key and suggests the right one', async () => {
    const result = await validate({ 'recipe.yaml': 'version: 1\nname: typo\npromt: Say hi.\nagent: assistant\n' }, 'recipe.yaml');
    expect(result.exitCode).toBe(2);
    expect(result.diagnostics).toEqual(["recipe.yaml:3:1: error: unknown key 'promt' (did you mean 'prompt'?)"]);
  });

  it('points at a misspelt key of an agent declared inline in a recipe', async () => {
    const recipe = ['version: 1', 'name: inline', 'prompt: Go.', 'agent:', '  system_prompt: Be brief.', '  max_step: 3', '  tools: [terminate]', ''];
    const result = await validate({ 'recipe.yaml': recipe.join('\n') }, 'recipe.yaml');
    expect(result.exitCode).toBe(2);
    expect(result.diagnostics).toEqual(["recipe.yaml:6:3: error: unknown key 'max_step' in 'agent' (did you mean 'max_steps'?)"]);
  });

  it('gives no hint when no known key is close', async () => {
    const result = await validate({ 'recipe.yaml': 'version: 1\nname: far\nprompt: Go.\nagent: assistant\nzebra: 1\n' }, 'recipe.yaml');
    expect(result.diagnostics).toEqual(["recipe.yaml:5:1: error: unknown key 'zebra'"]);
  });
});

describe('wrong values', () => {
  it('names the expected type of a value and points at the value', async () => {
    const result = await validate({ 'agents.yaml': 'version: 1\nagents:\n  helper:\n    max_steps: "ten"\n' }, 'agents.yaml');
    expect(result.exitCode).toBe(2);
    expect(result.diagnostics).toEqual(["agents.yaml:4:16: error: 'agents.helper.max_steps' must be a whole number, not a string"]);
  });

  it('lists the allowed values of an enumerated setting', async () => {
    const result = await validate({ 'agents.yaml': 'version: 1\nagents:\n  helper:\n    tool_choice: sometimes\n' }, 'agents.yaml');
    expect(result.exitCode).toBe(2);
    expect(result.diagnostics).toEqual(["agents.yaml:4:18: error: 'agents.helper.tool_choice' must be one of: auto, required, none"]);
  });

  it('requires the format version, and only version 1', async () => {
    const missing = await validate({ 'recipe.yaml': '# A recipe.\nname: unversioned\nagent: assistant\nprompt: Hi\n' }, 'recipe.yaml');
    expect(missing.exitCode).toBe(2);
    expect(missing.diagnostics).toEqual(["recipe.yaml:2:1: error: the document is missing the required key 'version'"]);
    const wrong = await validate({ 'agents.yaml': 'version: 2\nagents: {}\n' }, 'agents.yaml');
    expect(wrong.exitCode).toBe(2);
    expect(wrong.diagnostics).toEqual(["agents.yaml:1:10: error: 'version' must be 1"]);
  });

  it('reports one clear message for a value that fits no accepted form', async () => {
    const number = await validate({ 'recipe.yaml': 'version: 1\nname: odd\nprompt: Go.\nagent: 5\n' }, 'recipe.yaml');
    expect(number.diagnostics).toEqual(["recipe.yaml:4:8: error: 'agent' has the wrong form: expected a string or a mapping"]);
    const empty = await validate({ 'recipe.yaml': 'version: 1\nname: odd\nprompt: Go.\nagent: ""\n' }, 'recipe.yaml');
    expect(empty.diagnostics).toEqual(["recipe.yaml:4:8: error: 'agent' must not be empty"]);
  });

  it('reports the problems of an inline agent without blaming the other accepted form', async () => {
    const result = await validate({ 'recipe.yaml': 'version: 1\nname: odd\nprompt: Go.\nagent: {max_steps: 0}\n' }, 'recipe.yaml');
    expect(result.diagnostics).toEqual(["recipe.yaml:4:20: error: 'agent.max_steps' must be >= 1"]);
  });
});

describe('references to agents and files', () => {
  it('reports a recipe naming an agent that does not exist, with a suggestion and the declared agents', async () => {
    const result = await validate({ 'recipe.yaml': 'version: 1\nname: lost\nprompt: Hi\nagent: asistant\n' }, 'recipe.yaml');
    expect(result.exitCode).toBe(2);
    expect(result.diagnostics).toEqual([
      `recipe.yaml:4:8: error: no agent named 'asistant' (did you mean 'assistant'?); declared agents: ${shippedAgentNames} (in ${packageAgents})`,
    ]);
  });

  it('includes the agents of a local agents.yaml in the suggestion and the list', async () => {
    const result = await validate(
      {
        'agents.yaml': 'version: 1\nagents:\n  researcher:\n    tools: [terminate]\n',
        'recipe.yaml': 'version: 1\nname: lost\nprompt: Hi\nagent: reseacher\n',
      },
      'recipe.yaml',
    );
    expect(result.diagnostics).toEqual([
      `recipe.yaml:4:8: error: no agent named 'reseacher' (did you mean 'researcher'?); declared agents: ${shippedAgentNames}, researcher (in ${packageAgents}, agents.yaml)`,
    ]);
  });

  it('gives no suggestion for an agent name unlike any declared one', async () => {
    const result = await validate({ 'recipe.yaml': 'version: 1\nname: lost\nprompt: Hi\nagent: zzzzzz\n' }, 'recipe.yaml');
    expect(result.diagnostics).toEqual([
      `recipe.yaml:4:8: error: no agent named 'zzzzzz'; declared agents: ${shippedAgentNames} (in ${packageAgents})`,
    ]);
  });

  it('reports a missing prompt file at its file: entry', async () => {
    const fixture = makeFixture({ 'agents.yaml': 'version: 1\nagents:\n  helper:\n    system_prompt: {file: missing.md}\n' });
    const result = await runCli(['validate', 'agents.yaml'], { cwd: fixture });
    expect(result.exitCode).toBe(2);
    expect(diagnosticLines(result)).toEqual([
      `agents.yaml:4:27: error: prompt file 'missing.md' cannot be read: no such file (looked for ${join(fixture, 'missing.md')})`,
    ]);
  });

  it('reads a prompt file relative to the YAML file that names it', async () => {
    const result = await validate(
      {
        'recipes/prompts/task.md': 'Describe {{topic}}.\n',
        'recipes/describe.yaml': 'version: 1\nname: describe\nparameters:\n  topic: {type: string}\nprompt: {file: prompts/task.md}\nagent: assistant\n',
      },
      'recipes/describe.yaml',
    );
    expect(result.diagnostics).toEqual([]);
    expect(result.exitCode).toBe(0);
  });
});

describe('prompt templates and parameters', () => {
  it('points at a placeholder with no parameter inside an inline block prompt', async () => {
    const recipe = ['version: 1', 'name: letter', 'parameters:', '  person: {type: string}', 'prompt: |', '  Write to {{person}}', '  about {{ subject }}.', 'agent: assistant', ''];
    const result = await validate({ 'recipe.yaml': recipe.join('\n') }, 'recipe.yaml');
    expect(result.exitCode).toBe(2);
    expect(result.diagnostics).toEqual(["recipe.yaml:7:9: error: the prompt uses {{subject}} but the recipe declares no parameter 'subject'"]);
  });

  it('points at a placeholder with no parameter inside a quoted inline prompt', async () => {
    const result = await validate({ 'recipe.yaml': 'version: 1\nname: greet\nprompt: "Say hello to {{name}}."\nagent: assistant\n' }, 'recipe.yaml');
    expect(result.diagnostics).toEqual(["recipe.yaml:3:23: error: the prompt uses {{name}} but the recipe declares no parameter 'name'"]);
  });

  it('points at a placeholder with no parameter inside a prompt file', async () => {
    const result = await validate(
      {
        'prompts/task.md': 'Intro line.\nTell me about {{subject}} now.\n',
        'recipe.yaml': 'version: 1\nname: from-file\nprompt: {file: prompts/task.md}\nagent: assistant\n',
      },
      'recipe.yaml',
    );
    expect(result.exitCode).toBe(2);
    expect(result.diagnostics).toEqual(["prompts/task.md:2:15: error: the prompt uses {{subject}} but the recipe declares no parameter 'subject'"]);
  });

  it('reports a parameter the prompt never uses at the parameter', async () => {
    const recipe = 'version: 1\nname: unused\nparameters:\n  topic: {type: string}\n  spare: {type: string}\nprompt: "{{topic}}"\nagent: assistant\n';
    const result = await validate({ 'recipe.yaml': recipe }, 'recipe.yaml');
    expect(result.exitCode).toBe(2);
    expect(result.diagnostics).toEqual(["recipe.yaml:5:3: error: parameter 'spare' is never used in the prompt or the workspace (add {{spare}} or remove it)"]);
  });

  it('reports an enum parameter without values', async () => {
    const recipe = 'version: 1\nname: levels\nparameters:\n  level:\n    type: enum\nprompt: "{{level}}"\nagent: assistant\n';
    const result = await validate({ 'recipe.yaml': recipe }, 'recipe.yaml');
    expect(result.diagnostics).toEqual(["recipe.yaml:4:3: error: parameter 'level' is an enum but lists no 'values'"]);
  });

  it('reports defaults that do not fit the parameter type', async () => {
    const recipe = [
      'version: 1',
      'name: defaults',
      'parameters:',
      '  count:',
      '    type: number',
      '    default: three',
      '  tone:',
      '    type: enum',
      '    values: [formal, casual]',
      '    default: rude',
      'prompt: "{{count}} {{tone}}"',
      'agent: assistant',
      '',
    ];
    const result = await validate({ 'recipe.yaml': recipe.join('\n') }, 'recipe.yaml');
    expect(result.diagnostics).toEqual([
      `recipe.yaml:4:3: error: parameter 'count' default "three" is not a number`,
      "recipe.yaml:7:3: error: parameter 'tone' default 'rude' is not one of its values: formal, casual",
    ]);
  });
});

describe('several problems in one file', () => {
  it('reports every schema problem of a file together', async () => {
    const recipe = 'version: 1\nname: many\ndescription: 7\npromt: Go.\nbudgets:\n  step: 3\nagent: assistant\n';
    const result = await validate({ 'recipe.yaml': recipe }, 'recipe.yaml');
    expect(result.exitCode).toBe(2);
    expect(result.diagnostics.sort()).toEqual([
      "recipe.yaml:3:14: error: 'description' must be a string, not a whole number",
      "recipe.yaml:4:1: error: unknown key 'promt' (did you mean 'prompt'?)",
      "recipe.yaml:6:3: error: unknown key 'step' in 'budgets' (did you mean 'steps'?)",
    ]);
    expect(result.stderr).toContain('1 file(s) checked: 3 error(s), 0 warning(s)');
  });

  it('reports every parameter, template and prompt-file problem of a recipe together', async () => {
    const recipe = [
      'version: 1',
      'name: many',
      'parameters:',
      '  topic: {type: string}',
      '  spare: {type: string}',
      '  level: {type: enum}',
      'prompt: |',
      '  Write about {{topic}} at {{level}} for {{audience}}.',
      'agent:',
      '  system_prompt: {file: missing.md}',
      '',
    ];
    const result = await validate({ 'recipe.yaml': recipe.join('\n') }, 'recipe.yaml');
    expect(result.exitCode).toBe(2);
    expect(result.diagnostics).toHaveLength(4);
    expect(result.diagnostics).toEqual(
      expect.arrayContaining([
        "recipe.yaml:6:3: error: parameter 'level' is an enum but lists no 'values'",
        "recipe.yaml:8:42: error: the prompt uses {{audience}} but the recipe declares no parameter 'audience'",
        "recipe.yaml:5:3: error: parameter 'spare' is never used in the prompt or the workspace (add {{spare}} or remove it)",
      ]),
    );
    expect(result.diagnostics.some((line) => line.startsWith("recipe.yaml:10:25: error: prompt file 'missing.md' cannot be read: no such file"))).toBe(true);
  });

  it('reports problems in several files of one validate call and exits 2', async () => {
    const result = await validate(
      {
        'good.yaml': 'version: 1\nname: good\nprompt: Hi\nagent: assistant\n',
        'bad.yaml': 'version: 1\nname: bad\nprompt: Hi\nagent: assistant\nbudgets: {steps: 0}\n',
        'agents.yaml': 'version: 1\nagents:\n  helper: {max_observe: 5}\n',
      },
      'good.yaml',
      'bad.yaml',
    );
    expect(result.exitCode).toBe(2);
    // The local agents.yaml is loaded for each recipe, but its problem is reported once.
    expect(result.diagnostics).toEqual([
      "agents.yaml:3:25: error: 'agents.helper.max_observe' must be >= 100",
      "bad.yaml:5:18: error: 'budgets.steps' must be >= 1",
    ]);
    expect(result.stderr).toContain('2 file(s) checked: 2 error(s), 0 warning(s)');
  });
});

describe('manus validate outcomes', () => {
  it('exits 0 for good files and says so', async () => {
    const result = await validate(
      {
        'agents.yaml': 'version: 1\nllm:\n  local: {provider: ollama, model: small}\nagents:\n  helper:\n    llm: local\n    tools: [terminate]\n',
        'recipe.yaml': 'version: 1\nname: fine\nparameters:\n  topic: {type: string, default: tea}\nprompt: "About {{topic}}."\nagent: helper\n',
      },
      'agents.yaml',
      'recipe.yaml',
    );
    expect(result.diagnostics).toEqual([]);
    expect(result.stderr).toContain('2 file(s) checked: 0 error(s), 0 warning(s)');
    expect(result.exitCode).toBe(0);
  });

  it('warns of a tool no plugin here provides in an agents file alone, but fails a recipe whose agent lists one', async () => {
    const result = await validate(
      {
        'plugins/shout.mjs': "export default { name: 'shout', description: 'Shouts.', parameters: { type: 'object' }, execute: () => 'HI' };\n",
        'agents.yaml': 'version: 1\nagents:\n  helper:\n    tools: [shuot, terminate]\n',
        'recipe.yaml': 'version: 1\nname: later\nprompt: Hi\nagent:\n  tools: [terminate, browse_later]\n',
      },
      'agents.yaml',
      'recipe.yaml',
    );
    expect(result.diagnostics).toEqual([
      "agents.yaml:4:13: warning: agent 'helper' lists the tool 'shuot', which no plugin here defines (did you mean 'shout'?); a recipe using this agent must add a plugin folder that does",
      "recipe.yaml:5:22: error: agent 'later (inline)' lists the tool 'browse_later', which no plugin defines",
    ]);
    expect(result.stderr).toContain('2 file(s) checked: 1 error(s), 1 warning(s)');
    expect(result.exitCode).toBe(2);
  });

  it('reports an agent using an undeclared model profile', async () => {
    const result = await validate(
      { 'agents.yaml': 'version: 1\nllm:\n  fast: {model: small}\nagents:\n  helper:\n    llm: fats\n' },
      'agents.yaml',
    );
    expect(result.exitCode).toBe(2);
    expect(result.diagnostics).toEqual([
      "agents.yaml:6:5: error: agent 'helper' uses the model profile 'fats', which is not declared under llm: (did you mean 'fast'?)",
    ]);
  });

  it('reports a file that does not exist', async () => {
    const result = await validate({}, 'absent.yaml');
    expect(result.exitCode).toBe(2);
    expect(result.diagnostics).toEqual(['absent.yaml: error: cannot read YAML: file not found']);
  });
});

describe('manus run stops at configuration problems before any model call', () => {
  let server: ScriptedModelServer;

  beforeEach(async () => {
    server = await startScriptedModelServer({ turns: [{ content: 'Four.' }] });
  });

  afterEach(async () => {
    await server.close();
  });

  async function run(files: Record<string, string>, args: string[], env: Record<string, string> = {}): Promise<CliResult & { diagnostics: string[] }> {
    const result = await runCli(['run', ...args], {
      cwd: makeFixture(files),
      env: { OPENAI_BASE_URL: server.baseUrl, MANUS_MODEL: scriptedModelName, ...env },
    });
    return { ...result, diagnostics: diagnosticLines(result) };
  }

  const parameterRecipe = [
    'version: 1',
    'name: tally',
    'parameters:',
    '  topic: {type: string}',
    '  count: {type: number, default: 3}',
    '  tone: {type: enum, values: [formal, casual], default: formal}',
    'prompt: "List {{count}} facts about {{topic}}, {{tone}}."',
    'agent: assistant',
    '',
  ].join('\n');

  it('reaches the model when the configuration is good (the control for the tests below)', async () => {
    const result = await run({ 'recipe.yaml': parameterRecipe }, ['recipe.yaml', '--param', 'topic=tea', '--quiet']);
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe('Four.\n');
    expect(result.exitCode).toBe(0);
    const chat = server.requests.filter((request) => request.path === '/v1/chat/completions');
    expect(chat).toHaveLength(1);
    expect(JSON.stringify(chat[0].body)).toContain('List 3 facts about tea, formal.');
  });

  it('exits 2 on a schema error in the recipe', async () => {
    const result = await run({ 'recipe.yaml': 'version: 1\nname: typo\npromt: Hi\nagent: assistant\n' }, ['recipe.yaml']);
    expect(result.exitCode).toBe(2);
    expect(result.diagnostics).toEqual(["recipe.yaml:3:1: error: unknown key 'promt' (did you mean 'prompt'?)"]);
    expect(server.requests).toEqual([]);
  });

  it('exits 2 on a recipe naming an unknown agent', async () => {
    const result = await run({ 'recipe.yaml': 'version: 1\nname: lost\nprompt: Hi\nagent: asistant\n' }, ['recipe.yaml']);
    expect(result.exitCode).toBe(2);
    expect(result.diagnostics[0]).toContain("recipe.yaml:4:8: error: no agent named 'asistant' (did you mean 'assistant'?)");
    expect(server.requests).toEqual([]);
  });

  it('exits 2 on an unknown --param name, with a suggestion', async () => {
    const result = await run({ 'recipe.yaml': parameterRecipe }, ['recipe.yaml', '--param', 'topic=tea', '--param', 'cuont=4']);
    expect(result.exitCode).toBe(2);
    expect(result.diagnostics).toEqual(["recipe.yaml: error: --param cuont: the recipe has no parameter 'cuont' (did you mean 'count'?)"]);
    expect(server.requests).toEqual([]);
  });

  it('exits 2 on a --param value that is not a number', async () => {
    const result = await run({ 'recipe.yaml': parameterRecipe }, ['recipe.yaml', '--param', 'topic=tea', '--param', 'count=many']);
    expect(result.exitCode).toBe(2);
    expect(result.diagnostics).toEqual(["recipe.yaml:5:3: error: --param count: 'many' is not a number"]);
    expect(server.requests).toEqual([]);
  });

  it('exits 2 on an enum --param value outside its values', async () => {
    const result = await run({ 'recipe.yaml': parameterRecipe }, ['recipe.yaml', '--param', 'topic=tea', '--param', 'tone=rude']);
    expect(result.exitCode).toBe(2);
    expect(result.diagnostics).toEqual(["recipe.yaml:6:3: error: --param tone: 'rude' is not one of: formal, casual"]);
    expect(server.requests).toEqual([]);
  });

  it('exits 2 when a required parameter is not given', async () => {
    const result = await run({ 'recipe.yaml': parameterRecipe }, ['recipe.yaml']);
    expect(result.exitCode).toBe(2);
    expect(result.diagnostics).toEqual(["recipe.yaml:4:3: error: parameter 'topic' is required: pass --param topic=VALUE"]);
    expect(server.requests).toEqual([]);
  });

  it('reports every --param problem of one command together', async () => {
    const result = await run({ 'recipe.yaml': parameterRecipe }, ['recipe.yaml', '--param', 'count=many', '--param', 'tone=rude']);
    expect(result.exitCode).toBe(2);
    expect(result.diagnostics).toEqual([
      "recipe.yaml:4:3: error: parameter 'topic' is required: pass --param topic=VALUE",
      "recipe.yaml:5:3: error: --param count: 'many' is not a number",
      "recipe.yaml:6:3: error: --param tone: 'rude' is not one of: formal, casual",
    ]);
    expect(server.requests).toEqual([]);
  });

  describe('API key variables', () => {
    const keyedAgents = [
      'version: 1',
      'llm:',
      '  used:',
      '    api_key_env: FIRST_UNSET_KEY',
      '  spare:',
      '    api_key_env: SECOND_UNSET_KEY',
      'agents:',
      '  keyed:',
      '    llm: used',
      '    tools: [terminate]',
      '',
    ].join('\n');
    const files = { 'agents.yaml': keyedAgents, 'recipe.yaml': 'version: 1\nname: keyed\nprompt: Add two and two.\nagent: keyed\n' };

    it('exits 2 naming the missing variable of the profile the run uses, and only that one', async () => {
      const result = await run(files, ['recipe.yaml']);
      expect(result.exitCode).toBe(2);
      expect(result.diagnostics).toEqual([
        "agents.yaml:4:5: error: model profile 'used' needs environment variables that are not set: FIRST_UNSET_KEY",
      ]);
      expect(result.stderr).not.toContain('SECOND_UNSET_KEY');
      expect(server.requests).toEqual([]);
    });

    it('runs once the used profile has its key, although the other profile still lacks one', async () => {
      const result = await run(files, ['recipe.yaml', '--quiet'], { FIRST_UNSET_KEY: 'test-key' });
      expect(result.stdout).toBe('Four.\n');
      expect(result.exitCode).toBe(0);
      const chat = server.requests.filter((request) => request.path === '/v1/chat/completions');
      expect(chat).toHaveLength(1);
      expect(chat[0].headers.authorization).toBe('Bearer test-key');
    });
  });
});
