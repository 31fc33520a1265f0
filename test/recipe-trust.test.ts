import { existsSync, mkdirSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { exitCodeForError } from '../cli/exit-codes.js';
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

describe('a recipe\'s permissions merge with its agent\'s', () => {
  it('keeps the agent\'s deny when the recipe lists none, and says so where the recipe tried', async () => {
    const resolved = await plan({
      'agents.yaml': guardedAgents('{ deny: [bash], ask: [terminate] }'),
      'recipe.yaml': recipeFor('guarded', ['permissions: { deny: [], ask: [python_execute] }']),
    });
    expect(resolved.agent.permissions).toEqual({ deny: ['bash'], ask: ['terminate', 'python_execute'] });
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
    expect((await plan(files, {}, 'version: 1\ntrust: [all]\n')).trustGrants.size).toBe(9);
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
    expect(toolMessages(run.requests[1])[0].content).toContain("Permission denied: the tool 'bash' is not allowed");
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
    expect(run.json).toMatchObject({ status: 'permission-denied', error: { code: 'permission_denied' } });
    expect(run.json.answer).toContain('approve it with --answer yes');
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
    expect(badGrant.stderr).toContain("config.yaml:2:15: error: 'trust.1' must be one of: host, network, env, image, resources, workspace, browser, mcp, sampling, all (did you mean 'host'?)");
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
