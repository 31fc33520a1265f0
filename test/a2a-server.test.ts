import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { Role, TaskState, type Message, type Part, type StreamResponse } from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory, type Client } from '@a2a-js/sdk/client';
import { describe, expect, it } from 'vitest';
import { cliEntry, makeFixture, readEvents, runCli } from './support/run-cli.js';
import type { ScriptedModelServer, ScriptedTurn } from './support/scripted-model-server.js';
import { scriptedModelFor, servedEnvironment, until, useCleanups } from './support/served-process.js';

const tools = `import { defineTool } from 'manus-runtime';

export default [
  defineTool({
    name: 'write_note',
    description: 'Writes a note into the workspace.',
    parameters: { type: 'object', properties: { name: { type: 'string' }, text: { type: 'string' } }, required: ['name', 'text'] },
    execute: async ({ name, text }, context) => {
      await context.files.writeFile(name, text);
      return 'wrote ' + name;
    },
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
];
`;

const notesRecipe = `version: 1
name: notes
description: Writes notes about a topic.
parameters:
  topic:
    type: string
    description: What to write about.
  style:
    type: enum
    values: [short, long]
    default: short
prompt: "Write {{style}} notes about {{topic}}."
plugins: [./tools]
agent:
  system_prompt: You are a test agent.
  tools: [write_note, wait, ask_human, terminate]
  permissions: { ask: [write_note] }
`;

const secret = 'sk-a2a-served-secret-0123456789';

function writeFixture(): string {
  return makeFixture({
    'tools/notes-tools.ts': tools,
    'notes.yaml': notesRecipe,
    'agents.yaml': 'version: 1\nllm:\n  default:\n    retry: { base_delay_ms: 5, max_delay_ms: 50 }\n',
  });
}

function serverEnvironment(model?: ScriptedModelServer, extra: Record<string, string> = {}): Record<string, string> {
  return servedEnvironment(secret, model, extra);
}

const cleanups = useCleanups();

function withModel(turns: ScriptedTurn[]): Promise<ScriptedModelServer> {
  return scriptedModelFor(cleanups, turns);
}

interface Served {
  /** The server's address, as the card is found from it. */
  origin: string;
  cardUrl: string;
}

async function serve(fixture: string, args: string[], model?: ScriptedModelServer, environment: Record<string, string> = {}): Promise<Served> {
  const child = spawn(process.execPath, [cliEntry, 'a2a', 'serve', '--port', '0', ...args], { cwd: fixture, env: serverEnvironment(model, environment) });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  cleanups.push(async () => {
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.on('close', resolve));
    }
  });
  const started = /serving A2A at \S+ \(agent card: (\S+)\)/;
  await until(() => started.test(stderr) || child.exitCode !== null);
  const cardUrl = started.exec(stderr)?.[1];
  if (!cardUrl) throw new Error(`the server did not start: ${stderr}`);
  return { origin: new URL(cardUrl).origin, cardUrl };
}

/** The SDK's own client, sending `headers` with every request. */
async function sdkClient(origin: string, headers: Record<string, string> = {}): Promise<Client> {
  const fetchImpl: typeof fetch = (input, init) => {
    const merged = new Headers(init?.headers);
    for (const [name, value] of Object.entries(headers)) merged.set(name, value);
    return fetch(input, { ...init, headers: merged });
  };
  const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory({ fetchImpl })],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
  }));
  return factory.createFromUrl(origin);
}

function userMessage(parts: Part[], task?: { taskId: string; contextId: string }): Message {
  return { messageId: randomUUID(), contextId: task?.contextId ?? '', taskId: task?.taskId ?? '', role: Role.ROLE_USER, parts, metadata: undefined, extensions: [], referenceTaskIds: [] };
}

const text = (value: string): Part => ({ content: { $case: 'text', value }, mediaType: 'text/plain', filename: '', metadata: undefined });
const data = (value: unknown): Part => ({ content: { $case: 'data', value }, mediaType: 'application/json', filename: '', metadata: undefined });

async function stream(client: Client, message: Message): Promise<StreamResponse[]> {
  const events: StreamResponse[] = [];
  for await (const event of client.sendMessageStream({ tenant: '', message, configuration: undefined, metadata: undefined })) events.push(event);
  return events;
}

function states(events: StreamResponse[]): TaskState[] {
  return events.flatMap((event) => (event.payload?.$case === 'statusUpdate' && event.payload.value.status ? [event.payload.value.status.state] : []));
}

function statusTexts(events: StreamResponse[]): string[] {
  return events.flatMap((event) => (event.payload?.$case === 'statusUpdate' ? event.payload.value.status?.message?.parts.flatMap((part) => (part.content?.$case === 'text' ? [part.content.value] : [])) ?? [] : []));
}

function taskOf(events: StreamResponse[]): { taskId: string; contextId: string } {
  const first = events[0]?.payload;
  if (first?.$case !== 'task') throw new Error(`the stream did not start with the task: ${JSON.stringify(first)}`);
  return { taskId: first.value.id, contextId: first.value.contextId };
}

function runFolders(fixture: string): string[] {
  const folder = join(fixture, '.manus', 'runs');
  return existsSync(folder) ? readdirSync(folder).map((name) => join(folder, name)).filter((run) => existsSync(join(run, 'events.jsonl'))) : [];
}

function eventsSoFar(runFolder: string): Array<Record<string, any>> {
  return readFileSync(join(runFolder, 'events.jsonl'), 'utf8').split('\n').slice(0, -1).map((line) => JSON.parse(line));
}

/** A raw GET of the card with the headers given, as a browser page or another host would send it. */
function rawGet(url: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const request = httpRequest({ host: target.hostname, port: target.port, path: target.pathname, method: 'GET', headers }, (response) => {
      let body = '';
      response.on('data', (chunk) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
    request.on('error', reject);
    request.end();
  });
}

describe('manus a2a serve, driven by the SDK client', () => {
  it('publishes a card with one skill per recipe, made from its description and parameters', async () => {
    const fixture = writeFixture();
    const served = await serve(fixture, ['--recipe', 'notes.yaml']);
    const client = await sdkClient(served.origin);
    const card = await client.getAgentCard();
    expect(card.name).toBe('notes');
    expect(card.capabilities?.streaming).toBe(true);
    expect(card.supportedInterfaces[0]).toMatchObject({ protocolBinding: 'JSONRPC', url: `${served.origin}/a2a/jsonrpc` });
    expect(card.skills).toHaveLength(1);
    expect(card.skills[0]).toMatchObject({ id: 'notes', name: 'notes' });
    expect(card.skills[0].description).toContain('Writes notes about a topic.');
    expect(card.skills[0].description).toContain('topic (string, required): What to write about.');
    expect(card.skills[0].description).toContain('style (short|long, default "short")');
  });

  it('streams a task to completion: progress as status updates, the written file as an artifact, the run recorded', async () => {
    const fixture = writeFixture();
    const model = await withModel([
      {
        toolCalls: [{ name: 'write_note', arguments: { name: 'owls.md', text: '# Owls\nThey fly at night.\n' } }],
        expect: (request) => {
          const user = request.body.messages.find((message) => message.role === 'user');
          if (!String(user?.content).includes('Write long notes about owls.')) throw new Error(`unexpected task: ${JSON.stringify(user)}`);
        },
      },
      { toolCalls: [{ name: 'terminate', arguments: { status: 'success', message: 'Wrote owls.md' } }] },
    ]);
    const served = await serve(fixture, ['--recipe', 'notes.yaml'], model);
    const client = await sdkClient(served.origin);
    const first = await stream(client, userMessage([data({ topic: 'owls', style: 'long' })]));
    // The permission to write is asked of the client.
    expect(states(first).at(-1)).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(statusTexts(first).at(-1)).toMatch(/^Allow the agent to call write_note with .*owls\.md.*\nAnswer yes to allow it/s);
    const events = await stream(client, userMessage([text('yes')], taskOf(first)));
    expect(model.expectationFailures).toEqual([]);
    expect(states(events)).toContain(TaskState.TASK_STATE_WORKING);
    expect(states(events).at(-1)).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(statusTexts(events)).toContain('step 1 of at most 20');
    const artifacts = events.flatMap((event) => (event.payload?.$case === 'artifactUpdate' && event.payload.value.artifact ? [event.payload.value.artifact] : []));
    expect(artifacts.map((artifact) => artifact.name)).toEqual(['answer', 'owls.md']);
    const file = artifacts[1].parts[0];
    expect(file).toMatchObject({ filename: 'owls.md', mediaType: 'text/markdown' });
    expect(file.content?.$case).toBe('raw');
    expect(Buffer.from(file.content?.$case === 'raw' ? file.content.value : []).toString('utf8')).toBe('# Owls\nThey fly at night.\n');

    const task = await client.getTask({ tenant: '', id: taskOf(first).taskId, historyLength: undefined });
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const final = events.at(-1)?.payload;
    const run = final?.$case === 'statusUpdate' ? final.value.metadata?.['manus-runtime/run'] : undefined;
    expect(run).toMatchObject({ status: 'success', steps: 2, files: ['owls.md'] });
    const [runFolder] = runFolders(fixture);
    expect(runFolder.endsWith(run.id)).toBe(true);
    const recorded = readEvents(runFolder);
    expect(recorded[0]).toMatchObject({ type: 'run-start', recipe: { name: 'notes' } });
    expect(recorded.filter((event) => event.type === 'human-answer')).toMatchObject([{ answer: 'yes', source: 'client' }]);
    expect(recorded.at(-1)).toMatchObject({ type: 'run-end', status: 'success' });
  });

  it("turns ask_human into input-required, and the client's answer resumes the same run", async () => {
    const fixture = writeFixture();
    const model = await withModel([
      { toolCalls: [{ name: 'ask_human', arguments: { question: `Which owl? (the key is ${secret})` } }] },
      {
        toolCalls: [{ name: 'terminate', arguments: { status: 'success', message: 'Barn owls it is' } }],
        expect: (request) => {
          const answer = request.body.messages.at(-1);
          if (answer?.role !== 'tool' || !String(answer.content).includes('barn owls')) throw new Error(`the answer did not reach the model: ${JSON.stringify(answer)}`);
        },
      },
    ]);
    const served = await serve(fixture, ['--recipe', 'notes.yaml'], model);
    const client = await sdkClient(served.origin);
    const asked = await stream(client, userMessage([text('owls')]));
    expect(states(asked).at(-1)).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(statusTexts(asked).at(-1)).toBe('Which owl? (the key is [redacted])');
    const answered = await stream(client, userMessage([text('barn owls')], taskOf(asked)));
    expect(model.expectationFailures).toEqual([]);
    expect(states(answered).at(-1)).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(statusTexts(answered).at(-1)).toBe('Barn owls it is');
    // One run, from question to answer.
    const folders = runFolders(fixture);
    expect(folders).toHaveLength(1);
    const recorded = readEvents(folders[0]);
    expect(recorded.filter((event) => event.type === 'run-start')).toHaveLength(1);
    expect(recorded.at(-1)).toMatchObject({ type: 'run-end', status: 'success' });
  });

  it('cancels a task: the run stops and is recorded as interrupted', async () => {
    const fixture = writeFixture();
    const model = await withModel([{ toolCalls: [{ name: 'wait', arguments: { milliseconds: 60_000 } }] }]);
    const served = await serve(fixture, ['--recipe', 'notes.yaml'], model);
    const client = await sdkClient(served.origin);
    const events: StreamResponse[] = [];
    const streaming = (async () => {
      for await (const event of client.sendMessageStream({ tenant: '', message: userMessage([data({ topic: 'owls' })]), configuration: undefined, metadata: undefined })) events.push(event);
    })();
    await until(() => runFolders(fixture).some((folder) => eventsSoFar(folder).some((event) => event.type === 'tool-call-start')));
    const cancelled = await client.cancelTask({ tenant: '', id: taskOf(events).taskId, metadata: undefined });
    expect(cancelled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    await streaming;
    expect(states(events).at(-1)).toBe(TaskState.TASK_STATE_CANCELED);
    const [runFolder] = runFolders(fixture);
    expect(readEvents(runFolder).at(-1)).toMatchObject({ type: 'run-end', status: 'interrupted' });
  });

  it('cancels a task that waits for an answer to a permission prompt: the run is interrupted, not denied', async () => {
    const fixture = writeFixture();
    const model = await withModel([{ toolCalls: [{ name: 'write_note', arguments: { name: 'owls.md', text: 'owls' } }] }]);
    const served = await serve(fixture, ['--recipe', 'notes.yaml'], model);
    const client = await sdkClient(served.origin);
    const asked = await stream(client, userMessage([data({ topic: 'owls' })]));
    expect(states(asked).at(-1)).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const cancelled = await client.cancelTask({ tenant: '', id: taskOf(asked).taskId, metadata: undefined });
    expect(cancelled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    const [runFolder] = runFolders(fixture);
    expect(readEvents(runFolder).at(-1)).toMatchObject({ type: 'run-end', status: 'interrupted' });
    expect(readEvents(runFolder)[0].workspace).toMatch(/^workspace\//);
    expect(existsSync(join(fixture, readEvents(runFolder)[0].workspace, 'owls.md'))).toBe(false);
  });

  it('rejects arguments the recipe refuses, saying why', async () => {
    const fixture = writeFixture();
    const served = await serve(fixture, ['--recipe', 'notes.yaml']);
    const client = await sdkClient(served.origin);
    const events = await stream(client, userMessage([data({ topic: 'owls', style: 'medium' })]));
    expect(states(events).at(-1)).toBe(TaskState.TASK_STATE_REJECTED);
    expect(statusTexts(events).at(-1)).toMatch(/'medium' is not one of: short, long/);
  });
});

describe('manus a2a serve: who may call', () => {
  it('refuses requests that name another host or come from another origin (DNS rebinding)', async () => {
    const fixture = writeFixture();
    const served = await serve(fixture, ['--recipe', 'notes.yaml']);
    const port = new URL(served.origin).port;
    const rebound = await rawGet(served.cardUrl, { Host: `attacker.example:${port}` });
    expect(rebound.status).toBe(403);
    expect(rebound.body).toMatch(/Invalid Host/);
    const foreignPage = await rawGet(served.cardUrl, { Host: `127.0.0.1:${port}`, Origin: 'http://attacker.example' });
    expect(foreignPage.status).toBe(403);
    expect(foreignPage.body).toMatch(/Invalid Origin/);
    expect((await rawGet(served.cardUrl, { Host: `localhost:${port}` })).status).toBe(200);
  });

  it('needs a bearer token bound beyond loopback, and refuses to start without one', async () => {
    const fixture = writeFixture();
    const refused = await runCli(['a2a', 'serve', '--host', '0.0.0.0', '--port', '0', '--recipe', 'notes.yaml'], { cwd: fixture });
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toMatch(/needs a bearer token: pass --token-env NAME/);

    const token = 'a-long-random-bearer-token-42';
    const model = await withModel([{ toolCalls: [{ name: 'terminate', arguments: { status: 'success', message: 'done' } }] }]);
    const served = await serve(fixture, ['--host', '0.0.0.0', '--token-env', 'A2A_TOKEN', '--recipe', 'notes.yaml'], model, { A2A_TOKEN: token });
    expect(served.origin).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const host = new URL(served.origin).host;
    expect((await rawGet(served.cardUrl, { Host: host })).status).toBe(401);
    expect((await rawGet(served.cardUrl, { Host: host, Authorization: 'Bearer wrong' })).status).toBe(401);
    const anonymous = await sdkClient(served.origin).then(() => 'connected', (error: Error) => error.message);
    expect(anonymous).toMatch(/401/);
    const client = await sdkClient(served.origin, { Authorization: `Bearer ${token}` });
    expect(Object.keys((await client.getAgentCard()).securitySchemes)).toEqual(['bearer']);
    const events = await stream(client, userMessage([data({ topic: 'owls' })]));
    expect(states(events).at(-1)).toBe(TaskState.TASK_STATE_COMPLETED);
  });
});

describe('start-up', () => {
  it('loads neither the A2A SDK nor express for a plain manus run', async () => {
    const fixture = makeFixture({
      'plain.yaml': 'version: 1\nname: plain\nprompt: hi\nagent:\n  tools: [terminate]\n',
      'watch.cjs': [
        "const Module = require('node:module');",
        'const load = Module._load;',
        "Module._load = function (request, ...rest) { if (/^(@a2a-js\\/|express$)/.test(request)) process.stderr.write('loaded ' + request + '\\n'); return load.call(this, request, ...rest); };",
      ].join('\n'),
    });
    const model = await withModel([{ toolCalls: [{ name: 'terminate', arguments: { status: 'success', message: 'done' } }] }]);
    const run = await runCli(['run', 'plain.yaml'], { cwd: fixture, env: serverEnvironment(model), command: [process.execPath, '--require', join(fixture, 'watch.cjs'), cliEntry] });
    expect(run.exitCode).toBe(0);
    expect(run.stderr).not.toMatch(/loaded/);
  });
});
