/**
 * An eval on a queue: its runs go to workers as a batch's items do, and come back scored. Needs
 * redis-server; skipped with the reason printed when it is not installed.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './support/run-cli.js';
import { batchEnvironment, startBatchModel, writeBatchFixture } from './support/batch-fixture.js';
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

  it('runs every row on the workers, scores the results from their returned events, and refuses --models', async () => {
    const fixture = writeBatchFixture({ items: 1 });
    const rows = Array.from({ length: 6 }, (_, index) => `    - { id: p${index}, parameters: { name: person-${index} }, expected: hello person-${index} }`);
    writeFileSync(join(fixture, 'greet.eval.yaml'), ['version: 1', 'name: greet', 'recipe: recipe.yaml', 'dataset:', '  rows:', ...rows, 'scorers:', '  - { type: equals, value: "{{expected}}" }', '  - { type: tool_called, tool: echo }', ''].join('\n'));
    const workers = [startWorker(redis, server, 2), startWorker(redis, server, 2)];
    try {
      const refused = await runCli(['eval', 'greet.eval.yaml', '--ci', '--queue', redis.url, '--models', 'a,b'], { cwd: fixture, env: batchEnvironment(server) });
      expect(refused.exitCode).toBe(2);
      expect(refused.stderr).toContain('--models cannot go with --queue');
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
});
