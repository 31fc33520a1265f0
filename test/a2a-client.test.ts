import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import express from 'express';
import { Role, TaskState, type AgentCard, type Message, type Part } from '@a2a-js/sdk';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore, type AgentExecutor, type ExecutionEventBus, type RequestContext } from '@a2a-js/sdk/server';
import { UserBuilder, agentCardHandler, jsonRpcHandler } from '@a2a-js/sdk/server/express';
import { afterEach, describe, expect, it } from 'vitest';
import { makeFixture, privateNetworkConfigHome, readEvents, runCli } from './support/run-cli.js';
import { startScriptedModelServer, type ScriptedModelServer, type ScriptedTurn } from './support/scripted-model-server.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const token = 'sk-remote-agent-token-0123456789';

const text = (value: string): Part => ({ content: { $case: 'text', value }, mediaType: 'text/plain', filename: '', metadata: undefined });

function agentMessage(context: RequestContext, parts: Part[]): Message {
  return { messageId: randomUUID(), contextId: context.contextId, taskId: context.taskId, role: Role.ROLE_AGENT, parts, metadata: undefined, extensions: [], referenceTaskIds: [] };
}

function publishStatus(context: RequestContext, bus: ExecutionEventBus, state: TaskState, said: string): void {
  bus.publish(AgentEvent.statusUpdate({ taskId: context.taskId, contextId: context.contextId, status: { state, message: agentMessage(context, [text(said)]), timestamp: new Date().toISOString() }, metadata: undefined }));
}

/**
 * A remote agent built from the SDK's own server parts: it asks which colour when told "ask me",
 * thanks for the answer, and otherwise answers with a text artifact and a file.
 */
const helperExecutor: AgentExecutor = {
  async execute(context, bus) {
    const said = context.userMessage.parts.flatMap((part) => (part.content?.$case === 'text' ? [part.content.value] : [])).join(' ');
    bus.publish(AgentEvent.task({
      id: context.taskId,
      contextId: context.contextId,
      status: { state: TaskState.TASK_STATE_WORKING, message: undefined, timestamp: new Date().toISOString() },
      artifacts: context.task?.artifacts ?? [],
      history: context.task?.history ?? [context.userMessage],
      metadata: {},
    }));
    if (context.task) return publishStatus(context, bus, TaskState.TASK_STATE_COMPLETED, `Thanks, ${said} it is`);
    if (said.includes('ask me')) return publishStatus(context, bus, TaskState.TASK_STATE_INPUT_REQUIRED, 'Which colour?');
    if (said.includes('flood')) {
      // Each event under the SDK's 4 MB limit for one event, together well over what a call keeps.
      for (let index = 0; index < 12; index += 1) {
        bus.publish(AgentEvent.artifactUpdate({
          taskId: context.taskId,
          contextId: context.contextId,
          artifact: { artifactId: `part-${index}`, name: `part-${index}`, description: '', parts: [text('x'.repeat(3_500_000))], metadata: undefined, extensions: [] },
          append: false,
          lastChunk: true,
          metadata: undefined,
        }));
      }
      return publishStatus(context, bus, TaskState.TASK_STATE_COMPLETED, 'flooded');
    }
    bus.publish(AgentEvent.artifactUpdate({
      taskId: context.taskId,
      contextId: context.contextId,
      artifact: {
        artifactId: 'summary',
        name: 'summary',
        description: '',
        parts: [text(`summary of ${said}`), { content: { $case: 'raw', value: Buffer.from('remote file body\n') }, mediaType: 'text/plain', filename: '../../escape.txt', metadata: undefined }],
        metadata: undefined,
        extensions: [],
      },
      append: false,
      lastChunk: true,
      metadata: undefined,
    }));
    publishStatus(context, bus, TaskState.TASK_STATE_COMPLETED, `Done: ${said}`);
  },
  async cancelTask(taskId, bus) {
    bus.publish(AgentEvent.statusUpdate({ taskId, contextId: '', status: { state: TaskState.TASK_STATE_CANCELED, message: undefined, timestamp: new Date().toISOString() }, metadata: undefined }));
  },
};

interface RemoteAgent {
  url: string;
  /** The Authorization header of each request, by path. */
  seen: Array<{ path: string; authorization?: string }>;
}

/** Serves the helper on loopback; its card names the endpoint at `endpointHost` (another origin when not 127.0.0.1). */
async function startRemoteAgent(endpointHost = '127.0.0.1'): Promise<RemoteAgent> {
  const seen: RemoteAgent['seen'] = [];
  const app = express();
  const server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  cleanups.push(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const card: AgentCard = {
    name: 'helper',
    description: 'A helper agent for tests.',
    supportedInterfaces: [{ url: `http://${endpointHost}:${port}/a2a/jsonrpc`, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' }],
    provider: undefined,
    version: '1.0.0',
    capabilities: { streaming: true, pushNotifications: false, extensions: [] },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [{ id: 'help', name: 'help', description: 'Helps.', tags: [], examples: [], inputModes: [], outputModes: [], securityRequirements: [] }],
    signatures: [],
  };
  app.use((request, _response, next) => {
    seen.push({ path: request.path, authorization: request.headers.authorization });
    next();
  });
  app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: async () => card }));
  app.use('/a2a/jsonrpc', jsonRpcHandler({ requestHandler: new DefaultRequestHandler(card, new InMemoryTaskStore(), helperExecutor), userBuilder: UserBuilder.noAuthentication }));
  return { url: `http://127.0.0.1:${port}`, seen };
}

async function withModel(turns: ScriptedTurn[]): Promise<ScriptedModelServer> {
  const model = await startScriptedModelServer({ turns });
  cleanups.push(() => model.close());
  return model;
}

function project(remoteUrl: string, agentTools = '[a2a_helper, terminate]', extraFiles: Record<string, string> = {}): string {
  return makeFixture({
    'agents.yaml': [
      'version: 1',
      'a2a:',
      '  helper:',
      `    url: ${remoteUrl}`,
      '    description: Asks the helper agent.',
      '    headers_env: { Authorization: HELPER_TOKEN }',
      'agents:',
      '  caller:',
      '    system_prompt: You call other agents.',
      `    tools: ${agentTools}`,
      '',
    ].join('\n'),
    'task.yaml': 'version: 1\nname: task\nprompt: Ask the helper about owls.\nagent: caller\n',
    ...extraFiles,
  });
}

function environment(model: ScriptedModelServer, extra: Record<string, string> = {}): Record<string, string> {
  return { OPENAI_BASE_URL: model.baseUrl, OPENAI_API_KEY: 'test-key', MANUS_MODEL: 'scripted-model', HELPER_TOKEN: `Bearer ${token}`, ...extra };
}

/** The result the run's tool call gave the model, as recorded. */
function toolResults(runDirectory: string): Array<Record<string, any>> {
  return readEvents(runDirectory).filter((event) => event.type === 'tool-call-end');
}

describe('a2a: tool sources', () => {
  it('calls a remote agent as a2a_<name>: its answer, artifacts and files come back, credentials go to its origin', async () => {
    const remote = await startRemoteAgent();
    const model = await withModel([
      { toolCalls: [{ name: 'a2a_helper', arguments: { message: 'owls please' } }] },
      {
        toolCalls: [{ name: 'terminate', arguments: { status: 'success', message: 'asked' } }],
        expect: (request) => {
          const result = String(request.body.messages.at(-1)?.content);
          if (!result.includes('Done: owls please') || !result.includes('summary of owls please') || !result.includes('a2a/helper/escape.txt')) throw new Error(`unexpected result: ${result}`);
        },
      },
    ]);
    const folder = project(remote.url);
    const result = await runCli(['run', 'task.yaml', '--json', '--trust', 'env'], { cwd: folder, env: { ...environment(model), XDG_CONFIG_HOME: privateNetworkConfigHome() } });
    expect(result.exitCode).toBe(0);
    expect(model.expectationFailures).toEqual([]);
    expect(result.json.files).toEqual(['a2a/helper/escape.txt']);
    expect(readFileSync(join(result.json.workspace, 'a2a/helper/escape.txt'), 'utf8')).toBe('remote file body\n');
    expect(remote.seen.length).toBeGreaterThan(1);
    expect(remote.seen.every((request) => request.authorization === `Bearer ${token}`)).toBe(true);
    // The token is a secret of the run: the record never holds it.
    expect(readFileSync(join(result.json.runDirectory, 'events.jsonl'), 'utf8')).not.toContain(token);
  });

  it("sends credentials only with --trust env when a project's agents file declares the agent", async () => {
    const remote = await startRemoteAgent();
    const model = await withModel([]);
    const refused = await runCli(['run', 'task.yaml'], { cwd: project(remote.url), env: { ...environment(model), XDG_CONFIG_HOME: privateNetworkConfigHome() } });
    expect(refused.exitCode).toBe(5);
    expect(refused.stderr).toMatch(/a2a\.helper\.headers_env.*HELPER_TOKEN/);
    expect(refused.stderr).toMatch(/--trust env/);
    expect(remote.seen).toEqual([]);
    expect(model.requests).toHaveLength(0);
  });

  it("holds a project's remote agent to the network guard: loopback is refused unless the user allows private addresses", async () => {
    const remote = await startRemoteAgent();
    const model = await withModel([
      { toolCalls: [{ name: 'a2a_helper', arguments: { message: 'owls please' } }] },
      { toolCalls: [{ name: 'terminate', arguments: { status: 'failure', message: 'could not reach it' } }] },
    ]);
    const folder = project(remote.url);
    const result = await runCli(['run', 'task.yaml', '--json', '--trust', 'env'], { cwd: folder, env: { ...environment(model), XDG_CONFIG_HOME: join(folder, 'no-config') } });
    expect(result.exitCode).toBe(1);
    const [call] = toolResults(result.json.runDirectory);
    expect(call).toMatchObject({ tool: 'a2a_helper', isError: true });
    expect(JSON.stringify(call)).toMatch(/private|loopback/i);
    expect(remote.seen).toEqual([]);
  });

  it('sends no credentials to an endpoint whose origin differs from the declared url', async () => {
    const remote = await startRemoteAgent('localhost');
    const model = await withModel([
      { toolCalls: [{ name: 'a2a_helper', arguments: { message: 'owls please' } }] },
      { toolCalls: [{ name: 'terminate', arguments: { status: 'success', message: 'asked' } }] },
    ]);
    const result = await runCli(['run', 'task.yaml', '--json', '--trust', 'env'], { cwd: project(remote.url), env: { ...environment(model), XDG_CONFIG_HOME: privateNetworkConfigHome() } });
    expect(result.exitCode).toBe(0);
    expect(remote.seen.find((request) => request.path === '/.well-known/agent-card.json')?.authorization).toBe(`Bearer ${token}`);
    const calls = remote.seen.filter((request) => request.path !== '/.well-known/agent-card.json');
    expect(calls.length).toBeGreaterThan(0);
    expect(calls.every((request) => request.authorization === undefined)).toBe(true);
  });

  it('stops reading an agent that sends more than a call keeps, and says so', async () => {
    const remote = await startRemoteAgent();
    const model = await withModel([
      { toolCalls: [{ name: 'a2a_helper', arguments: { message: 'flood me' } }] },
      { toolCalls: [{ name: 'terminate', arguments: { status: 'failure', message: 'too much' } }] },
    ]);
    const result = await runCli(['run', 'task.yaml', '--json', '--trust', 'env'], { cwd: project(remote.url), env: { ...environment(model), XDG_CONFIG_HOME: privateNetworkConfigHome() } });
    expect(result.exitCode).toBe(1);
    const [call] = toolResults(result.json.runDirectory);
    expect(call).toMatchObject({ tool: 'a2a_helper', isError: true });
    expect(JSON.stringify(call)).toContain('sent more than 32 MB for one call');
  });

  it('passes on an input-required task, and the next call with its task_id answers it', async () => {
    const remote = await startRemoteAgent();
    // The model answers the question by calling again with the task id the result gave.
    const model = await startScriptedModelServer({
      turns: [
        { toolCalls: [{ name: 'a2a_helper', arguments: { message: 'ask me something' } }] },
        {
          toolCalls: [{ name: 'terminate', arguments: { status: 'success', message: 'done' } }],
          expect: (request) => {
            const result = String(request.body.messages.at(-1)?.content);
            if (!result.includes('Thanks, blue it is')) throw new Error(`unexpected result: ${result}`);
          },
        },
      ],
      sideTurn: (request) => {
        const result = String(request.body.messages.at(-1)?.content);
        const taskId = /needs input[\s\S]*Which colour\?[\s\S]*task_id "([^"]+)"/.exec(result)?.[1];
        return taskId ? { toolCalls: [{ name: 'a2a_helper', arguments: { message: 'blue', task_id: taskId } }] } : undefined;
      },
    });
    cleanups.push(() => model.close());
    const result = await runCli(['run', 'task.yaml', '--json', '--trust', 'env'], { cwd: project(remote.url), env: { ...environment(model), XDG_CONFIG_HOME: privateNetworkConfigHome() } });
    expect(model.expectationFailures).toEqual([]);
    expect(result.exitCode).toBe(0);
    expect(model.requests).toHaveLength(3);
  });
});

describe('a2a: tool sources are checked before the run', () => {
  it('reports a name a plugin also gives, and an undeclared a2a_ name, with file:line:column', async () => {
    const remote = 'http://127.0.0.1:9';
    const folder = project(remote, '[a2a_helper, a2a_helpr, terminate]', {
      'plugins/clash.ts': "import { defineTool } from 'manus-runtime';\nexport default defineTool({ name: 'a2a_helper', description: 'Clashes.', parameters: { type: 'object' }, execute: () => 'plugin' });\n",
    });
    const result = await runCli(['validate', 'task.yaml'], { cwd: folder });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toMatch(/agents\.yaml:\d+:\d+: error: agent 'caller' lists the tool 'a2a_helper', which more than one source would give: the plugin tool in \S*clash\.ts and the A2A agent 'helper' \(declared in \S*agents\.yaml:3:3\)/);
    expect(result.stderr).toMatch(/agents\.yaml:\d+:\d+: error: agent 'caller' lists the tool 'a2a_helpr', but no A2A agent named 'helpr' is declared.*did you mean/);
  });

  it('lists the remote agent in manus inspect and its credentials in manus validate', async () => {
    const folder = project('http://127.0.0.1:9');
    const inspected = await runCli(['inspect', 'task.yaml', '--json'], { cwd: folder });
    expect(inspected.exitCode).toBe(0);
    expect(inspected.json.agents[0].tools).toContainEqual({ name: 'a2a_helper', source: 'a2a agent', server: 'helper' });
    expect(inspected.json.network.a2aUrls).toEqual(['http://127.0.0.1:9']);
    const validated = await runCli(['validate', 'task.yaml'], { cwd: folder });
    expect(validated.exitCode).toBe(0);
    expect(validated.stderr).toMatch(/a2a\.helper\.headers_env.*http:\/\/127\.0\.0\.1:9 HELPER_TOKEN/);
    expect(existsSync(join(folder, '.manus'))).toBe(false);
  });

  it('takes a2a: from a recipe too, for its own agent', async () => {
    const folder = makeFixture({
      'own.yaml': 'version: 1\nname: own\nprompt: hi\na2a:\n  scout:\n    url: http://127.0.0.1:9/scout\nagent:\n  tools: [a2a_scout, terminate]\n',
    });
    const inspected = await runCli(['inspect', 'own.yaml', '--json'], { cwd: folder });
    expect(inspected.exitCode).toBe(0);
    expect(inspected.json.agents[0].tools).toContainEqual({ name: 'a2a_scout', source: 'a2a agent', server: 'scout' });
    expect((await runCli(['validate', 'own.yaml'], { cwd: folder })).exitCode).toBe(0);
  });
});
