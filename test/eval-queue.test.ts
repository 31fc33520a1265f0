/**
 * An eval on a queue: its runs go to workers as a batch's items do, and come back scored; each
 * run names its model, which a worker runs only when its own --models offers it; --cache keeps
 * replies in each worker's own folder. Needs redis-server; skipped with the reason printed when it
 * is not installed.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './support/run-cli.js';
import { batchEnvironment, chatRequests, startBatchModel, taskName, writeBatchFixture } from './support/batch-fixture.js';
import { startWorker, stopWorkers, workerApiKey } from './support/queue-fixture.js';
import { redisMissing, startRedis, type RedisServer } from './support/redis-server.js';
import type { ScriptedModelServer } from './support/scripted-model-server.js';

const missing = redisMissing();
if (missing) console.warn(`eval queue tests skipped: ${missing}`);

describe.skipIf(missing !== undefined)('manus eval on a queue', () => {
  let redis: RedisServer;
  let server: ScriptedModelServer;
  beforeAll(async () => {
    redis = await startRedis();
    server = await startBatchModel({ steps: 1, override: (name, step) => (name === 'person-2' && step === 1 ? { toolCalls: [{ name: 'terminate', arguments: { status: 'success', message: 'wrong' } }] } : undefined) });
  });
  afterAll(async () => {
    await server?.close();
    await redis?.stop();
  });

  it('runs every row on the workers and scores the results from their returned events', async () => {
    const fixture = writeBatchFixture({ items: 1 });
    const rows = Array.from({ length: 6 }, (_, index) => `    - { id: p${index}, parameters: { name: person-${index} }, expected: hello person-${index} }`);
    writeFileSync(join(fixture, 'greet.eval.yaml'), ['version: 1', 'name: greet', 'recipe: recipe.yaml', 'dataset:', '  rows:', ...rows, 'scorers:', '  - { type: equals, value: "{{expected}}" }', '  - { type: tool_called, tool: echo }', ''].join('\n'));
    const workers = [startWorker(redis, server, 2), startWorker(redis, server, 2)];
    try {
      const result = await runCli(['eval', 'greet.eval.yaml', '--ci', '--queue', redis.url], { cwd: fixture, env: { ...batchEnvironment(server), OPENAI_API_KEY: 'not-the-workers' }, timeoutMs: 60_000 });
      expect(result.exitCode, result.stderr).toBe(0);
      expect(result.stderr).toContain(`on the queue ${redis.url}`);
      const root = join(fixture, '.manus', 'evals');
      const folder = join(root, readdirSync(root)[0]);
      const record = JSON.parse(readFileSync(join(folder, 'eval.json'), 'utf8'));
      expect(record.summary[0]).toMatchObject({ runs: 6, passed: 5 });
      const wrong = record.items.find((item: any) => item.row === 'p2');
      expect(wrong.scores.map((score: any) => [score.type, score.passed])).toEqual([['equals', false], ['tool_called', true]]);
      // Tool calls were read from the events the workers returned into the eval's folder.
      const first = record.items.find((item: any) => item.row === 'p0');
      expect(existsSync(join(folder, first.runDirectory, 'events.jsonl'))).toBe(true);
      expect(readFileSync(join(folder, 'eval.json'), 'utf8')).not.toContain(workerApiKey);
    } finally {
      await stopWorkers(workers);
    }
  });

  it('runs the model matrix on workers that offer its models, and fails the runs of a model no worker offers, unasked', async () => {
    const fixture = writeGreetEval(3);
    const workers = [startWorker(redis, server, 2, undefined, ['--models', 'model-a,model-b']), startWorker(redis, server, 2, undefined, ['--models', 'model-b, model-a'])];
    try {
      const before = chatRequests(server).length;
      const result = await runCli(['eval', 'greet.eval.yaml', '--ci', '--json', '--queue', redis.url, '--models', 'model-a,model-b'], { cwd: fixture, env: batchEnvironment(server), timeoutMs: 60_000 });
      expect(result.exitCode, result.stderr).toBe(0);
      const record = JSON.parse(result.stdout);
      // person-2's answer is scripted wrong, on every model.
      expect(record.summary.map((summary: any) => [summary.model, summary.runs, summary.passed])).toEqual([['model-a', 3, 2], ['model-b', 3, 2]]);
      // Each row was asked of each model, on the workers' endpoint, with the name the eval gave.
      const asked = chatRequests(server).slice(before).map((request) => `${taskName(request)} ${String(request.body.model)}`);
      expect([...new Set(asked)].sort()).toEqual(['person-0', 'person-1', 'person-2'].flatMap((name) => [`${name} model-a`, `${name} model-b`]));
    } finally {
      await stopWorkers(workers);
    }
    const narrow = startWorker(redis, server, 2, undefined, ['--models', 'model-a']);
    try {
      const before = chatRequests(server).length;
      const result = await runCli(['eval', 'greet.eval.yaml', '--ci', '--json', '--queue', redis.url, '--models', 'model-a,model-c'], { cwd: fixture, env: batchEnvironment(server), timeoutMs: 60_000 });
      const record = JSON.parse(result.stdout);
      expect(record.summary.map((summary: any) => [summary.model, summary.runs, summary.passed])).toEqual([['model-a', 3, 2], ['model-c', 3, 0]]);
      for (const item of record.items.filter((each: any) => each.model === 'model-c')) {
        expect(item.status).toBe('error');
        expect(item.error.code).toBe('model_not_offered');
        expect(item.error.message).toContain('the item asks for the model "model-c", which worker');
        expect(item.error.message).toContain('it offers model-a');
      }
      expect(chatRequests(server).slice(before).map((request) => request.body.model)).not.toContain('model-c');
    } finally {
      await stopWorkers([narrow]);
    }
  });

  it("keeps the replies in the worker's own cache with --cache: a rerun asks no model, and k repeats stay k samples", async () => {
    const fixture = writeGreetEval(2);
    const home = realpathSync(mkdtempSync(join(tmpdir(), 'manus-worker-')));
    const worker = startWorker(redis, server, 3, home, ['--models', 'model-a']);
    try {
      const command = ['eval', 'greet.eval.yaml', '--ci', '--json', '--queue', redis.url, '--models', 'model-a', '--repeat', '2', '--cache'];
      const before = chatRequests(server).length;
      const first = await runCli(command, { cwd: fixture, env: batchEnvironment(server), timeoutMs: 60_000 });
      expect(first.exitCode, first.stderr).toBe(0);
      // Two rows, two repeats, two requests a run: each repeat asked for its own replies.
      expect(JSON.parse(first.stdout).cache).toEqual({ hits: 0, misses: 8 });
      expect(chatRequests(server).length - before).toBe(8);
      const second = await runCli(command, { cwd: fixture, env: batchEnvironment(server), timeoutMs: 60_000 });
      expect(second.exitCode, second.stderr).toBe(0);
      const record = JSON.parse(second.stdout);
      expect(record.cache).toEqual({ hits: 8, misses: 0 });
      expect(record.summary[0]).toMatchObject({ runs: 4, passed: 4 });
      expect(chatRequests(server).length - before).toBe(8);
      // The cache is the worker's, in the folder it runs in; the eval's machine keeps none.
      expect(existsSync(join(home, '.manus', 'eval-cache'))).toBe(true);
      expect(existsSync(join(fixture, '.manus', 'eval-cache'))).toBe(false);
    } finally {
      await stopWorkers([worker]);
    }
  });
});

/** The batch fixture with an eval of `rows` greetings, scored on the answer. */
function writeGreetEval(rows: number): string {
  const fixture = writeBatchFixture({ items: 1 });
  const lines = Array.from({ length: rows }, (_, index) => `    - { id: p${index}, parameters: { name: person-${index} }, expected: hello person-${index} }`);
  writeFileSync(join(fixture, 'greet.eval.yaml'), ['version: 1', 'name: greet', 'recipe: recipe.yaml', 'dataset:', '  rows:', ...lines, 'scorers:', '  - { type: equals, value: "{{expected}}" }', ''].join('\n'));
  return fixture;
}
