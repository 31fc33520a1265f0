import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeLoopFixture } from './loop-fixture.js';
import { cliEntry } from './run-cli.js';
import { startScriptedModelServer, type RecordedChatRequest, type ScriptedModelServer, type ScriptedTurn } from './scripted-model-server.js';

/**
 * A batch recipe: one parameter, `name`, in the prompt; the agent calls echo `steps` times, then
 * terminates with "hello <name>". The scripted model answers each request from the request itself
 * (how many tool results it holds, which name its task has), so items running at once each get
 * their own conversation.
 */
export function writeBatchFixture(options: { items: number; recipeExtra?: string; agentExtra?: string }): string {
  const fixture = writeLoopFixture({
    prompt: 'Greet {{name}}.',
    recipeExtra: ['parameters:', '  name:', '    type: string', '    description: who to greet', options.recipeExtra ?? ''].join('\n'),
    agentExtra: options.agentExtra,
    tools: ['echo', 'wait', 'terminate'],
  });
  const names = Array.from({ length: options.items }, (_, index) => `person-${index}`);
  writeFileSync(join(fixture, 'items.jsonl'), names.map((name) => JSON.stringify({ name })).join('\n') + '\n');
  writeFileSync(join(fixture, 'items.csv'), ['name', ...names.map((name) => `"${name}"`)].join('\r\n') + '\r\n');
  return fixture;
}

export interface BatchModelOptions {
  /** Tool-calling steps before the final answer. */
  steps: number;
  /** Each reply waits this long. */
  delayMs?: number;
  /** A turn instead of the usual one, for an item's step (0-based), when it returns one. */
  override?: (name: string, step: number, request: RecordedChatRequest) => ScriptedTurn | undefined;
}

export function taskName(request: RecordedChatRequest): string {
  const messages = request.body.messages as Array<{ role: string; content: unknown }>;
  const task = messages.find((message) => message.role === 'user' && typeof message.content === 'string' && message.content.includes('Greet '));
  return /Greet ([\w-]+)\./.exec(String(task?.content ?? ''))?.[1] ?? 'unknown';
}

/** The scripted model for batch fixtures: it answers from each request, never from a shared script. */
export function startBatchModel(options: BatchModelOptions): Promise<ScriptedModelServer> {
  return startScriptedModelServer({
    turns: [],
    sideTurn: (request) => {
      const name = taskName(request);
      const step = (request.body.messages as Array<{ role: string }>).filter((message) => message.role === 'tool').length;
      const turn = options.override?.(name, step, request)
        ?? (step < options.steps
          ? { toolCalls: [{ name: 'echo', arguments: { text: `${name} step ${step}` } }] }
          : { toolCalls: [{ name: 'terminate', arguments: { status: 'success', message: `hello ${name}` } }] });
      return { delayMs: options.delayMs, ...turn };
    },
  });
}

export function chatRequests(server: ScriptedModelServer): RecordedChatRequest[] {
  return server.requests.filter((request) => request.path.endsWith('/chat/completions')) as RecordedChatRequest[];
}

export const batchEnvironment = (server: ScriptedModelServer) => ({ OPENAI_BASE_URL: server.baseUrl, OPENAI_API_KEY: 'test-key', MANUS_MODEL: 'scripted-model' });

/** The one batch folder under the fixture's .manus/batches. */
export function batchFolder(fixture: string): string {
  const root = join(fixture, '.manus', 'batches');
  const names = existsSync(root) ? readdirSync(root) : [];
  if (names.length !== 1) throw new Error(`expected one batch folder, found ${names.length}`);
  return join(root, names[0]);
}

export function readBatch(folder: string): { record: Record<string, any>; lines: Array<Record<string, any>>; latest: Map<number, Record<string, any>> } {
  const record = JSON.parse(readFileSync(join(folder, 'batch.json'), 'utf8'));
  const lines = readFileSync(join(folder, 'items.jsonl'), 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line));
  const latest = new Map(lines.map((line) => [line.index as number, line]));
  return { record, lines, latest };
}

export interface SpawnedCli {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  closed: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** The built command in a child process of its own, to signal or kill it. */
export function spawnCli(args: string[], options: { cwd: string; env: Record<string, string | undefined> }): SpawnedCli {
  const child = spawn(process.execPath, [cliEntry, ...args], {
    cwd: options.cwd,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, NO_COLOR: '1', OLLAMA_HOST: '127.0.0.1:9', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk) => (stdout += chunk));
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const closed = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));
  return { child, stdout: () => stdout, stderr: () => stderr, closed };
}

/** Resolves once `condition` holds, checked every 20 ms, or rejects after `timeoutMs`. */
export async function waitFor(condition: () => boolean, timeoutMs = 20_000, what = 'the condition'): Promise<void> {
  const started = Date.now();
  while (!condition()) {
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
