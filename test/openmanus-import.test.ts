import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { ConfigError } from '../runtime/contract/errors.js';
import { importOpenManus, type OpenManusImport } from '../runtime/applications/openmanus-import/import-openmanus.js';
import { parseYamlText } from '../runtime/config/yaml-source.js';
import { emptyAgentsConfig, loadAgentsSource } from '../runtime/runs/recipe/load-agents.js';
import { probeBwrap } from '../runtime/services/sandbox/create-sandbox.js';
import { readBrowserSettings } from '../plugins/browser/browser-settings.js';
import { readSearchSettings } from '../plugins/web/search-settings.js';
import { makeFixture, readEvents, repositoryRoot, runCli } from './support/run-cli.js';
import { scriptedModelName, startScriptedModelServer, type RecordedChatRequest, type ScriptedModelServer } from './support/scripted-model-server.js';

const fixtureFolder = join(repositoryRoot, 'test', 'fixtures', 'openmanus', 'config');
const configFile = join(fixtureFolder, 'config.toml');
const mcpFile = join(fixtureFolder, 'mcp.json');

/** Every secret value the fixtures hold: none may reach the written file or the terminal. */
const secrets = [
  'sk-fixture-default-4f1c0d',
  'sk-fixture-vision-9a7e21',
  'azure-fixture-key-77b3',
  'ppio-fixture-key-31d0',
  'jiekou-fixture-key-52aa',
  'odd-fixture-key-0c9e',
  'proxy-fixture-password-e5',
  'daytona-fixture-key-b81f',
  'vnc-fixture-password-6d',
  'ghp_fixture_token_1d2c',
  'mcp-fixture-token-a4',
];

function expectNoSecrets(text: string): void {
  for (const secret of secrets) expect(text).not.toContain(secret);
}

/** A project folder holding a copy of OpenManus's config folder, as a user would have it. */
function openManusProject(files: Record<string, string> = {}): string {
  const project = makeFixture(files);
  mkdirSync(join(project, 'config'), { recursive: true });
  copyFileSync(configFile, join(project, 'config', 'config.toml'));
  copyFileSync(mcpFile, join(project, 'config', 'mcp.json'));
  return project;
}

async function importFixture(): Promise<{ imported: OpenManusImport; data: any; outputFile: string }> {
  const outputFile = join(makeFixture({}), 'agents.yaml');
  const imported = await importOpenManus({ configFile, mcpFile, outputFile });
  return { imported, data: parseYaml(imported.text), outputFile };
}

describe('importing OpenManus\'s config.toml and mcp.json', () => {
  it('writes an agents file that the runtime\'s own loader accepts, with every profile, agent and server', async () => {
    const { imported, outputFile } = await importFixture();
    const parsed = parseYamlText(outputFile, imported.text);
    const config = emptyAgentsConfig();
    expect(loadAgentsSource(parsed.source!, config)).toEqual([]);
    expect([...config.profiles.keys()]).toEqual(['default', 'vision', 'azure', 'bedrock', 'local', 'ppio', 'jiekou', 'writer', 'odd']);
    expect([...config.agents.keys()]).toEqual(['manus', 'browser', 'swe', 'data_analysis']);
    expect(config.mcpServers.map((server) => server.name)).toEqual(['server1', 'bourdon', 'github', 'search-api']);
    expect(imported.text).toMatch(/^version: 1$/m);
  });

  it('maps every api_type OpenManus documents to a provider, and marks [llm.vision] as the vision profile', async () => {
    const { data } = await importFixture();
    expect(data.llm.default).toEqual({
      provider: 'openai-compatible',
      base_url: 'https://api.anthropic.com/v1/',
      model: 'claude-3-7-sonnet-20250219',
      api_key_env: 'OPENMANUS_LLM_API_KEY',
      max_tokens: 8192,
      temperature: 0,
      context_window: 200000,
    });
    expect(data.llm.vision).toMatchObject({ provider: 'openai', model: 'gpt-4o', vision: true, api_key_env: 'OPENMANUS_LLM_VISION_API_KEY', max_tokens: 4096 });
    expect(data.llm.default.vision).toBeUndefined();
    expect(data.llm.azure).toMatchObject({
      provider: 'azure',
      base_url: 'https://fixture.openai.azure.com',
      deployment: 'gpt4o-mini-prod',
      api_version: '2024-08-01-preview',
      api_key_env: 'OPENMANUS_LLM_AZURE_API_KEY',
    });
    expect(data.llm.local).toMatchObject({ provider: 'ollama', base_url: 'http://localhost:11434/v1', model: 'llama3.2' });
    expect(data.llm.ppio).toMatchObject({ provider: 'openai-compatible', base_url: 'https://api.ppinfra.com/v3/openai', api_key_env: 'OPENMANUS_LLM_PPIO_API_KEY' });
    expect(data.llm.jiekou).toMatchObject({ provider: 'openai-compatible', base_url: 'https://api.jiekou.ai/openai' });
    expect(data.llm.odd).toMatchObject({ provider: 'openai-compatible', base_url: 'https://models.example/v1' });
    // A named section inherits what it does not set from [llm], as in OpenManus, its key included.
    expect(data.llm.writer).toMatchObject({ base_url: 'https://api.anthropic.com/v1/', api_key_env: 'OPENMANUS_LLM_API_KEY', temperature: 0.7 });
    // The browser agent, which sees screenshots, uses the vision profile.
    expect(data.agents.browser.llm).toBe('vision');
  });

  it('turns api_type = "aws" into a profile without an endpoint, with a note in the file and in the report', async () => {
    const { imported, data } = await importFixture();
    expect(data.llm.bedrock).toEqual({ provider: 'openai-compatible', model: 'us.anthropic.claude-3-7-sonnet-20250219-v1:0', max_tokens: 8192, temperature: 1, context_window: 200000 });
    expect(imported.text).toMatch(/# OpenManus reached it through AWS Bedrock .*OpenAI-compatible Bedrock endpoint.*\n {2}bedrock:/);
    const note = imported.report.notes.find((finding) => finding.setting === '[llm.bedrock] api_type');
    expect(note?.message).toContain('OpenAI-compatible Bedrock endpoint');
    expect(note?.location).toEqual({ file: configFile, line: 30 });
    expect(imported.report.notes.find((finding) => finding.setting === '[llm.odd] api_type')?.message).toContain('"mystery" is not one OpenManus documents');
  });

  it('names a variable for every key, and writes no secret value into the file', async () => {
    const { imported } = await importFixture();
    expectNoSecrets(imported.text);
    expect(imported.report.variables).toEqual([
      { name: 'OPENMANUS_LLM_API_KEY', settings: ['[llm] api_key'] },
      { name: 'OPENMANUS_LLM_VISION_API_KEY', settings: ['[llm.vision] api_key'] },
      { name: 'OPENMANUS_LLM_AZURE_API_KEY', settings: ['[llm.azure] api_key'] },
      { name: 'OPENMANUS_LLM_LOCAL_API_KEY', settings: ['[llm.local] api_key'], hint: 'Ollama needs no key: any value will do' },
      { name: 'OPENMANUS_LLM_PPIO_API_KEY', settings: ['[llm.ppio] api_key'] },
      { name: 'OPENMANUS_LLM_JIEKOU_API_KEY', settings: ['[llm.jiekou] api_key'] },
      { name: 'OPENMANUS_LLM_ODD_API_KEY', settings: ['[llm.odd] api_key'] },
      { name: 'GITHUB_PERSONAL_ACCESS_TOKEN', settings: ['mcpServers.github.env.GITHUB_PERSONAL_ACCESS_TOKEN'] },
      { name: 'OPENMANUS_MCP_SEARCH_API_AUTHORIZATION', settings: ['mcpServers.search-api.headers.Authorization'] },
    ]);
  });

  it('gives the browser, search and sandbox settings to the agents that use them, in forms their tools read', async () => {
    const { data } = await importFixture();
    const browserUse = data.agents.manus.tool_settings.browser_use;
    expect(browserUse).toEqual({
      headless: true,
      extra_args: ['--lang=en-US'],
      executable_path: '/opt/chrome/chrome',
      cdp_url: 'http://127.0.0.1:9222',
      proxy: { server: 'http://proxy.example:3128', username: 'fixture-user' },
    });
    expect(data.agents.browser.tool_settings.browser_use).toEqual(browserUse);
    // The browser agent's web_search action searches through web_search, with the imported engines.
    expect(data.agents.browser.tool_settings.web_search).toEqual(data.agents.manus.tool_settings.web_search);
    const browser = readBrowserSettings(browserUse, {});
    expect(browser).toMatchObject({ headless: true, executablePath: '/opt/chrome/chrome', cdpUrl: 'http://127.0.0.1:9222', extraArgs: ['--lang=en-US'] });
    const search = readSearchSettings(data.agents.manus.tool_settings.web_search, {});
    expect(search).toMatchObject({ engines: ['google', 'duckduckgo', 'baidu', 'bing'], retries: 3, retryDelayMs: 60000 });
    // The package's own settings of the agent stay beside the imported ones.
    expect(Object.keys(data.agents.manus.tool_settings)).toEqual(['browser_use', 'web_search']);
    const sandbox = { kind: 'docker', memory_mb: 1024, cpus: 2, network: true };
    for (const agent of ['manus', 'swe', 'data_analysis']) expect(data.agents[agent].sandbox).toEqual(sandbox);
    expect(data.agents.browser.sandbox).toBeUndefined();
  });

  it('adds mcp.json\'s stdio and SSE/HTTP servers, started where OpenManus started them, and offers them to manus', async () => {
    const { data, outputFile } = await importFixture();
    expect(data.mcp_servers.server1).toEqual({ url: 'http://localhost:8000/sse' });
    expect(data.mcp_servers.bourdon).toMatchObject({ command: 'bourdon', args: ['serve', '--quiet'] });
    expect(join(outputFile, '..', data.mcp_servers.bourdon.cwd)).toBe(join(fixtureFolder, '..'));
    expect(data.mcp_servers.github.env).toEqual({ GITHUB_PERSONAL_ACCESS_TOKEN: { env: 'GITHUB_PERSONAL_ACCESS_TOKEN' } });
    expect(data.mcp_servers['search-api']).toEqual({ url: 'https://mcp.example/mcp', headers_env: { Authorization: 'OPENMANUS_MCP_SEARCH_API_AUTHORIZATION' } });
    expect(data.agents.manus.tools).toEqual(expect.arrayContaining(['python_execute', 'mcp_server1_*', 'mcp_bourdon_*', 'mcp_github_*', 'mcp_search-api_*']));
  });

  it('reports each setting it could not map, where it is written, with the reason', async () => {
    const { imported } = await importFixture();
    const unmapped = Object.fromEntries(imported.report.unmapped.map((finding) => [finding.setting, finding.message]));
    expect(Object.keys(unmapped)).toEqual([
      '[llm.bedrock] base_url',
      '[llm.bedrock] api_key',
      '[browser] disable_security',
      '[browser] wss_url',
      '[browser.proxy] password',
      '[search] lang',
      '[search] country',
      '[sandbox] image',
      '[sandbox] work_dir',
      '[sandbox] timeout',
      '[mcp] server_reference',
      '[runflow] use_data_analysis_agent',
      '[daytona] daytona_api_key',
      '[daytona] daytona_server_url',
      '[daytona] daytona_target',
      '[daytona] sandbox_image_name',
      '[daytona] sandbox_entrypoint',
      '[daytona] VNC_password',
    ]);
    expect(unmapped['[daytona] daytona_api_key']).toBe('there is no Daytona sandbox here (bubblewrap, Docker or the host); the value was not copied anywhere');
    expect(unmapped['[browser.proxy] password']).toContain('a password is never written to the YAML');
    expect(unmapped['[browser] wss_url']).toContain('Playwright browser server');
    expect(imported.report.unmapped.find((finding) => finding.setting === '[daytona] VNC_password')?.location).toEqual({ file: configFile, line: 108 });
    expectNoSecrets(JSON.stringify(imported.report));
  });

  it('reports values of the wrong type and sections it does not know, and maps what remains', async () => {
    const folder = makeFixture({
      'config.toml': [
        '[llm]', 'model = "m"', 'max_tokens = "lots"', 'temperature = 3', 'api_key = ""', 'top_p = 0.9',
        '[sandbox]', 'use_sandbox = false', 'memory_limit = "1g"',
        '[telemetry]', 'enabled = true',
      ].join('\n'),
    });
    const imported = await importOpenManus({ configFile: join(folder, 'config.toml'), outputFile: join(folder, 'agents.yaml') });
    expect(parseYaml(imported.text)).toEqual({ version: 1, llm: { default: { provider: 'openai-compatible', model: 'm' } } });
    expect(imported.report.unmapped.map((finding) => `${finding.location.line} ${finding.setting}: ${finding.message}`)).toEqual([
      '6 [llm] top_p: not an [llm] setting this import knows',
      '3 [llm] max_tokens: must be a whole number of at least 1',
      '4 [llm] temperature: must be a number from 0 to 2',
      '8 [sandbox] use_sandbox: OpenManus ran code on the host; here code always runs in a sandbox (bubblewrap, else Docker), so the agents keep sandbox: auto, and the other [sandbox] settings (memory_limit), which OpenManus used only with use_sandbox = true, are left out',
      '11 [telemetry] enabled: not an OpenManus setting this import knows',
    ]);
    expect(imported.report.variables).toEqual([]);
  });

  it('says where TOML is broken, by file, line and column, without quoting the line', async () => {
    const folder = makeFixture({ 'config.toml': '[llm]\nmodel = "m"\napi_key = "sk-broken-line-secret-77" trailing\n' });
    const error = await importOpenManus({ configFile: join(folder, 'config.toml'), outputFile: join(folder, 'agents.yaml') }).catch((caught: unknown) => caught);
    expect(ConfigError.isInstance(error)).toBe(true);
    const [diagnostic] = (error as ConfigError).diagnostics;
    expect(diagnostic).toMatchObject({ severity: 'error', location: { file: join(folder, 'config.toml'), line: 3, column: 38 } });
    expect(diagnostic!.message).toBe('not valid TOML: each key-value declaration must be followed by an end-of-line');
    expect(JSON.stringify(diagnostic)).not.toContain('sk-broken-line-secret-77');
  });
});

describe('manus import openmanus, the command', () => {
  it('writes agents.yaml in the current folder, prints the variables to set and what it left out, and no secret', async () => {
    const project = openManusProject();
    const result = await runCli(['import', 'openmanus', 'config/config.toml', '--mcp', 'config/mcp.json'], { cwd: project });
    expect(result.exitCode, result.stderr).toBe(0);
    expectNoSecrets(result.stdout + result.stderr);
    expectNoSecrets(readFileSync(join(project, 'agents.yaml'), 'utf8'));
    expect(result.stdout).toContain('wrote agents.yaml: 9 model profiles (default, vision, azure, bedrock, local, ppio, jiekou, writer, odd), 4 agents (manus, browser, swe, data_analysis), 4 MCP servers');
    expect(result.stdout).toMatch(/^ {2}OPENMANUS_LLM_API_KEY +the value of \[llm\] api_key$/m);
    expect(result.stdout).toMatch(/^ {2}OPENMANUS_LLM_LOCAL_API_KEY +the value of \[llm\.local\] api_key; Ollama needs no key: any value will do$/m);
    expect(result.stdout).toContain('  config/config.toml:103:1: [daytona] daytona_api_key: there is no Daytona sandbox here');
    expect(result.stdout).toContain('  config/config.toml:30:1: [llm.bedrock] api_type: api_type = "aws": OpenManus reached it through AWS Bedrock');
    expect(result.stdout).toContain('Runs with it need --trust env,network,resources,browser,mcp');
    expect(result.stdout).toContain('With --trust mcp the servers bourdon, github start on the host, as in OpenManus; without it, in the sandbox.');

    const validated = await runCli(['validate', 'agents.yaml'], { cwd: project });
    expect(validated.stderr).toMatch(/1 file\(s\) checked: 0 error\(s\)/);
    expect(validated.exitCode).toBe(0);
  });

  it('imports a stdio server of mcp.json that manus mcp list then starts, with the tools manus is offered', async () => {
    const project = makeFixture({
      'config/config.toml': '[llm]\nmodel = "m"\n',
      'config/mcp.json': JSON.stringify({ mcpServers: { tester: { type: 'stdio', command: process.execPath, args: [join(repositoryRoot, 'test', 'support', 'mcp-test-server.mjs')] } } }),
    });
    const imported = await runCli(['import', 'openmanus', 'config/config.toml', '--mcp', 'config/mcp.json'], { cwd: project });
    expect(imported.exitCode, imported.stderr).toBe(0);
    expect(readFileSync(join(project, 'agents.yaml'), 'utf8')).toContain('- mcp_tester_*');
    const listed = await runCli(['mcp', 'list', '--json', '--trust', 'mcp'], { cwd: project });
    expect(listed.exitCode, listed.stderr).toBe(0);
    const tester = listed.json.find((entry: { server: string }) => entry.server === 'tester');
    expect(tester.place).toBe('host');
    expect(tester.tools.map((tool: { name: string }) => tool.name)).toContain('mcp_tester_echo');
  });

  it('refuses to replace an existing file without --force (exit 2), and replaces it with --force', async () => {
    const project = openManusProject({ 'agents.yaml': 'version: 1\n# mine\n' });
    const refused = await runCli(['import', 'openmanus', 'config/config.toml'], { cwd: project });
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toContain('agents.yaml already exists; choose another file with --out, or replace it with --force');
    expect(readFileSync(join(project, 'agents.yaml'), 'utf8')).toBe('version: 1\n# mine\n');

    const forced = await runCli(['import', 'openmanus', 'config/config.toml', '--force'], { cwd: project });
    expect(forced.exitCode, forced.stderr).toBe(0);
    expect(readFileSync(join(project, 'agents.yaml'), 'utf8')).toContain('api_key_env: OPENMANUS_LLM_API_KEY');
  });

  it('writes where --out says, and says a file of another name is not read by runs', async () => {
    const project = openManusProject();
    const result = await runCli(['import', 'openmanus', 'config/config.toml', '--out', 'imported/openmanus.yaml'], { cwd: makeDirectory(project, 'imported') });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(readFileSync(join(project, 'imported', 'openmanus.yaml'), 'utf8')).toMatch(/^version: 1$/m);
    expect(result.stdout).toContain('Runs read agents.yaml from the current folder and beside the recipe');
  });

  it('never writes over the runtime\'s own agents.yaml, even with --force', async () => {
    const packageAgents = join(repositoryRoot, 'agents.yaml');
    const before = readFileSync(packageAgents, 'utf8');
    try {
      const result = await runCli(['import', 'openmanus', configFile, '--force'], { cwd: repositoryRoot });
      expect(result.exitCode).toBe(2);
      expect(result.stderr).toContain("is the runtime's own agents.yaml; write the import into your project with --out");
    } finally {
      if (readFileSync(packageAgents, 'utf8') !== before) writeFileSync(packageAgents, before);
    }
    expect(readFileSync(packageAgents, 'utf8')).toBe(before);
  });

  it('has help with examples and its exit codes', async () => {
    const help = await runCli(['import', 'openmanus', '--help'], { cwd: makeFixture({}) });
    expect(help.exitCode).toBe(0);
    expect(help.stdout).toContain('Usage: manus import openmanus [options] <config>');
    expect(help.stdout).toContain('Examples:\n  manus import openmanus config/config.toml');
    expect(help.stdout).toContain('Exit codes:\n  0    success');
  });

  it('exits 2 with file:line:column for broken TOML, and never echoes the line', async () => {
    const project = makeFixture({ 'config/config.toml': '[llm]\napi_key = "sk-broken-line-secret-77\nmodel = "m"\n' });
    const result = await runCli(['import', 'openmanus', 'config/config.toml'], { cwd: project });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toMatch(/config\.toml:2:\d+: error: not valid TOML: /);
    expect(result.stderr + result.stdout).not.toContain('sk-broken-line-secret-77');
  });

  it('exits 2 for a missing file, broken mcp.json and a command line without the config', async () => {
    const project = openManusProject({ 'bad.json': '{"mcpServers": {"a": {"env": {"K": "sk-json-secret-31"}}' });
    const missing = await runCli(['import', 'openmanus', 'config/nothing.toml'], { cwd: project });
    expect(missing.exitCode).toBe(2);
    expect(missing.stderr).toContain('nothing.toml: error: cannot read: file not found');
    const badJson = await runCli(['import', 'openmanus', 'config/config.toml', '--mcp', 'bad.json'], { cwd: project });
    expect(badJson.exitCode).toBe(2);
    expect(badJson.stderr).toMatch(/bad\.json:1:\d+: error: not valid JSON: /);
    expect(badJson.stderr).not.toContain('sk-json-secret-31');
    writeFileSync(join(project, 'token.json'), '{"mcpServers": {"a": {"env": {"K": sk-unquoted-json-secret-8f}}}}');
    const badToken = await runCli(['import', 'openmanus', 'config/config.toml', '--mcp', 'token.json'], { cwd: project });
    expect(badToken.exitCode).toBe(2);
    expect(badToken.stderr).toContain('token.json: error: not valid JSON: Unexpected token');
    expect(badToken.stderr).not.toContain('sk-unquoted-json-secret-8f');
    const noFolder = await runCli(['import', 'openmanus', 'config/config.toml', '--out', 'missing/agents.yaml'], { cwd: project });
    expect(noFolder.exitCode).toBe(2);
    expect(noFolder.stderr).toContain('missing does not exist; make it first, or choose another --out');
    const usage = await runCli(['import', 'openmanus'], { cwd: project });
    expect(usage.exitCode).toBe(2);
    expect(usage.stderr).toContain("missing required argument 'config'");
  });
});

function makeDirectory(parent: string, name: string): string {
  mkdirSync(join(parent, name), { recursive: true });
  return parent;
}

const bwrap = await probeBwrap();
if (!bwrap.usable) console.warn(`the imported config's travel-handbook run is skipped: bubblewrap is not usable here (${bwrap.reason}), and the recipe's check runs python3 in the sandbox`);

describe('the imported config runs the travel handbook recipes', () => {
  let server: ScriptedModelServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it.skipIf(!bwrap.usable).each(['recipes/travel-handbook.yaml', 'recipes/openmanus/japan-travel-plan.yaml'])('%s end to end: the profile reaches the model with the key from its variable, and the checks pass', async (recipe) => {
    const apiKey = 'sk-e2e-imported-key-5e0b';
    server = await startScriptedModelServer({
      turns: [
        { toolCalls: [{ name: 'str_replace_editor', arguments: { command: 'create', path: 'itinerary.md', file_text: '# Japan\n\nDay 1: Tokyo, Senso-ji.\n' } }] },
        { toolCalls: [{ name: 'str_replace_editor', arguments: { command: 'create', path: 'handbook.html', file_text: '<!doctype html><html><head><style>body{font-family:serif}</style></head><body><h1>Japan</h1><p>Day 1: Tokyo</p></body></html>\n' } }] },
        { toolCalls: [{ name: 'terminate', arguments: { status: 'success', message: 'A week in Japan: itinerary.md and handbook.html.' } }] },
      ],
    });
    const project = makeFixture({});
    mkdirSync(join(project, 'config'));
    writeFileSync(join(project, 'config', 'config.toml'), [
      '[llm]',
      `model = "${scriptedModelName}"`,
      `base_url = "${server.baseUrl}"`,
      `api_key = "${apiKey}"`,
      'max_tokens = 4096',
      'temperature = 0.0',
      '',
      '[llm.vision]',
      `model = "${scriptedModelName}"`,
      '',
      '[browser]',
      'headless = true',
      '',
      '[search]',
      'engine = "DuckDuckGo"',
      'fallback_engines = ["Bing"]',
      '',
    ].join('\n'));
    const imported = await runCli(['import', 'openmanus', 'config/config.toml'], { cwd: project });
    expect(imported.exitCode, imported.stderr).toBe(0);
    expect(imported.stdout).not.toContain(apiKey);
    expect(imported.stdout).toContain('Runs with it need --trust env');

    const result = await runCli(
      ['run', join(repositoryRoot, recipe), '--trust', 'env', '--json', '--quiet'],
      { cwd: project, env: { OPENMANUS_LLM_API_KEY: apiKey }, timeoutMs: 60_000 },
    );
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.json.checks.map((check: { name: string; passed: boolean }) => [check.name, check.passed])).toEqual([
      ['itinerary.md matches /[Dd]ay\\s*1/', true],
      ['handbook.html matches /<html/', true],
      ['handbook.html parses as HTML', true],
    ]);
    const chats = server.requests.filter((request) => request.path === '/v1/chat/completions') as RecordedChatRequest[];
    expect(chats).toHaveLength(3);
    expect(chats[0]!.headers.authorization).toBe(`Bearer ${apiKey}`);
    expect(chats[0]!.body.model).toBe(scriptedModelName);
    expect(JSON.stringify(chats[0]!.body.messages)).toContain('Japan');
    expect(chats[0]!.body.max_tokens ?? chats[0]!.body.max_completion_tokens).toBe(4096);
    expect(result.stdout + result.stderr).not.toContain(apiKey);
    expect(JSON.stringify(readEvents(result.json.runDirectory))).not.toContain(apiKey);
  });
});
