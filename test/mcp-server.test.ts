import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError, type CallToolResult, type Progress } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { processIsGone } from './support/processes.js';
import { cliEntry, makeFixture, readEvents, runCli } from './support/run-cli.js';
import type { ScriptedModelServer, ScriptedTurn } from './support/scripted-model-server.js';
import { scriptedModelFor, servedEnvironment, until, useCleanups } from './support/served-process.js';

const servedTools = `import { defineTool } from 'manus-runtime';
import { spawn } from 'node:child_process';

export default [
  defineTool({
    name: 'echo',
    description: 'Returns the text it is given.',
    parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false },
    execute: ({ text }) => 'echo: ' + text + ' in ' + 'workspace',
  }),
  defineTool({
    name: 'wait',
    description: 'Waits.',
    parameters: { type: 'object', properties: { milliseconds: { type: 'integer' } }, required: ['milliseconds'] },
    execute: ({ milliseconds }, context) => new Promise((resolve) => {
      const timer = setTimeout(() => resolve('waited'), milliseconds);
      context.signal.addEventListener('abort', () => clearTimeout(timer));
    }),
  }),
  defineTool({
    name: 'fail',
    description: 'Always fails.',
    parameters: { type: 'object', properties: {} },
    execute() {
      throw new Error('the disk is on fire');
    },
  }),
  defineTool({
    name: 'snapshot',
    description: 'Returns a tiny image.',
    parameters: { type: 'object', properties: {} },
    execute: () => ({ content: 'took a snapshot', images: [{ data: 'iVBORw0KGgo=', mimeType: 'image/png' }] }),
  }),
  defineTool({
    name: 'read_env',
    description: 'Returns an environment variable.',
    parameters: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
    execute: ({ name }) => 'value=' + (process.env[name] ?? ''),
  }),
  defineTool({
    name: 'noisy',
    description: 'Prints to stdout, as careless code does, then answers.',
    parameters: { type: 'object', properties: {} },
    execute() {
      console.log('noise from console.log');
      process.stdout.write('noise from process.stdout\\n');
      return 'quiet answer';
    },
  }),
  defineTool({
    name: 'keep_process',
    description: 'Starts a long-lived process kept as a session resource; returns its pid and the workspace.',
    parameters: { type: 'object', properties: {} },
    async execute(_input, context) {
      const child = await context.resources.get('sleeper', () => spawn('sleep', ['1000'], { stdio: 'ignore' }), (process) => {
        process.kill('SIGKILL');
      });
      return JSON.stringify({ pid: child.pid, workspace: context.workspace, runDirectory: context.runDirectory });
    },
  }),
  defineTool({
    name: 'ask',
    description: 'Asks a person.',
    parameters: { type: 'object', properties: {} },
    execute: (_input, context) => context.human.ask('Which colour?'),
  }),
];
`;

const factsRecipe = `version: 1
name: facts
description: Facts about a topic, as JSON.
parameters:
  topic:
    type: string
    description: What to describe.
  depth:
    type: enum
    values: [short, long]
    default: short
  count:
    type: number
    default: 2
  cite:
    type: boolean
    default: false
prompt: "Describe {{topic}} ({{depth}}, {{count}} facts, cite={{cite}})."
plugins: [./tools]
agent:
  system_prompt: You are a test agent.
  tools: [echo, wait, terminate]
response:
  type: object
  required: [title]
  additionalProperties: false
  properties:
    title: { type: string }
`;

const agentsYaml = 'version: 1\nllm:\n  default:\n    retry: { base_delay_ms: 5, max_delay_ms: 50 }\n';

function writeServeFixture(): string {
  return makeFixture({ 'tools/served-tools.ts': servedTools, 'facts.yaml': factsRecipe, 'agents.yaml': agentsYaml });
}

const secret = 'sk-served-secret-0123456789';

function serverEnvironment(model?: ScriptedModelServer, extra: Record<string, string> = {}): Record<string, string> {
  return servedEnvironment(secret, model, extra);
}

const cleanups = useCleanups();

async function connectStdio(fixture: string, args: string[], model?: ScriptedModelServer): Promise<{ client: Client; transport: StdioClientTransport; stderr: () => string }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [cliEntry, 'mcp', 'serve', ...args],
    cwd: fixture,
    env: serverEnvironment(model),
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk) => (stderr += chunk));
  const client = new Client({ name: 'test-client', version: '1.0.0' });
  await client.connect(transport);
  cleanups.push(() => client.close());
  return { client, transport, stderr: () => stderr };
}

function textOf(result: CallToolResult): string {
  return result.content.map((block) => (block.type === 'text' ? block.text : `[${block.type}]`)).join('\n');
}

function runFolders(fixture: string): string[] {
  const folder = join(fixture, '.manus', 'runs');
  // A folder is made a moment before its events file.
  return existsSync(folder) ? readdirSync(folder).map((name) => join(folder, name)).filter((run) => existsSync(join(run, 'events.jsonl'))) : [];
}

/** The events written so far, for polling: a line being written is not read yet. */
function eventsSoFar(runFolder: string): Array<Record<string, any>> {
  const text = readFileSync(join(runFolder, 'events.jsonl'), 'utf8');
  return text.split('\n').slice(0, -1).map((line) => JSON.parse(line));
}

const structuredFinish = (title: string): ScriptedTurn => ({ toolCalls: [{ name: 'create_chat_completion', arguments: { response: { title } } }] });

function withModel(turns: ScriptedTurn[]): Promise<ScriptedModelServer> {
  return scriptedModelFor(cleanups, turns);
}

describe('manus mcp serve over stdio', () => {
  it('lists the chosen tools and each recipe as a tool whose schema is its parameters', async () => {
    const fixture = writeServeFixture();
    const { client } = await connectStdio(fixture, ['--plugins', 'tools', '--tools', 'echo,fail', '--tools', 'snapshot', '--recipe', 'facts.yaml']);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(['echo', 'fail', 'snapshot', 'facts']);
    expect(tools[0].inputSchema).toMatchObject({ type: 'object', properties: { text: { type: 'string' } }, required: ['text'] });
    const facts = tools[3];
    expect(facts.description).toBe('Facts about a topic, as JSON.');
    expect(facts.inputSchema).toEqual({
      type: 'object',
      properties: {
        topic: { type: 'string', description: 'What to describe.' },
        depth: { type: 'string', enum: ['short', 'long'], default: 'short' },
        count: { type: 'number', default: 2 },
        cite: { type: 'boolean', default: false },
      },
      required: ['topic'],
      additionalProperties: false,
    });
    expect(facts.outputSchema).toMatchObject({ type: 'object', required: ['title'] });
  });

  it('calls tools: text, images, failures and bad arguments as error results, unknown tools as -32602', async () => {
    const fixture = writeServeFixture();
    const { client } = await connectStdio(fixture, ['--plugins', 'tools', '--tools', 'echo,fail,snapshot,read_env']);

    const echoed = (await client.callTool({ name: 'echo', arguments: { text: 'hello' } })) as CallToolResult;
    expect(echoed.isError).toBeFalsy();
    expect(textOf(echoed)).toBe('echo: hello in workspace');

    const image = (await client.callTool({ name: 'snapshot', arguments: {} })) as CallToolResult;
    expect(image.content).toEqual([{ type: 'text', text: 'took a snapshot' }, { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' }]);

    const failed = (await client.callTool({ name: 'fail', arguments: {} })) as CallToolResult;
    expect(failed.isError).toBe(true);
    expect(textOf(failed)).toBe('Error: the disk is on fire');

    const bad = (await client.callTool({ name: 'echo', arguments: { text: 5, extra: true } })) as CallToolResult;
    expect(bad.isError).toBe(true);
    expect(textOf(bad)).toMatch(/Invalid arguments for 'echo'/);
    expect(textOf(bad)).toMatch(/unknown argument 'extra'|'text' must be string/);

    const missing = (await client.callTool({ name: 'echo', arguments: {} })) as CallToolResult;
    expect(textOf(missing)).toMatch(/missing required argument 'text'/);

    const unknown = await client.callTool({ name: 'no_such_tool', arguments: {} }).then(() => undefined, (error: unknown) => error);
    expect(unknown).toBeInstanceOf(McpError);
    expect((unknown as McpError).code).toBe(ErrorCode.InvalidParams);
    expect((unknown as McpError).message).toMatch(/no_such_tool/);

    // The run's redaction applies: a secret of the environment never reaches the client.
    const leaked = (await client.callTool({ name: 'read_env', arguments: { name: 'SERVICE_TOKEN' } })) as CallToolResult;
    expect(textOf(leaked)).toBe('value=[redacted]');
  });

  it('serves a tool that calls another through context.callTool, loading the called one though it is not served', async () => {
    const fixture = writeServeFixture();
    writeFileSync(join(fixture, 'tools', 'relay.mjs'), [
      'export default {',
      "  name: 'relay', description: 'Relays text through echo.', calls: ['echo'],",
      "  parameters: { type: 'object', properties: { text: {} }, required: ['text'] },",
      "  async execute({ text }, context) { const result = await context.callTool('echo', { text }); return `${result.isError ? 'failed' : 'relayed'}: ${result.content}`; },",
      '};',
      '',
    ].join('\n'));
    const { client } = await connectStdio(fixture, ['--plugins', 'tools', '--tools', 'relay']);
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['relay']);
    expect(textOf((await client.callTool({ name: 'relay', arguments: { text: 'hello' } })) as CallToolResult)).toBe('relayed: echo: hello in workspace');
    expect(textOf((await client.callTool({ name: 'relay', arguments: { text: 5 } })) as CallToolResult)).toMatch(/^failed: Invalid arguments for 'echo'/);
  });

  it('runs each call with a session of its own: workspace, run folder, and a human channel that declines', async () => {
    const fixture = writeServeFixture();
    const { client } = await connectStdio(fixture, ['--plugins', 'tools', '--tools', 'keep_process,ask']);
    const kept = JSON.parse(textOf((await client.callTool({ name: 'keep_process', arguments: {} })) as CallToolResult));
    expect(kept.workspace.startsWith(join(fixture, 'workspace'))).toBe(true);
    expect(kept.runDirectory.startsWith(join(fixture, '.manus', 'runs'))).toBe(true);
    const asked = (await client.callTool({ name: 'ask', arguments: {} })) as CallToolResult;
    expect(asked.isError).toBe(true);
    expect(textOf(asked)).toMatch(/Which colour/);

    await client.close();
    // The session's resources were disposed when the client went away.
    await until(() => processIsGone(kept.pid));
    await until(() => eventsSoFar(kept.runDirectory).some((event) => event.type === 'run-end'));
    const events = readEvents(kept.runDirectory);
    expect(events[0]).toMatchObject({ type: 'run-start', recipe: { name: 'mcp-serve' } });
    expect(events.filter((event) => event.type === 'tool-call-end').map((event) => event.tool)).toEqual(['keep_process', 'ask']);
    expect(events.at(-1)).toMatchObject({ type: 'run-end', status: 'closed', calls: 2 });
  });

  it('runs code-running tools in the sandbox, as a run does', async () => {
    const fixture = writeServeFixture();
    const { client } = await connectStdio(fixture, ['--tools', 'bash', '--sandbox', 'bwrap']);
    const result = (await client.callTool({ name: 'bash', arguments: { command: 'echo $((6 * 7)); touch made-here; ls' } })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toMatch(/42/);
    expect(textOf(result)).toMatch(/made-here/);
    const [sessionFolder] = runFolders(fixture);
    await client.close();
    await until(() => eventsSoFar(sessionFolder).some((event) => event.type === 'run-end'));
    expect(readEvents(sessionFolder).find((event) => event.type === 'sandbox-selected')).toMatchObject({ kind: 'bwrap' });
    expect(readdirSync(join(fixture, 'workspace', sessionFolder.split('/').at(-1)!))).toContain('made-here');
  });

  it('keeps stdout for protocol messages: what tools print goes to stderr', async () => {
    const fixture = writeServeFixture();
    const child = spawn(process.execPath, [cliEntry, 'mcp', 'serve', '--plugins', 'tools', '--tools', 'noisy'], { cwd: fixture, env: serverEnvironment() });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const send = (message: unknown) => child.stdin.write(`${JSON.stringify(message)}\n`);
    send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
    await until(() => stdout.includes('"id":1'));
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'noisy', arguments: {} } });
    await until(() => stdout.includes('"id":2'));
    child.stdin.end();
    const code = await new Promise((resolve) => child.on('close', resolve));
    expect(code).toBe(0);
    const lines = stdout.trim().split('\n');
    for (const line of lines) expect(JSON.parse(line)).toMatchObject({ jsonrpc: '2.0' });
    expect(lines.map((line) => JSON.parse(line).result?.content?.[0]?.text)).toContain('quiet answer');
    expect(stderr).toContain('noise from console.log');
    expect(stderr).toContain('noise from process.stdout');
  });

  it('disposes the session when stopped with SIGTERM: the processes its tools started are gone', async () => {
    const fixture = writeServeFixture();
    const { client, transport } = await connectStdio(fixture, ['--plugins', 'tools', '--tools', 'keep_process']);
    const kept = JSON.parse(textOf((await client.callTool({ name: 'keep_process', arguments: {} })) as CallToolResult));
    expect(processIsGone(kept.pid)).toBe(false);
    // Read once: the transport forgets the pid when its process exits.
    const serverPid = transport.pid!;
    process.kill(serverPid, 'SIGTERM');
    await until(() => processIsGone(kept.pid));
    await until(() => processIsGone(serverPid));
  });

  it('runs a recipe as a tool: the run is recorded, progress comes per step, the answer is structured', async () => {
    const fixture = writeServeFixture();
    const model = await withModel([
      {
        toolCalls: [{ name: 'echo', arguments: { text: 'one' } }],
        expect: (request) => {
          const user = request.body.messages.find((message) => message.role === 'user');
          if (!String(user?.content).includes('Describe owls (long, 3 facts, cite=true).')) throw new Error(`unexpected task: ${JSON.stringify(user)}`);
        },
      },
      structuredFinish('Owls'),
    ]);
    const { client } = await connectStdio(fixture, ['--recipe', 'facts.yaml'], model);
    const progress: Progress[] = [];
    const result = (await client.callTool(
      { name: 'facts', arguments: { topic: 'owls', depth: 'long', count: 3, cite: true } },
      undefined,
      { onprogress: (update) => progress.push(update) },
    )) as CallToolResult;
    expect(model.expectationFailures).toEqual([]);
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({ title: 'Owls' });
    const run = result._meta?.['manus-runtime/run'] as { id: string; status: string; steps: number };
    expect(run).toMatchObject({ status: 'success', steps: 2 });
    expect(textOf(result)).toContain(`run ${run.id}: 2 steps`);
    expect(progress.map((update) => update.progress)).toEqual([1, 2]);
    expect(progress[0].total).toBeGreaterThanOrEqual(2);

    const runFolder = join(fixture, '.manus', 'runs', run.id);
    const events = readEvents(runFolder);
    expect(events[0]).toMatchObject({ type: 'run-start', recipe: { name: 'facts' } });
    expect(events.at(-1)).toMatchObject({ type: 'run-end', status: 'success' });
  });

  it('answers a recipe with bad arguments with an error result, and a run that fails with isError', async () => {
    const fixture = writeServeFixture();
    const model = await withModel([{ toolCalls: [{ name: 'terminate', arguments: { status: 'failure', message: `cannot: ${secret}` } }] }]);
    const { client } = await connectStdio(fixture, ['--recipe', 'facts.yaml'], model);
    const bad = (await client.callTool({ name: 'facts', arguments: { topic: 'owls', depth: 'medium' } })) as CallToolResult;
    expect(bad.isError).toBe(true);
    expect(textOf(bad)).toMatch(/'depth' must be one of: short, long/);
    const failed = (await client.callTool({ name: 'facts', arguments: { topic: 'owls' } })) as CallToolResult;
    expect(failed.isError).toBe(true);
    expect(textOf(failed)).toMatch(/^run \S+ ended: failure: cannot: \[redacted\]/);
  });

  it('stops a recipe run when the client cancels: the run is recorded as interrupted and resumes', async () => {
    const fixture = writeServeFixture();
    const model = await withModel([{ toolCalls: [{ name: 'wait', arguments: { milliseconds: 60_000 } }] }]);
    const { client } = await connectStdio(fixture, ['--recipe', 'facts.yaml'], model);
    const controller = new AbortController();
    const call = client.callTool({ name: 'facts', arguments: { topic: 'owls' } }, undefined, { signal: controller.signal }).then(() => 'answered', () => 'rejected');
    await until(() => runFolders(fixture).some((folder) => eventsSoFar(folder).some((event) => event.type === 'tool-call-start')));
    controller.abort('changed my mind');
    expect(await call).toBe('rejected');
    const [runFolder] = runFolders(fixture);
    await until(() => eventsSoFar(runFolder).some((event) => event.type === 'run-end'));
    expect(readEvents(runFolder).at(-1)).toMatchObject({ type: 'run-end', status: 'interrupted' });

    model.setTurns([structuredFinish('Owls, resumed')]);
    const runId = runFolder.split('/').at(-1)!;
    const resumed = await runCli(['resume', runId, '--json'], { cwd: fixture, env: { OPENAI_BASE_URL: model.baseUrl, OPENAI_API_KEY: 'test-key', MANUS_MODEL: 'scripted-model' } });
    expect(resumed.exitCode).toBe(0);
    expect(resumed.json).toMatchObject({ status: 'success', structured: { title: 'Owls, resumed' } });
  });

  it('stops a running recipe when the server is stopped: the run ends as interrupted before the process does', async () => {
    const fixture = writeServeFixture();
    const model = await withModel([{ toolCalls: [{ name: 'wait', arguments: { milliseconds: 60_000 } }] }]);
    const { client, transport } = await connectStdio(fixture, ['--recipe', 'facts.yaml'], model);
    void client.callTool({ name: 'facts', arguments: { topic: 'owls' } }).catch(() => undefined);
    await until(() => runFolders(fixture).some((folder) => eventsSoFar(folder).some((event) => event.type === 'tool-call-start')));
    const pid = transport.pid!;
    process.kill(pid, 'SIGTERM');
    await until(() => processIsGone(pid));
    const [runFolder] = runFolders(fixture);
    expect(readEvents(runFolder).at(-1)).toMatchObject({ type: 'run-end', status: 'interrupted' });
  });

  it('serves tools over a folder of the user\'s own with --workspace, keeping its protected paths', async () => {
    const fixture = makeFixture({ 'tools/served-tools.ts': servedTools, 'facts.yaml': factsRecipe, 'agents.yaml': agentsYaml, 'notes.txt': 'first line\n', '.git/hooks/.keep': '' });
    const { client } = await connectStdio(fixture, ['--workspace', '.', '--sandbox', 'bwrap', '--plugins', 'tools', '--tools', 'str_replace_editor,bash,keep_process', '--recipe', 'facts.yaml']);
    const kept = JSON.parse(textOf((await client.callTool({ name: 'keep_process', arguments: {} })) as CallToolResult));
    expect(kept.workspace).toBe(fixture);

    const viewed = (await client.callTool({ name: 'str_replace_editor', arguments: { command: 'view', path: 'notes.txt' } })) as CallToolResult;
    expect(viewed.isError).toBeFalsy();
    expect(textOf(viewed)).toMatch(/first line/);
    const created = (await client.callTool({ name: 'str_replace_editor', arguments: { command: 'create', path: 'made.txt', file_text: 'made by a client' } })) as CallToolResult;
    expect(created.isError).toBeFalsy();
    expect(readFileSync(join(fixture, 'made.txt'), 'utf8')).toBe('made by a client');

    // What later runs on the host stays read-only, as in a run; so do the plugin folders and the
    // recipes being served, which a served tool could otherwise rewrite for the server's next start.
    for (const path of ['.git/hooks/post-checkout', '.mcp.json', 'agents.yaml', 'tools/more-tools.ts', 'facts.yaml', '.manus/x']) {
      const refused = (await client.callTool({ name: 'str_replace_editor', arguments: { command: 'create', path, file_text: 'x' } })) as CallToolResult;
      expect(refused.isError, path).toBe(true);
      expect(textOf(refused), path).toMatch(/protected|not allowed/);
    }
    const command = (await client.callTool({ name: 'bash', arguments: { command: 'touch by-bash; echo x > tools/more-tools.ts; echo x > facts.yaml; ls' } })) as CallToolResult;
    expect(textOf(command)).toMatch(/by-bash/);
    expect(existsSync(join(fixture, 'by-bash'))).toBe(true);
    expect(existsSync(join(fixture, 'tools', 'more-tools.ts'))).toBe(false);
    expect(readFileSync(join(fixture, 'facts.yaml'), 'utf8')).toBe(factsRecipe);
    await client.close();
    // No per-connection folder is made beside it.
    expect(existsSync(join(fixture, 'workspace'))).toBe(false);
  });

  it('protects what a later run in a --workspace elsewhere would load', async () => {
    const fixture = makeFixture({ 'agents.yaml': agentsYaml, 'project/notes.txt': 'first line\n' });
    const { client } = await connectStdio(fixture, ['--workspace', 'project', '--sandbox', 'bwrap', '--tools', 'bash']);
    const command = 'touch made.txt; echo x > agents.yaml; mkdir -p plugins && echo x > plugins/evil.ts; ls';
    const result = (await client.callTool({ name: 'bash', arguments: { command } })) as CallToolResult;
    expect(textOf(result)).toMatch(/protected/);
    expect(existsSync(join(fixture, 'project', 'made.txt'))).toBe(true);
    expect(existsSync(join(fixture, 'project', 'agents.yaml'))).toBe(false);
    expect(existsSync(join(fixture, 'project', 'plugins', 'evil.ts'))).toBe(false);
  });

  it('refuses a --workspace that is not a folder', async () => {
    const fixture = writeServeFixture();
    const result = await runCli(['mcp', 'serve', '--workspace', 'no-such-folder', '--tools', 'str_replace_editor'], { cwd: fixture });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toMatch(/--workspace no-such-folder: .*not a folder/);
  });

  it('refuses to start with a tool no plugin defines, naming what there is', async () => {
    const fixture = writeServeFixture();
    const result = await runCli(['mcp', 'serve', '--plugins', 'tools', '--tools', 'ecko'], { cwd: fixture });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toMatch(/no plugin defines a tool 'ecko'.*did you mean 'echo'/);
  });
});

interface HttpServer {
  url: string;
  child: ChildProcessWithoutNullStreams;
}

async function startHttp(fixture: string, args: string[], environment: Record<string, string> = {}, model?: ScriptedModelServer): Promise<HttpServer> {
  const child = spawn(process.execPath, [cliEntry, 'mcp', 'serve', '--transport', 'http', '--port', '0', ...args], { cwd: fixture, env: serverEnvironment(model, environment) });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  cleanups.push(async () => {
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.on('close', resolve));
    }
  });
  await until(() => /serving MCP at (\S+)/.test(stderr) || child.exitCode !== null);
  const url = /serving MCP at (\S+)/.exec(stderr)?.[1];
  if (!url) throw new Error(`the server did not start: ${stderr}`);
  return { url, child };
}

async function connectHttp(url: string, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'test-client', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  cleanups.push(() => client.close());
  return client;
}

/** A raw initialize request with the headers given, as a browser or another host would send it. */
function rawInitialize(url: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  const target = new URL(url);
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
  return new Promise((resolve, reject) => {
    const request = httpRequest({
      host: target.hostname,
      port: target.port,
      path: target.pathname,
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers },
    }, (response) => {
      let text = '';
      response.on('data', (chunk) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: text }));
    });
    request.on('error', reject);
    request.end(body);
  });
}

describe('manus mcp serve over Streamable HTTP', () => {
  it('serves tools and recipes at /mcp on 127.0.0.1, with progress', async () => {
    const fixture = writeServeFixture();
    const model = await withModel([{ toolCalls: [{ name: 'echo', arguments: { text: 'one' } }] }, structuredFinish('Owls')]);
    const server = await startHttp(fixture, ['--plugins', 'tools', '--tools', 'echo', '--recipe', 'facts.yaml'], {}, model);
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    const client = await connectHttp(server.url);
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['echo', 'facts']);
    expect(textOf((await client.callTool({ name: 'echo', arguments: { text: 'over http' } })) as CallToolResult)).toBe('echo: over http in workspace');
    const progress: Progress[] = [];
    const result = (await client.callTool({ name: 'facts', arguments: { topic: 'owls' } }, undefined, { onprogress: (update) => progress.push(update) })) as CallToolResult;
    expect(result.structuredContent).toEqual({ title: 'Owls' });
    expect(progress.map((update) => update.progress)).toEqual([1, 2]);
    const unknown = await client.callTool({ name: 'nope', arguments: {} }).then(() => undefined, (error: unknown) => error);
    expect((unknown as McpError).code).toBe(ErrorCode.InvalidParams);
  });

  it('refuses requests that name another host or come from another origin (DNS rebinding)', async () => {
    const fixture = writeServeFixture();
    const server = await startHttp(fixture, ['--plugins', 'tools', '--tools', 'echo']);
    const port = new URL(server.url).port;
    const rebound = await rawInitialize(server.url, { Host: `attacker.example:${port}` });
    expect(rebound.status).toBe(403);
    expect(rebound.body).toMatch(/Invalid Host/);
    const foreignPage = await rawInitialize(server.url, { Host: `127.0.0.1:${port}`, Origin: 'http://attacker.example' });
    expect(foreignPage.status).toBe(403);
    expect(foreignPage.body).toMatch(/Invalid Origin/);
    const local = await rawInitialize(server.url, { Host: `localhost:${port}` });
    expect(local.status).toBe(200);
  });

  it('needs a bearer token bound beyond loopback, and refuses to start without one', async () => {
    const fixture = writeServeFixture();
    const refused = await runCli(['mcp', 'serve', '--transport', 'http', '--host', '0.0.0.0', '--port', '0', '--plugins', 'tools', '--tools', 'echo'], { cwd: fixture });
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toMatch(/needs a bearer token: pass --token-env NAME/);
    const unset = await runCli(['mcp', 'serve', '--transport', 'http', '--token-env', 'MCP_TOKEN', '--plugins', 'tools', '--tools', 'echo'], { cwd: fixture });
    expect(unset.exitCode).toBe(2);
    expect(unset.stderr).toMatch(/MCP_TOKEN: the environment variable is not set/);

    const token = 'a-long-random-bearer-token-42';
    const server = await startHttp(fixture, ['--host', '0.0.0.0', '--token-env', 'MCP_TOKEN', '--plugins', 'tools', '--tools', 'echo'], { MCP_TOKEN: token });
    const url = server.url.replace('0.0.0.0', '127.0.0.1');
    const anonymous = await rawInitialize(url, { Host: new URL(url).host });
    expect(anonymous.status).toBe(401);
    const wrong = await rawInitialize(url, { Host: new URL(url).host, Authorization: 'Bearer wrong' });
    expect(wrong.status).toBe(401);
    const client = await connectHttp(url, { Authorization: `Bearer ${token}` });
    expect(textOf((await client.callTool({ name: 'echo', arguments: { text: 'authorised' } })) as CallToolResult)).toBe('echo: authorised in workspace');
  });
});
