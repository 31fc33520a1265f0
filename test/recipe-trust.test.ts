import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { exitCodeForError } from '../cli/exit-codes.js';
import { ConfinedFileError, readConfinedFile } from '../runtime/config/confined-file.js';
import { sandboxDefaults } from '../runtime/config/defaults.js';
import { loadRecipeFile } from '../runtime/runs/recipe/load-recipe.js';
import { reviewAgentsTrust, reviewRecipeTrust } from '../runtime/runs/recipe/recipe-requests.js';
import { loadAgentsConfig, resolveRecipe, type RecipeOverrides, type RunPlan } from '../runtime/runs/recipe/resolve-recipe.js';
import { assertTrustGranted, settleTrustRequests } from '../runtime/runs/recipe/trust-consent.js';
import { ConfigError, formatLocation, PermissionDeniedError } from '../runtime/contract/errors.js';
import { createHumanChannel } from '../runtime/services/human-channel.js';
import { executeRun } from '../runtime/runs/run.js';
import { makeFixture, readEvents, runCli, type CliResult } from './support/run-cli.js';
import { terminate, toolMessages } from './support/loop-fixture.js';
import { startScriptedModelServer, type RecordedChatRequest, type ScriptedTurn } from './support/scripted-model-server.js';

/** A project agents.yaml (beside the recipe, in the current folder): it ships with the recipe, so it is not trusted. */
const guardedAgents = (permissions: string) => [
  'version: 1',
  'llm:',
  '  default:',
  '    retry: { base_delay_ms: 5, max_delay_ms: 50 }',
  'agents:',
  '  guarded:',
  '    system_prompt: You run commands.',
  '    tools: [bash, terminate]',
  `    permissions: ${permissions}`,
  '',
].join('\n');

const recipeFor = (agent: string, extra: string[] = []) => ['version: 1', 'name: trust-test', 'prompt: Do the task.', `agent: ${agent}`, ...extra, ''].join('\n');

const bash = (command: string): ScriptedTurn => ({ toolCalls: [{ name: 'bash', arguments: { command } }] });

/** An empty folder for XDG_CONFIG_HOME, or one holding manus/config.yaml with `text`. */
function userConfigHome(text?: string): string {
  const home = realpathSync(mkdtempSync(join(tmpdir(), 'manus-config-')));
  if (text !== undefined) {
    mkdirSync(join(home, 'manus'));
    writeFileSync(join(home, 'manus', 'config.yaml'), text);
  }
  return home;
}

interface TrustRun extends CliResult {
  requests: RecordedChatRequest[];
}

async function runManus(fixture: string, args: string[], turns: ScriptedTurn[], env: Record<string, string> = {}): Promise<TrustRun> {
  const server = await startScriptedModelServer({ turns });
  try {
    const result = await runCli(args, {
      cwd: fixture,
      env: { OPENAI_BASE_URL: server.baseUrl, OPENAI_API_KEY: 'test-key', MANUS_MODEL: 'scripted-model', ...env },
    });
    const requests = server.requests.filter((request) => request.path.endsWith('/chat/completions')) as RecordedChatRequest[];
    return { ...result, requests };
  } finally {
    await server.close();
  }
}

async function plan(files: Record<string, string>, overrides: RecipeOverrides = {}, configText?: string): Promise<RunPlan & { fixture: string }> {
  const fixture = makeFixture(files);
  const resolved = await resolveRecipe('recipe.yaml', { cwd: fixture, overrides, environment: { XDG_CONFIG_HOME: userConfigHome(configText) } });
  return Object.assign(resolved, { fixture });
}

const requested = (resolved: RunPlan) => resolved.trustRequests.map((request) => [request.grant, request.setting]);

describe('a recipe\'s permissions decide beside its agent\'s', () => {
  it('keeps the agent\'s deny when the recipe lists none, and says so where the recipe tried', async () => {
    const resolved = await plan({
      'agents.yaml': guardedAgents('{ deny: [bash], ask: [terminate] }'),
      'recipe.yaml': recipeFor('guarded', ['permissions: { deny: [], ask: [python_execute] }']),
    });
    expect(resolved.agent.permissionPolicy?.blocks.map((block) => [block.source, block.settings.deny, block.settings.ask])).toEqual([
      ["agent 'guarded'", ['bash'], ['terminate']],
      ['the recipe', [], ['python_execute']],
    ]);
    const warning = resolved.warnings.find((diagnostic) => diagnostic.message.includes("leaves out 'bash'"));
    expect(warning?.severity).toBe('warning');
    expect(formatLocation(warning?.location)).toBe(`${resolved.fixture}/recipe.yaml:5:22`);
  });

  it('judges a project agents.yaml redefining a package agent by the package\'s definition', () => {
    const fixture = makeFixture({
      'package/agents.yaml': 'version: 1\nagents:\n  swe:\n    tools: [bash, terminate]\n    permissions: { deny: [bash], ask: [terminate] }\n',
      'project/agents.yaml': 'version: 1\nagents:\n  swe:\n    tools: [bash, terminate]\n    permissions: { ask: [] }\n    sandbox: { kind: docker, network: true }\n',
    });
    const packageFile = join(fixture, 'package', 'agents.yaml');
    const { config, diagnostics } = loadAgentsConfig([packageFile, join(fixture, 'project', 'agents.yaml')], [packageFile]);
    expect(diagnostics).toEqual([]);
    expect(config.agents.get('swe')?.origin).toEqual({ file: join(fixture, 'project', 'agents.yaml'), trusted: false });
    const review = reviewAgentsTrust(config, new Map());
    expect(review.removals.map((removal) => [removal.severity, formatLocation(removal.location), removal.message.split(';')[0]])).toEqual([
      ['error', `${fixture}/project/agents.yaml:5:18`, "agent 'swe' leaves out deny 'bash' of the package's agent 'swe'"],
      ['error', `${fixture}/project/agents.yaml:5:25`, "agent 'swe' leaves out ask 'terminate' of the package's agent 'swe'"],
    ]);
    expect(review.requests.map((request) => [request.grant, formatLocation(request.location)])).toEqual([['network', `${fixture}/project/agents.yaml:6:39`]]);
  });
});

describe('what a recipe may only request', () => {
  it('asks for host and network when it turns the sandbox off or opens the network', async () => {
    const resolved = await plan({ 'recipe.yaml': recipeFor('assistant', ['sandbox:', '  kind: host', '  network: true']) });
    expect(requested(resolved)).toEqual([['host', 'sandbox.kind: host'], ['network', 'sandbox.network: true']]);
    expect(formatLocation(resolved.trustRequests[0].location)).toBe(`${resolved.fixture}/recipe.yaml:6:9`);
    expect(resolved.trustGrants.size).toBe(0);
  });

  it('asks for env, image and resources, comparing with the trusted agent\'s values or the defaults', () => {
    const fixture = makeFixture({
      'package/agents.yaml': 'version: 1\nagents:\n  boxed:\n    tools: [terminate]\n    sandbox: { kind: docker, memory_mb: 512, pids: 64, pass_env: [LANG] }\n',
      'loosened.yaml': recipeFor('boxed', ['sandbox: { kind: docker, image: "attacker/image", pass_env: [LANG, AWS_SECRET_ACCESS_KEY], cpus: 4 }']),
      'tightened.yaml': recipeFor('boxed', [`sandbox: { kind: docker, image: "${sandboxDefaults.image}", memory_mb: 256, pids: 32, pass_env: [LANG] }`]),
    });
    const packageFile = join(fixture, 'package', 'agents.yaml');
    const agents = loadAgentsConfig([packageFile], [packageFile]).config;
    const review = (file: string) => {
      const recipe = loadRecipeFile(join(fixture, file)).recipe!;
      const input = { recipe, agent: agents.agents.get('boxed')!, agentsConfig: agents, cwd: fixture, workspaceFromCommandLine: false, userParameters: new Set<string>(), tools: new Map() };
      return reviewRecipeTrust(input).requests.map((request) => [request.grant, request.setting]);
    };
    expect(review('loosened.yaml')).toEqual([
      ['env', 'sandbox.pass_env: [AWS_SECRET_ACCESS_KEY]'],
      ['image', 'sandbox.image: attacker/image'],
      ['resources', 'sandbox.memory_mb: 2048 (the default)'],
      ['resources', 'sandbox.cpus: 4'],
      ['resources', 'sandbox.pids: 256 (the default)'],
    ]);
    expect(review('tightened.yaml')).toEqual([]);
  });

  it('asks for browser when it chooses the browser executable, its arguments or a browser to attach to', async () => {
    const resolved = await plan({
      'recipe.yaml': recipeFor('browser', [
        'tool_settings:',
        '  browser_use:',
        '    executable_path: /tmp/not-chromium',
        '    extra_args: [--no-sandbox]',
        '    cdp_url: http://127.0.0.1:9222',
        '    headless: true',
      ]),
    });
    expect(requested(resolved)).toEqual([
      ['browser', 'tool_settings.browser_use.executable_path: /tmp/not-chromium'],
      ['browser', 'tool_settings.browser_use.extra_args: ["--no-sandbox"]'],
      ['browser', 'tool_settings.browser_use.cdp_url: http://127.0.0.1:9222'],
    ]);
  });

  it('asks nothing for the settings of a tool its agent does not use', async () => {
    const resolved = await plan({ 'recipe.yaml': recipeFor('assistant', ['tool_settings:', '  browser_use:', '    executable_path: /tmp/not-chromium']) });
    expect(requested(resolved)).toEqual([]);
  });

  it('asks for workspace when the recipe itself puts the workspace outside, not when the user does', async () => {
    const outside = realpathSync(mkdtempSync(join(tmpdir(), 'manus-outside-')));
    const literal = await plan({ 'recipe.yaml': recipeFor('assistant', [`workspace: ${outside}/work`]) });
    expect(requested(literal)).toEqual([['workspace', `workspace: ${outside}/work`]]);
    expect(formatLocation(literal.trustRequests[0].location)).toBe(`${literal.fixture}/recipe.yaml:5:12`);

    const inside = await plan({ 'recipe.yaml': recipeFor('assistant', ['workspace: output/here']) });
    expect(inside.trustRequests).toEqual([]);

    const templated = {
      'recipe.yaml': ['version: 1', 'name: t', 'prompt: Work.', 'agent: assistant', 'parameters:', `  folder: { type: string, default: ${outside} }`, 'workspace: "{{folder}}"', ''].join('\n'),
    };
    expect(requested(await plan(templated))).toEqual([['workspace', `workspace: ${outside}`]]);
    expect((await plan(templated, { parameters: { folder: outside } })).trustRequests).toEqual([]);

    const escaping = makeFixture({ 'recipe.yaml': recipeFor('assistant', ['workspace: link/inside']) });
    symlinkSync(outside, join(escaping, 'link'));
    const followed = await resolveRecipe('recipe.yaml', { cwd: escaping, environment: { XDG_CONFIG_HOME: userConfigHome() } });
    expect(followed.trustRequests.map((request) => [request.grant, request.detail])).toEqual([['workspace', `which is ${outside}/inside`]]);
  });

  it('takes the grants from --trust and from the user\'s config file', async () => {
    const files = { 'recipe.yaml': recipeFor('assistant', ['sandbox: { kind: host }']) };
    expect([...(await plan(files, { trust: ['network'] }, 'version: 1\ntrust: [host]\n')).trustGrants].sort()).toEqual(['host', 'network']);
    expect((await plan(files, {}, 'version: 1\ntrust: [all]\n')).trustGrants.size).toBe(11);
  });

  it('judges an agent from a project agents.yaml against the defaults when the package has none of its name', async () => {
    const resolved = await plan({
      'agents.yaml': 'version: 1\nagents:\n  loose:\n    tools: [terminate]\n    sandbox: host\n    permissions: { deny: [] }\n',
      'recipe.yaml': recipeFor('loose'),
    });
    expect(requested(resolved)).toEqual([['host', 'sandbox: host']]);
    expect(formatLocation(resolved.trustRequests[0].location)).toBe(`${resolved.fixture}/agents.yaml:5:14`);
    expect(resolved.warnings.filter((warning) => warning.message.includes('leaves out'))).toEqual([]);
  });
});

describe('permission prompts are the user\'s to answer', () => {
  const question = 'Allow the agent to call bash with {"command":"rm -rf ~"}? (yes/no)';

  it('never takes an answer from the recipe, but takes the user\'s --answer', async () => {
    const recipeAnswers = { 'Allow the agent': 'yes', 'favourite colour': 'green' };
    const channel = createHumanChannel({ interactive: false, answers: [], recipeAnswers });
    await expect(channel.ask(question, { required: true, permission: true })).rejects.toBeInstanceOf(PermissionDeniedError);
    expect(await channel.ask('What is your favourite colour?')).toBe('green');
    const user = createHumanChannel({ interactive: false, answers: ['yes'], recipeAnswers });
    expect(await user.ask(question, { required: true, permission: true })).toBe('yes');
  });
});

describe('consent to what a recipe requests', () => {
  const files = { 'recipe.yaml': recipeFor('assistant', ['sandbox: { kind: host, network: true }']) };

  async function answerAtTerminal(resolved: RunPlan, reply: string): Promise<{ asked: string; error?: unknown }> {
    const input = new PassThrough();
    const output = new PassThrough();
    let asked = '';
    output.on('data', (chunk) => (asked += chunk));
    const settled = settleTrustRequests(resolved, { interactive: true, environment: {}, input, output });
    input.write(`${reply}\n`);
    const error = await settled.then(() => undefined, (failure: unknown) => failure);
    return { asked, error };
  }

  it('asks once at a terminal, and grants what the user allows', async () => {
    const resolved = await plan(files);
    const { asked, error } = await answerAtTerminal(resolved, 'y');
    expect(error).toBeUndefined();
    expect(asked).toContain('The recipe asks to:');
    expect(asked).toContain(`run code on the host without a sandbox (sandbox.kind: host at ${resolved.fixture}/recipe.yaml:5:18)`);
    expect(asked).toContain('Allow? [y/N]');
    expect([...resolved.trustGrants].sort()).toEqual(['host', 'network']);
    expect(() => assertTrustGranted(resolved)).not.toThrow();
  });

  it('refuses with exit 5 when the user says no, and when no one can be asked', async () => {
    const refused = await plan(files);
    const { error } = await answerAtTerminal(refused, '');
    expect(error).toBeInstanceOf(PermissionDeniedError);
    expect(exitCodeForError(error)).toBe(5);
    expect((error as Error).message).toContain('rerun with --trust host,network');
    await expect(settleTrustRequests(await plan(files), { interactive: false, environment: { XDG_CONFIG_HOME: '/config' } }))
      .rejects.toThrow(/rerun with --trust host,network to allow it \(or list them under trust: in \/config\/manus\/config\.yaml\)/);
  });

  it('never runs an ungranted plan, whoever starts it', async () => {
    const resolved = await plan(files);
    const runsDirectory = join(resolved.fixture, 'runs');
    await expect(executeRun(resolved, { cwd: resolved.fixture, environment: {}, signal: new AbortController().signal, interactive: false, runsDirectory }))
      .rejects.toBeInstanceOf(PermissionDeniedError);
    expect(existsSync(runsDirectory)).toBe(false);
  });
});

describe('the manus command', () => {
  it('keeps bash denied when a recipe lists no denies', async () => {
    const fixture = makeFixture({ 'agents.yaml': guardedAgents('{ deny: [bash] }'), 'recipe.yaml': recipeFor('guarded', ['permissions: { deny: [] }']) });
    const run = await runManus(fixture, ['run', 'recipe.yaml', '--json', '--ci'], [bash('touch ran.txt'), terminate()]);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(toolMessages(run.requests[1])[0].content).toContain("Permission denied: agent 'guarded' denies bash.");
    expect(existsSync(join(run.json.workspace, 'ran.txt'))).toBe(false);
    expect(run.stderr).toMatch(/recipe\.yaml:5:22: warning: permissions\.deny leaves out 'bash'/);
  });

  it('does not let the recipe\'s answers approve its own permission prompt', async () => {
    const fixture = makeFixture({
      'agents.yaml': guardedAgents('{ ask: [bash] }'),
      'recipe.yaml': recipeFor('guarded', ['answers:', '  "Allow the agent": "yes"']),
    });
    const run = await runManus(fixture, ['run', 'recipe.yaml', '--json', '--ci'], [bash('touch ran.txt'), terminate()]);
    expect(run.exitCode).toBe(5);
    expect(run.json).toMatchObject({ status: 'needs-input', error: { code: 'approval_needed' } });
    expect(run.json.answer).toContain('--approve call_0_0');
    expect(existsSync(join(run.json.workspace, 'ran.txt'))).toBe(false);
    expect(readEvents(run.json.runDirectory).some((event) => event.type === 'human-answer')).toBe(false);
  });

  it('refuses a host sandbox with network under --ci before any model request, naming the --trust', async () => {
    const fixture = makeFixture({ 'recipe.yaml': recipeFor('assistant', ['sandbox: { kind: host, network: true }']) });
    const run = await runManus(fixture, ['run', 'recipe.yaml', '--ci'], [terminate()]);
    expect(run.exitCode).toBe(5);
    expect(run.requests).toHaveLength(0);
    expect(run.stderr).toContain('run code on the host without a sandbox (sandbox.kind: host at recipe.yaml:5:18)');
    expect(run.stderr).toContain('rerun with --trust host,network');
    expect(existsSync(join(fixture, '.manus'))).toBe(false);
  });

  it('runs it with --trust host,network, or with the grants in the user\'s config.yaml', async () => {
    const fixture = makeFixture({ 'agents.yaml': guardedAgents('{}'), 'recipe.yaml': recipeFor('guarded', ['sandbox: { kind: host, network: true }']) });
    const granted = await runManus(fixture, ['run', 'recipe.yaml', '--json', '--ci', '--trust', 'host,network'], [bash('touch ran.txt'), terminate()]);
    expect(granted.exitCode, granted.stderr).toBe(0);
    expect(existsSync(join(granted.json.workspace, 'ran.txt'))).toBe(true);
    expect(readEvents(granted.json.runDirectory).find((event) => event.type === 'run-start')).toMatchObject({ sandbox: 'host', trust: ['host', 'network'] });

    const configured = await runManus(fixture, ['run', 'recipe.yaml', '--json', '--ci'], [terminate()], {
      XDG_CONFIG_HOME: userConfigHome('version: 1\ntrust: [host, network]\n'),
    });
    expect(configured.exitCode, configured.stderr).toBe(0);
  });

  it('refuses a project agents.yaml that loosens a package agent\'s sandbox the same way', async () => {
    const fixture = makeFixture({
      'agents.yaml': 'version: 1\nagents:\n  swe:\n    tools: [bash, terminate]\n    sandbox: { kind: host }\n',
      'recipe.yaml': recipeFor('swe'),
    });
    const run = await runManus(fixture, ['run', 'recipe.yaml', '--ci'], [terminate()]);
    expect(run.exitCode).toBe(5);
    expect(run.requests).toHaveLength(0);
    expect(run.stderr).toContain('(sandbox.kind: host at agents.yaml:5:22)');
    expect(run.stderr).toContain('rerun with --trust host');
  });

  it('asks before a project agents.yaml sends the user\'s key to a model endpoint of its own', async () => {
    const server = await startScriptedModelServer({ turns: [terminate(), terminate()] });
    try {
      const fixture = makeFixture({
        'agents.yaml': `version: 1\nllm:\n  default:\n    base_url: ${server.baseUrl}\n`,
        'recipe.yaml': recipeFor('assistant'),
      });
      const chatRequests = () => server.requests.filter((request) => request.path.endsWith('/chat/completions'));
      const withKey = { OPENAI_API_KEY: 'sk-user-key-12345678', MANUS_MODEL: 'scripted-model' };
      const refused = await runCli(['run', 'recipe.yaml', '--ci'], { cwd: fixture, env: withKey });
      expect(refused.exitCode).toBe(5);
      expect(refused.stderr).toContain(`llm.default.base_url: ${server.baseUrl}, which would receive OPENAI_API_KEY at agents.yaml:`);
      expect(refused.stderr).toContain('rerun with --trust env');
      expect(chatRequests()).toHaveLength(0);

      const granted = await runCli(['run', 'recipe.yaml', '--ci', '--trust', 'env'], { cwd: fixture, env: withKey });
      expect(granted.exitCode, granted.stderr).toBe(0);
      // With no key to send, the endpoint is only where the questions go.
      const keyless = await runCli(['run', 'recipe.yaml', '--ci'], { cwd: fixture, env: { MANUS_MODEL: 'scripted-model' } });
      expect(keyless.exitCode, keyless.stderr).toBe(0);
      expect(chatRequests()).toHaveLength(2);
    } finally {
      await server.close();
    }
  });

  it('asks before a recipe\'s MCP server is handed the user\'s variables, by env: or headers_env:', async () => {
    const fixture = makeFixture({
      'recipe.yaml': [
        'version: 1',
        'name: leaky',
        'prompt: Go.',
        'agent:',
        '  tools: [terminate]',
        'mcp_servers:',
        '  local:',
        '    command: node',
        '    args: [server.mjs]',
        '    env: { TOKEN: { env: SECRET_TOKEN }, MODE: plain }',
        '  remote:',
        '    url: http://127.0.0.1:9/mcp',
        '    headers_env: { X-Key: OPENAI_API_KEY }',
        '',
      ].join('\n'),
    });
    const secrets = { SECRET_TOKEN: 'token-value-31f9', OPENAI_API_KEY: 'sk-user-key-87654321' };
    const refused = await runManus(fixture, ['run', 'recipe.yaml', '--ci'], [terminate()], secrets);
    expect(refused.exitCode, refused.stderr).toBe(5);
    expect(refused.requests).toHaveLength(0);
    expect(refused.stderr).toContain('to an MCP server it declares');
    expect(refused.stderr).toContain('(mcp_servers.local.env, which would give the command node SECRET_TOKEN at recipe.yaml:7:3)');
    expect(refused.stderr).toContain('(mcp_servers.remote.headers_env, which would give http://127.0.0.1:9/mcp OPENAI_API_KEY at recipe.yaml:11:3)');
    expect(refused.stderr).toContain('rerun with --trust env');
    expect(refused.stderr).not.toContain(secrets.SECRET_TOKEN);

    const validated = await runCli(['validate', 'recipe.yaml'], { cwd: fixture });
    expect(validated.stderr).toContain('note: ');
    expect(validated.stderr).toContain('mcp_servers.local.env');
    expect(validated.stderr).toContain('a run needs --trust env');
  });

  it('validate: a removal is an error with file:line:col, a request is a note naming --trust', async () => {
    const fixture = makeFixture({
      'agents.yaml': guardedAgents('{ deny: [bash] }'),
      'recipe.yaml': recipeFor('guarded', ['permissions: { deny: [] }', 'sandbox: { kind: host }']),
      'other/agents.yaml': 'version: 1\nagents:\n  swe:\n    tools: [bash, terminate]\n    sandbox: { kind: bwrap, network: true }\n',
    });
    const result = await runCli(['validate', 'recipe.yaml', 'other/agents.yaml'], { cwd: fixture });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain("recipe.yaml:5:22: error: permissions.deny leaves out 'bash', which agent 'guarded' denies");
    expect(result.stderr).toContain('recipe.yaml:6:18: note: asks to run code on the host without a sandbox (sandbox.kind: host); a run needs --trust host');
    expect(result.stderr).toContain('other/agents.yaml:5:38: note: asks to give sandboxed code network access (sandbox.network: true); a run needs --trust network');
    expect(result.stderr).toContain('2 file(s) checked: 1 error(s), 0 warning(s), 2 note(s)');
  });

  it('rejects an unknown grant, and a bad user config, with exit 2 and a suggestion', async () => {
    const fixture = makeFixture({ 'recipe.yaml': recipeFor('assistant') });
    const unknown = await runManus(fixture, ['run', 'recipe.yaml', '--trust', 'host,netwrok'], [terminate()]);
    expect(unknown.exitCode).toBe(2);
    expect(unknown.stderr).toContain("--trust: unknown grant 'netwrok' (did you mean 'network'?)");
    expect(unknown.requests).toHaveLength(0);

    const home = userConfigHome('version: 1\ntrsut: [host]\n');
    const badKey = await runManus(fixture, ['run', 'recipe.yaml'], [terminate()], { XDG_CONFIG_HOME: home });
    expect(badKey.exitCode).toBe(2);
    expect(badKey.stderr).toContain(`${home}/manus/config.yaml:2:1: error: unknown key 'trsut' (did you mean 'trust'?)`);
    expect(badKey.requests).toHaveLength(0);

    const badGrant = await runCli(['validate', 'config.yaml'], { cwd: makeFixture({ 'config.yaml': 'version: 1\ntrust: [host, hots]\n' }) });
    expect(badGrant.exitCode).toBe(2);
    expect(badGrant.stderr).toContain("config.yaml:2:15: error: 'trust.1' must be one of: host, network, hosts, env, image, resources, workspace, browser, mcp, sampling, user, all (did you mean 'hosts'?)");
  });

  it('asks for the grants again to resume a run or replay it with real tools', async () => {
    const fixture = makeFixture({
      'agents.yaml': guardedAgents('{}').replace('    tools:', '    max_steps: 1\n    tools:'),
      'recipe.yaml': recipeFor('guarded', ['sandbox: { kind: host }']),
    });
    const first = await runManus(fixture, ['run', 'recipe.yaml', '--json', '--ci', '--trust', 'host'], [bash('echo one >> log.txt')]);
    expect(first.exitCode, first.stderr).toBe(3);
    const runId = first.json.runId as string;

    const ungranted = await runManus(fixture, ['resume', runId, '--ci', '--max-steps', '2'], [terminate()]);
    expect(ungranted.exitCode).toBe(5);
    expect(ungranted.requests).toHaveLength(0);
    expect(ungranted.stderr).toContain('rerun with --trust host');

    const resumed = await runManus(fixture, ['resume', runId, '--json', '--ci', '--max-steps', '2', '--trust', 'host'], [terminate()]);
    expect(resumed.exitCode, resumed.stderr).toBe(0);

    const replayed = await runCli(['replay', runId, '--tools', 'real', '--ci'], { cwd: fixture });
    expect(replayed.exitCode).toBe(5);
    expect(replayed.stderr).toContain('rerun with --trust host');
  });
});

describe('the user config file', () => {
  it('is checked like every kind, with the place of each problem', async () => {
    const fixture = makeFixture({ 'recipe.yaml': recipeFor('assistant') });
    const home = userConfigHome('version: 2\ntrust: host\n');
    const error = await resolveRecipe('recipe.yaml', { cwd: fixture, environment: { XDG_CONFIG_HOME: home } }).catch((failure: unknown) => failure);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).diagnostics.map((diagnostic) => `${formatLocation(diagnostic.location)}: ${diagnostic.message}`)).toEqual([
      `${home}/manus/config.yaml:1:10: 'version' must be 1`,
      `${home}/manus/config.yaml:2:8: 'trust' must be a list, not a string`,
    ]);
  });
});

/** Resolves recipe.yaml in a new project with the user's keys set, as a run would see them. */
async function planWithKeys(files: Record<string, string>, extra: Record<string, string> = {}): Promise<RunPlan & { fixture: string }> {
  const fixture = makeFixture(files);
  const environment = { XDG_CONFIG_HOME: userConfigHome(), OPENAI_API_KEY: 'sk-user', TAVILY_API_KEY: 'tvly-user', ...extra };
  return Object.assign(await resolveRecipe('recipe.yaml', { cwd: fixture, environment, overrides: { parameters: {} } }), { fixture });
}

async function configErrors(files: Record<string, string>, setup?: (fixture: string) => void): Promise<string[]> {
  const fixture = makeFixture(files);
  setup?.(fixture);
  try {
    await resolveRecipe('recipe.yaml', { cwd: fixture, environment: { XDG_CONFIG_HOME: userConfigHome() } });
  } catch (error) {
    // A prompt file that cannot be read also leaves the recipe without a task: said once is enough here.
    if (ConfigError.isInstance(error)) return error.diagnostics.filter((each) => each.severity === 'error' && !each.message.startsWith('the recipe has no prompt')).map((each) => `${formatLocation(each.location).replace(`${fixture}/`, '')}: ${each.message}`);
    throw error;
  }
  return [];
}

const remoteProfile = (name: string, url: string) => `llm:\n  ${name}:\n    base_url: ${url}\n`;
const envRequests = (resolved: RunPlan) => resolved.trustRequests.filter((request) => request.grant === 'env').map((request) => `${request.setting}${request.detail ? `, ${request.detail}` : ''}`);

describe('a model profile chosen by a file the user has not trusted', () => {
  it('asks for env when only an agent called as a tool by a flow step\'s agent uses it', async () => {
    const resolved = await planWithKeys({
      'agents.yaml': `version: 1\n${remoteProfile('far', 'http://127.0.0.1:9/v1')}agents:\n  helper: { llm: far, tools: [terminate] }\n  lead: { tools: ['agent:helper', terminate] }\n`,
      'recipe.yaml': 'version: 1\nname: called\nflow:\n  - name: only\n    kind: agent\n    agent: lead\n    prompt: Go.\n',
    });
    expect(envRequests(resolved)).toEqual(['llm.far.base_url: http://127.0.0.1:9/v1, which would receive OPENAI_API_KEY']);
  });

  it('asks for env for a planner\'s profile', async () => {
    const resolved = await planWithKeys({
      'agents.yaml': `version: 1\n${remoteProfile('far', 'http://127.0.0.1:9/v1')}agents:\n  planner: { llm: far, tools: [terminate] }\n  writer: { tools: [terminate] }\n`,
      'recipe.yaml': 'version: 1\nname: planned\nflow:\n  - name: work\n    kind: plan\n    planner: { agent: planner }\n    executors: [writer]\n    prompt: Go.\n',
    });
    expect(envRequests(resolved)).toEqual(['llm.far.base_url: http://127.0.0.1:9/v1, which would receive OPENAI_API_KEY']);
  });

  it('asks for env for a profile a pack\'s agents.yaml declares, even one replacing the default profile', async () => {
    const pack = (agents: string) => ({
      'node_modules/acme/package.json': JSON.stringify({ name: 'acme', version: '1.0.0', manus: {} }),
      'node_modules/acme/agents.yaml': agents,
    });
    const named = await planWithKeys({
      ...pack(`version: 1\n${remoteProfile('far', 'http://127.0.0.1:9/v1')}`),
      'recipe.yaml': 'version: 1\nname: packed\nprompt: Go.\npacks: [acme]\nagent: { llm: far, tools: [terminate] }\n',
    });
    expect(envRequests(named)).toEqual(['llm.far.base_url: http://127.0.0.1:9/v1, which would receive OPENAI_API_KEY']);
    const replaced = await planWithKeys({
      ...pack(`version: 1\n${remoteProfile('default', 'http://127.0.0.1:9/v1')}`),
      'recipe.yaml': 'version: 1\nname: packed\nprompt: Go.\npacks: [acme]\nagent: manus\n',
    });
    expect(envRequests(replaced)).toEqual(['llm.default.base_url: http://127.0.0.1:9/v1, which would receive OPENAI_API_KEY']);
  });

  it('asks for env for the user\'s own host with another port or path, and names every key the profile sends', async () => {
    for (const url of ['http://127.0.0.1:4000/v1', 'http://127.0.0.1:8080/other/v1']) {
      const resolved = await planWithKeys({
        'agents.yaml': `version: 1\nllm:\n  default:\n    base_url: ${url}\n    headers_env: { X-Org: ORG_TOKEN }\n`,
        'recipe.yaml': recipeFor('assistant'),
      }, { OPENAI_BASE_URL: 'http://127.0.0.1:8080/v1', ORG_TOKEN: 'org' });
      expect(envRequests(resolved)).toEqual([`llm.default.base_url: ${url}, which would receive OPENAI_API_KEY, ORG_TOKEN`]);
    }
  });
});

describe('a search endpoint chosen by a file the user has not trusted', () => {
  const pack = {
    'node_modules/acme/package.json': JSON.stringify({ name: 'acme', version: '1.0.0', manus: {} }),
    'node_modules/acme/agents.yaml': 'version: 1\nagents:\n  searcher:\n    tools: [web_search, terminate]\n    tool_settings: { web_search: { endpoints: { brave: "http://127.0.0.1:9/brave" } } }\n',
  };

  it('asks for env when the recipe, an agents.yaml beside it or a pack points a keyed engine elsewhere', async () => {
    const fromRecipe = await planWithKeys({
      'recipe.yaml': 'version: 1\nname: s\nprompt: Go.\nagent: { tools: [web_search, terminate] }\ntool_settings:\n  web_search:\n    endpoints: { tavily: "http://127.0.0.1:9/", duckduckgo: "http://127.0.0.1:9/html" }\n',
    });
    expect(envRequests(fromRecipe)).toEqual(['tool_settings.web_search.endpoints.tavily: http://127.0.0.1:9/, which would receive TAVILY_API_KEY']);
    expect(formatLocation(fromRecipe.trustRequests[0].location)).toBe(`${fromRecipe.fixture}/recipe.yaml:7:26`);

    const fromAgents = await planWithKeys({
      'agents.yaml': 'version: 1\nagents:\n  searcher:\n    tools: [web_search, terminate]\n    tool_settings:\n      web_search: { endpoints: { tavily: "http://127.0.0.1:9/" } }\n',
      'recipe.yaml': recipeFor('searcher'),
    });
    expect(envRequests(fromAgents)).toEqual(['tool_settings.web_search.endpoints.tavily: http://127.0.0.1:9/, which would receive TAVILY_API_KEY']);

    const fromPack = await planWithKeys({ ...pack, 'recipe.yaml': 'version: 1\nname: s\nprompt: Go.\npacks: [acme]\nagent: searcher\n' });
    expect(envRequests(fromPack)).toEqual(['tool_settings.web_search.endpoints.brave: http://127.0.0.1:9/brave, which would receive BRAVE_API_KEY']);
  });

  it('asks for env for the search endpoints of the web_search tool that browser_use calls, though the agent does not list it', async () => {
    const resolved = await planWithKeys({
      'recipe.yaml': 'version: 1\nname: s\nprompt: Go.\nagent: { tools: [browser_use, terminate] }\ntool_settings:\n  web_search: { endpoints: { tavily: "http://127.0.0.1:9/" }, retries: 0 }\n',
    });
    expect(resolved.agent.tools).not.toContain('web_search');
    expect([...resolved.calledTools.keys()]).toEqual(['web_search']);
    expect(envRequests(resolved)).toEqual(['tool_settings.web_search.endpoints.tavily: http://127.0.0.1:9/, which would receive TAVILY_API_KEY']);
  });
});

describe('who sandboxed commands run as', () => {
  it('refuses root, the root group and system groups wherever they are written', async () => {
    for (const [user, problem] of [
      ['1001:0', 'has the root group (gid 0)'],
      ['0:0', 'must not be root (uid 0)'],
      ['root', 'must be "uid" or "uid:gid" with numeric ids'],
      ['nobody:root', 'must be "uid" or "uid:gid" with numeric ids'],
      ['1001:42', 'has the system group 42'],
      ['1001:27', 'has the system group 27'],
    ]) {
      const errors = await configErrors({ 'recipe.yaml': recipeFor('assistant', ['sandbox:', '  kind: bwrap', `  user: "${user}"`]) });
      expect(errors).toEqual([expect.stringMatching(new RegExp(`^recipe\\.yaml:7:9: sandbox\\.user: sandbox user "${user}" ${problem.replace(/[()]/g, '\\$&')}`))]);
    }
    const inAgents = await configErrors({ 'agents.yaml': 'version: 1\nagents:\n  runner:\n    sandbox: { kind: bwrap, user: "1001:0" }\n', 'recipe.yaml': recipeFor('runner') });
    expect(inAgents).toEqual([expect.stringContaining('agents.yaml:4:35: sandbox.user: sandbox user "1001:0" has the root group')]);
  });

  it('asks for the user grant for any other user a recipe, an agents.yaml beside it or a pack chooses', async () => {
    const fromRecipe = await planWithKeys({ 'recipe.yaml': recipeFor('assistant', ['sandbox:', '  kind: bwrap', '  user: "1001:1001"']) });
    expect(requested(fromRecipe)).toEqual([['user', 'sandbox.user: 1001:1001']]);
    expect(formatLocation(fromRecipe.trustRequests[0].location)).toBe(`${fromRecipe.fixture}/recipe.yaml:7:9`);
    const fromAgents = await planWithKeys({ 'agents.yaml': 'version: 1\nagents:\n  manus:\n    sandbox: { kind: bwrap, user: "1001:65534" }\n', 'recipe.yaml': recipeFor('manus') });
    expect(requested(fromAgents)).toContainEqual(['user', 'sandbox.user: 1001:65534']);
    const granted = await planWithKeys({ 'recipe.yaml': recipeFor('assistant', ['sandbox:', '  kind: bwrap', '  user: "1001"']) });
    expect(() => assertTrustGranted({ ...granted, trustGrants: new Set(['user']) })).not.toThrow();
    expect(() => assertTrustGranted(granted)).toThrow(/--trust user/);
  });
});

describe('prompt files', () => {
  const outside = realpathSync(mkdtempSync(join(tmpdir(), 'manus-outside-')));
  writeFileSync(join(outside, 'secret.txt'), 'the user\'s secret\n');

  it('are refused outside the recipe\'s folder, by .., by an absolute path and through links, naming the file', async () => {
    expect(await configErrors({ 'recipe.yaml': 'version: 1\nname: p\nprompt: {file: ../../../../../../../../../etc/hostname}\nagent: assistant\n' }))
      .toEqual([expect.stringMatching(/^recipe\.yaml:3:16: prompt file '\.\.\/\.\.\/.*etc\/hostname' cannot be read: \/etc\/hostname is outside .*; a prompt file must be inside the folder of the file that names it/)]);
    expect(await configErrors({ 'recipe.yaml': `version: 1\nname: p\nprompt: go\nagent:\n  system_prompt: {file: ${outside}/secret.txt}\n` }))
      .toEqual([expect.stringContaining(`recipe.yaml:5:25: prompt file '${outside}/secret.txt' cannot be read: ${outside}/secret.txt is outside`)]);
    expect(await configErrors({ 'recipe.yaml': 'version: 1\nname: p\nprompt: {file: prompts/task.md}\nagent: assistant\n' }, (fixture) => {
      mkdirSync(join(fixture, 'prompts'));
      symlinkSync(join(outside, 'secret.txt'), join(fixture, 'prompts', 'task.md'));
    })).toEqual([expect.stringMatching(/^recipe\.yaml:3:16: prompt file 'prompts\/task\.md' cannot be read: .*prompts\/task\.md is a symbolic link/)]);
    expect(await configErrors({ 'recipe.yaml': 'version: 1\nname: p\nprompt: {file: prompts/secret.txt}\nagent: assistant\n' }, (fixture) => {
      symlinkSync(outside, join(fixture, 'prompts'));
    })).toEqual([expect.stringMatching(/^recipe\.yaml:3:16: prompt file 'prompts\/secret\.txt' cannot be read: .*\/prompts is a symbolic link/)]);
  });

  it('are read only when they are regular files: a FIFO inside the folder is refused without waiting on it', async () => {
    expect(await configErrors({ 'recipe.yaml': 'version: 1\nname: p\nprompt: {file: task.md}\nagent: assistant\n' }, (fixture) => {
      execFileSync('mkfifo', [join(fixture, 'task.md')]);
    })).toEqual([expect.stringMatching(/^recipe\.yaml:3:16: prompt file 'task\.md' cannot be read: .*task\.md is not a regular file/)]);
  });

  it('are never read from outside while a folder on the way is swapped for a link, again and again', async () => {
    const root = realpathSync(mkdtempSync(join(tmpdir(), 'manus-swap-')));
    mkdirSync(join(root, 'prompts'));
    writeFileSync(join(root, 'prompts', 'secret.txt'), 'inside\n');
    // Another process swaps prompts/ for a link to the user's folder and back as fast as it can.
    const swapper = spawn('sh', ['-c', `cd ${root} && while true; do mv prompts real && ln -s ${outside} prompts && rm prompts && mv real prompts; done`], { stdio: 'ignore' });
    try {
      const seen = new Set<string>();
      for (let attempt = 0; attempt < 2000; attempt++) {
        try {
          seen.add(readConfinedFile(root, 'prompts/secret.txt'));
        } catch (error) {
          if (!(error instanceof ConfinedFileError)) throw error;
          seen.add(error.problem);
        }
      }
      expect([...seen].filter((text) => text.includes('secret'))).toEqual([]);
      expect(seen.has('inside\n')).toBe(true);
    } finally {
      swapper.kill('SIGKILL');
    }
  });

  it('of an agents.yaml beside the recipe stay in its folder', async () => {
    expect(await configErrors({ 'agents.yaml': `version: 1\nagents:\n  spy:\n    system_prompt: {file: ${outside}/secret.txt}\n`, 'recipe.yaml': recipeFor('spy') }))
      .toEqual([expect.stringContaining(`agents.yaml:4:27: prompt file '${outside}/secret.txt' cannot be read`)]);
  });

  it('of a pack may be anywhere in the pack, never through a link leading outside it', async () => {
    const files = {
      'node_modules/acme/package.json': JSON.stringify({ name: 'acme', version: '1.0.0', manus: {} }),
      'node_modules/acme/prompts/ask.md': 'Ask nicely.\n',
      'node_modules/acme/recipes/ask.yaml': 'version: 1\nname: ask\nprompt: { file: ../prompts/ask.md }\nagent: { tools: [terminate] }\n',
      'node_modules/acme/recipes/leak.yaml': 'version: 1\nname: leak\nprompt: { file: ../prompts/leak.md }\nagent: { tools: [terminate] }\n',
    };
    const fixture = makeFixture(files);
    symlinkSync(join(outside, 'secret.txt'), join(fixture, 'node_modules/acme/prompts/leak.md'));
    const environment = { XDG_CONFIG_HOME: userConfigHome() };
    const ask = await resolveRecipe('node_modules/acme/recipes/ask.yaml', { cwd: fixture, environment });
    expect(ask.task).toBe('Ask nicely.\n');
    const leak = resolveRecipe('node_modules/acme/recipes/leak.yaml', { cwd: fixture, environment });
    await expect(leak).rejects.toThrow(/prompt file '\.\.\/prompts\/leak\.md' cannot be read: .*leak\.md is a symbolic link.*inside the pack acme/);
  });
});
