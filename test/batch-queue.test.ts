import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseQueueUrl } from '../runtime/applications/batch/queue/redis-connection.js';
import { RedisRateLimiter } from '../runtime/applications/batch/queue/redis-rate-limiter.js';
import { makeFixture, runCli } from './support/run-cli.js';
import { batchEnvironment, batchFolder, chatRequests, readBatch, spawnCli, startBatchModel, taskName, waitFor, writeBatchFixture, type SpawnedCli } from './support/batch-fixture.js';
import { batchWaitingOnQueue, startWorker, stopWorkers, workerApiKey } from './support/queue-fixture.js';
import { redisMissing, startRedis, type RedisServer } from './support/redis-server.js';
import { startScriptedModelServer } from './support/scripted-model-server.js';

const missing = redisMissing();
if (missing) process.stdout.write(`batch-queue tests skipped: ${missing}\n`);

/** Item numbers (from 1, as everywhere a person reads them) a worker's log says it started and finished. */
function workerItems(worker: SpawnedCli): { started: Set<string>; finished: Set<string> } {
  const started = new Set<string>();
  const finished = new Set<string>();
  for (const match of worker.stderr().matchAll(/item (\d+) of batch \S+: (started|success|failure|\S+ \(exit)/g)) (match[2] === 'started' ? started : finished).add(match[1]);
  return { started, finished };
}

describe.skipIf(missing !== undefined)('manus batch on a queue', () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis?.stop();
  });

  it('runs 60 items on three workers, one killed mid-item, each item recorded exactly once', async () => {
    const fixture = writeBatchFixture({ items: 60, recipeExtra: 'checks:\n  - answer_matches: "hello person-"' });
    const server = await startBatchModel({ steps: 3, delayMs: 100 });
    const workers = [0, 1, 2].map(() => startWorker(redis, server, 3));
    try {
      const batch = spawnCli(['batch', 'recipe.yaml', '--inputs', 'items.jsonl', '--queue', redis.url, '--ci', '--report', 'reports'], { cwd: fixture, env: { ...batchEnvironment(server), OPENAI_API_KEY: workerApiKey } });
      // Killed while it has items running: they must be handed to the others.
      await waitFor(() => {
        const { started, finished } = workerItems(workers[0]);
        return finished.size >= 2 && [...started].filter((number) => !finished.has(number)).length >= 2;
      }, 30_000, 'the first worker to be running items');
      const { started, finished } = workerItems(workers[0]);
      const cutShort = [...started].filter((number) => !finished.has(number)).map((number) => Number(number) - 1);
      workers[0].child.kill('SIGKILL');
      const { code } = await batch.closed;
      expect(code, batch.stderr()).toBe(0);

      const { record, lines, latest } = readBatch(batchFolder(fixture));
      expect(record).toMatchObject({ status: 'success', exitCode: 0, queue: redis.url, totals: { items: 60, succeeded: 60, failed: 0, pending: 0 } });
      const outcomes = lines.filter((line) => line.status !== 'running');
      expect(outcomes).toHaveLength(60);
      expect(new Set(outcomes.map((line) => line.index)).size).toBe(60);
      for (const [index, line] of latest) {
        expect(line).toMatchObject({ status: 'success', exitCode: 0, answer: `hello person-${index}`, events: { stored: 'local' } });
        expect(readFileSync(join(batchFolder(fixture), line.events.path), 'utf8')).toContain('"run-end"');
      }
      // The workers' logs number the items as the table and the reports do: 1 to 60.
      const logged = new Set(workers.flatMap((worker) => [...workerItems(worker).started]));
      expect([...logged].map(Number).sort((left, right) => left - right)).toEqual(Array.from({ length: 60 }, (_, index) => index + 1));
      // The killed worker's items were started again elsewhere.
      for (const index of cutShort) {
        expect(latest.get(index)!.attempts).toBeGreaterThanOrEqual(2);
        expect(latest.get(index)!.worker.pid).not.toBe(workers[0].child.pid);
      }
      // Every item reached its last step on some worker.
      const terminated = chatRequests(server).filter((request) => (request.body.messages as Array<{ role: string }>).filter((message) => message.role === 'tool').length === 3);
      expect(new Set(terminated.map(taskName)).size).toBe(60);

      const report = JSON.parse(readFileSync(join(fixture, 'reports', 'manus-batch-report.json'), 'utf8'));
      expect(report.items).toHaveLength(60);
      expect(report.items.map((item: { index: number }) => item.index)).toEqual([...latest.keys()].sort((left, right) => left - right));
      expect(report.batch.totals.totalTokens).toBe(record.totals.totalTokens);
      const junit = readFileSync(join(fixture, 'reports', 'manus-junit.xml'), 'utf8');
      expect(junit.match(/<testcase /g)).toHaveLength(60);
      expect(junit).toContain('tests="60" failures="0"');

      // Nothing the workers or the batch stored holds the model key.
      const client = new Redis(redis.port, '127.0.0.1');
      try {
        for (const key of await client.keys('*')) {
          const type = await client.type(key);
          const text = type === 'string' ? String(await client.getBuffer(key)) : type === 'hash' ? JSON.stringify(await client.hgetall(key)) : type === 'stream' ? JSON.stringify(await client.xrange(key, '-', '+')) : '';
          expect(text.includes(workerApiKey), key).toBe(false);
        }
      } finally {
        client.disconnect();
      }
    } finally {
      await stopWorkers(workers);
      await server.close();
    }
  });

  it.each([
    { what: 'pauses while Redis is away and goes on when it is back', persists: true, says: /is back; the batch goes on/ },
    {
      what: 'goes on when Redis comes back without its data: the items whose jobs it lost are enqueued again, each recorded once',
      persists: false,
      says: /job was no longer on the queue's Redis \(did it restart without its data\?\); it is enqueued again/,
    },
  ])('$what', async ({ persists, says }) => {
    const outage = await startRedis(persists ? { persistDirectory: realpathSync(mkdtempSync(join(tmpdir(), 'manus-redis-'))) } : {});
    const fixture = writeBatchFixture({ items: 6 });
    const server = await startBatchModel({ steps: 2, delayMs: 150 });
    const workers = [startWorker(outage, server, 2)];
    try {
      const batch = spawnCli(['batch', 'recipe.yaml', '--inputs', 'items.jsonl', '--queue', outage.url, '--ci'], { cwd: fixture, env: batchEnvironment(server) });
      await waitFor(() => / success /.test(batch.stderr()), 30_000, 'a first item to finish');
      await outage.stop();
      await waitFor(() => batch.stderr().includes('is unreachable'), 15_000, 'the batch to say Redis is away');
      expect(batch.stderr()).toContain('the batch is paused and goes on when it is back');
      await outage.restart();
      const { code } = await batch.closed;
      expect(code, batch.stderr()).toBe(0);
      expect(batch.stderr()).toMatch(says);
      const { record, lines } = readBatch(batchFolder(fixture));
      expect(record.totals).toMatchObject({ succeeded: 6, running: 0 });
      // Each item has one outcome, however often it ran.
      expect(lines.filter((line) => line.status !== 'running').map((line) => line.index).sort()).toEqual([0, 1, 2, 3, 4, 5]);
    } finally {
      await stopWorkers(workers);
      await server.close();
      await outage.stop();
    }
  });

  it('records an item whose worker returns a result it cannot read as an error, and writes nothing outside the batch folder', async () => {
    const fixture = writeBatchFixture({ items: 2 });
    const { Worker } = await import('bullmq');
    const outside = realpathSync(mkdtempSync(join(tmpdir(), 'manus-outside-')));
    // A run id climbing out of any folder the events could be written under.
    const escape = `${'../'.repeat(24)}${outside.slice(1)}/planted`;
    const server = await startBatchModel({ steps: 1 });
    // A worker of another build, or one gone wrong: whatever it returns is checked before it is taken.
    const rogue = new Worker('manus-batch-items', async (job) => job.data.index === 0
      ? { kind: 'finished', outcome: { status: 'success' } }
      : {
        kind: 'finished',
        outcome: { runId: escape, status: 'success', exitCode: 0, answer: 'planted', usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 }, durationMs: 1, startedAt: new Date().toISOString() },
        worker: { id: 'rogue', host: 'rogue', pid: 1 },
        events: gzipSync('{"type":"run-end"}\n').toString('base64'),
      }, { connection: parseQueueUrl(redis.url, {}).options, prefix: 'manus' });
    try {
      const result = await runCli(['batch', 'recipe.yaml', '--inputs', 'items.jsonl', '--queue', redis.url, '--ci'], { cwd: fixture, env: batchEnvironment(server), timeoutMs: 60_000 });
      expect(result.exitCode, result.stderr).toBe(1);
      const { latest } = readBatch(batchFolder(fixture));
      for (const index of [0, 1]) {
        expect(latest.get(index)).toMatchObject({ status: 'error', error: { code: 'worker_failed' } });
        expect(latest.get(index)!.answer).toContain('its worker returned a result the batch cannot read');
      }
      expect(readdirSync(outside)).toEqual([]);
      expect(chatRequests(server)).toHaveLength(0);
    } finally {
      await rogue.close();
      await server.close();
    }
  });

  it('on Ctrl-C stops the items running on workers and takes back the waiting ones, exit 130', async () => {
    const fixture = writeBatchFixture({ items: 6 });
    const server = await startBatchModel({ steps: 2, override: (_name, step) => (step === 1 ? { delayMs: 30_000, content: 'never arrives' } : undefined) });
    const workers = [startWorker(redis, server, 2)];
    try {
      const batch = spawnCli(['batch', 'recipe.yaml', '--inputs', 'items.jsonl', '--queue', redis.url, '--ci'], { cwd: fixture, env: batchEnvironment(server) });
      await waitFor(() => chatRequests(server).length >= 4, 30_000, 'two items waiting for the model');
      batch.child.kill('SIGINT');
      const { code } = await batch.closed;
      expect(code, batch.stderr()).toBe(130);
      const { record, latest } = readBatch(batchFolder(fixture));
      expect(record).toMatchObject({ status: 'interrupted', exitCode: 130, totals: { succeeded: 0, pending: 6 } });
      expect([...latest.values()].map((line) => [line.status, line.exitCode])).toEqual([['interrupted', 130], ['interrupted', 130]]);
      // The worker started nothing more of the batch.
      await new Promise((resolve) => setTimeout(resolve, 700));
      expect(workerItems(workers[0]).started.size).toBe(2);
      expect(new Set(chatRequests(server).map(taskName)).size).toBe(2);
    } finally {
      await stopWorkers(workers);
      await server.close();
    }
  });

  it('on resume continues the interrupted items from the events the batch kept, on a worker that never saw them', async () => {
    const fixture = writeBatchFixture({ items: 2 });
    let stalled = true;
    const server = await startBatchModel({ steps: 2, override: (_name, step) => (stalled && step === 1 ? { delayMs: 30_000, content: 'never arrives' } : undefined) });
    const first = startWorker(redis, server, 2);
    let second: SpawnedCli | undefined;
    try {
      const batch = spawnCli(['batch', 'recipe.yaml', '--inputs', 'items.jsonl', '--queue', redis.url, '--ci'], { cwd: fixture, env: batchEnvironment(server) });
      await waitFor(() => chatRequests(server).length >= 4, 30_000, 'both items waiting for their second step');
      batch.child.kill('SIGINT');
      expect((await batch.closed).code, batch.stderr()).toBe(130);
      const interrupted = readBatch(batchFolder(fixture)).latest;
      expect([...interrupted.values()].map((line) => [line.status, line.events?.stored])).toEqual([['interrupted', 'local'], ['interrupted', 'local']]);
      await stopWorkers([first]);
      // Another machine, as far as the worker can tell: its own runs and cache folders, none of the first one's.
      stalled = false;
      second = startWorker(redis, server, 2);
      const resumed = await runCli(['batch', 'resume', readBatch(batchFolder(fixture)).record.id, '--ci'], { cwd: fixture, env: batchEnvironment(server), timeoutMs: 60_000 });
      expect(resumed.exitCode, resumed.stderr).toBe(0);
      const { latest } = readBatch(batchFolder(fixture));
      for (const index of [0, 1]) {
        expect(latest.get(index)).toMatchObject({ status: 'success', answer: `hello person-${index}`, runId: interrupted.get(index)!.runId });
        expect(latest.get(index)!.worker.pid).toBe(second.child.pid);
        const events = readFileSync(join(batchFolder(fixture), latest.get(index)!.events.path), 'utf8');
        expect(events).toContain('"run-resume"');
      }
      // Continued, not started again: each item's first step was asked for once.
      const firstSteps = chatRequests(server).filter((request) => (request.body.messages as Array<{ role: string }>).every((message) => message.role !== 'tool'));
      expect(firstSteps.map(taskName).sort()).toEqual(['person-0', 'person-1']);
    } finally {
      await stopWorkers([first, ...(second ? [second] : [])]);
      await server.close();
    }
  });

  it('holds the batch token budget across workers: running items stop as budget-exhausted, the rest never start, exit 3', async () => {
    const fixture = writeBatchFixture({ items: 8 });
    const server = await startBatchModel({ steps: 6, delayMs: 60 });
    const workers = [startWorker(redis, server, 2), startWorker(redis, server, 2)];
    try {
      const result = await runCli(['batch', 'recipe.yaml', '--inputs', 'items.jsonl', '--queue', redis.url, '--max-tokens', '1200', '--ci'], { cwd: fixture, env: batchEnvironment(server), timeoutMs: 60_000 });
      expect(result.exitCode, result.stderr).toBe(3);
      const { record, latest } = readBatch(batchFolder(fixture));
      expect(record).toMatchObject({ status: 'budget-exhausted', exitCode: 3 });
      const stopped = [...latest.values()].filter((line) => line.status === 'budget-exhausted');
      expect(stopped.length).toBeGreaterThanOrEqual(1);
      expect(latest.size).toBeLessThan(8);
      expect(new Set(chatRequests(server).map(taskName)).size).toBe(latest.size);
    } finally {
      await stopWorkers(workers);
      await server.close();
    }
  });

  it('takes, on resume, the results a killed batch left on the queue instead of running those items again', async () => {
    const fixture = writeBatchFixture({ items: 6 });
    const server = await startBatchModel({ steps: 2, delayMs: 150 });
    const workers = [startWorker(redis, server, 3)];
    try {
      const batch = spawnCli(['batch', 'recipe.yaml', '--inputs', 'items.jsonl', '--queue', redis.url, '--ci'], { cwd: fixture, env: batchEnvironment(server) });
      await waitFor(() => / success /.test(batch.stderr()), 30_000, 'a first item to finish');
      batch.child.kill('SIGKILL');
      await batch.closed;
      // The worker finishes what it took, with no batch following.
      await waitFor(() => workerItems(workers[0]).finished.size === 6, 30_000, 'the worker to finish every item');
      const { record } = readBatch(batchFolder(fixture));
      const resumed = await runCli(['batch', 'resume', record.id, '--ci'], { cwd: fixture, env: batchEnvironment(server), timeoutMs: 60_000 });
      expect(resumed.exitCode, resumed.stderr).toBe(0);
      const after = readBatch(batchFolder(fixture));
      expect(after.record).toMatchObject({ status: 'success', queue: redis.url, totals: { succeeded: 6 } });
      expect(new Set(after.lines.filter((line) => line.status !== 'running').map((line) => line.index)).size).toBe(6);
      // No item ran twice: each reached its last step once.
      const last = chatRequests(server).filter((request) => (request.body.messages as Array<{ role: string }>).filter((message) => message.role === 'tool').length === 2);
      expect(last.map(taskName).sort()).toEqual(['person-0', 'person-1', 'person-2', 'person-3', 'person-4', 'person-5']);
    } finally {
      await stopWorkers(workers);
      await server.close();
    }
  });

  it('hands the items of a stopped worker back, and a worker on the same machine continues them from their events', async () => {
    const fixture = writeBatchFixture({ items: 2 });
    const server = await startBatchModel({ steps: 4, delayMs: 150 });
    const first = startWorker(redis, server, 2);
    let second: SpawnedCli | undefined;
    try {
      const batch = spawnCli(['batch', 'recipe.yaml', '--inputs', 'items.jsonl', '--queue', redis.url, '--ci'], { cwd: fixture, env: batchEnvironment(server) });
      await waitFor(() => chatRequests(server).length >= 4, 30_000, 'both items under way');
      const before = readBatch(batchFolder(fixture)).latest;
      first.child.kill('SIGTERM');
      expect((await first.closed).code).toBe(130);
      second = startWorker(redis, server, 2);
      const { code } = await batch.closed;
      expect(code, batch.stderr()).toBe(0);
      const { latest, lines } = readBatch(batchFolder(fixture));
      for (const index of [0, 1]) {
        expect(latest.get(index)).toMatchObject({ status: 'success', runId: before.get(index)!.runId });
        expect(latest.get(index)!.attempts).toBeGreaterThanOrEqual(2);
        expect(latest.get(index)!.worker.pid).toBe(second.child.pid);
      }
      expect(lines.filter((line) => line.status !== 'running')).toHaveLength(2);
      // Continued, not started again: each item's first step was asked for once.
      const firstSteps = chatRequests(server).filter((request) => (request.body.messages as Array<{ role: string }>).every((message) => message.role !== 'tool'));
      expect(firstSteps.map(taskName).sort()).toEqual(['person-0', 'person-1']);
    } finally {
      await stopWorkers([first, ...(second ? [second] : [])]);
      await server.close();
    }
  });

  it('takes only budgets and parameters from a job: a model, sandbox, grants or a recipe outside the definition in it change nothing', async () => {
    const fixture = writeBatchFixture({ items: 2 });
    const server = await startBatchModel({ steps: 1 });
    // No worker yet: the jobs wait, and whoever can write to the queue rewrites them.
    const { queue, batch, jobs: [first, second] } = await batchWaitingOnQueue(redis, server, fixture, 2);
    let worker: SpawnedCli | undefined;
    try {
      await first.updateData({ ...first.data, overrides: { ...first.data.overrides, model: 'crafted-model', sandbox: 'host', trust: ['all'], workspace: '/', mcpServers: [{ name: 'evil', command: 'sh' }] } });
      await second.updateData({ ...second.data, recipe: '../../recipe.yaml' });
      worker = startWorker(redis, server, 2);
      const { code } = await batch.closed;
      expect(code, batch.stderr()).toBe(1);
      const { latest } = readBatch(batchFolder(fixture));
      expect(latest.get(0)).toMatchObject({ status: 'success', answer: 'hello person-0' });
      expect(chatRequests(server).map((request) => request.body.model)).toEqual(['scripted-model', 'scripted-model']);
      const events = readFileSync(join(batchFolder(fixture), latest.get(0)!.runDirectory, 'events.jsonl'), 'utf8');
      expect(events).not.toContain('crafted-model');
      expect(events).not.toContain('mcp-server');
      expect(latest.get(1)!.status).not.toBe('success');
      expect(JSON.stringify(latest.get(1))).toContain('outside its run definition');
      // Refused for good: a definition does not get better by trying again.
      expect(latest.get(1)!.attempts).toBe(1);
    } finally {
      await queue.close();
      if (worker) await stopWorkers([worker]);
      await server.close();
    }
  });

  it('runs --model on workers that offer it, by name, resolved with their own configuration', async () => {
    const fixture = writeBatchFixture({ items: 3 });
    const server = await startBatchModel({ steps: 1 });
    const worker = startWorker(redis, server, 3, undefined, ['--models', 'model-a']);
    try {
      const result = await runCli(['batch', 'recipe.yaml', '--inputs', 'items.jsonl', '--queue', redis.url, '--model', 'model-a', '--ci'], { cwd: fixture, env: { ...batchEnvironment(server), OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' }, timeoutMs: 60_000 });
      expect(result.exitCode, result.stderr).toBe(0);
      // The worker's endpoint and key, the batch's model name.
      expect(new Set(chatRequests(server).map((request) => request.body.model))).toEqual(new Set(['model-a']));
      expect(new Set(chatRequests(server).map((request) => request.headers.authorization))).toEqual(new Set([`Bearer ${workerApiKey}`]));
    } finally {
      await stopWorkers([worker]);
      await server.close();
    }
  });

  it("takes a job's model only as a name its worker offers: another name, or one with an endpoint or key, fails the item unrun", async () => {
    const fixture = writeBatchFixture({ items: 3 });
    const server = await startBatchModel({ steps: 1 });
    const { queue, batch, jobs: [first, second, third] } = await batchWaitingOnQueue(redis, server, fixture, 3);
    let worker: SpawnedCli | undefined;
    try {
      await first.updateData({ ...first.data, model: 'model-a' });
      await second.updateData({ ...second.data, model: 'model-z' });
      await third.updateData({ ...third.data, model: { name: 'model-a', base_url: 'http://127.0.0.1:9/v1', api_key_env: 'HOME' } } as never);
      worker = startWorker(redis, server, 3, undefined, ['--models', 'model-a']);
      const { code } = await batch.closed;
      expect(code, batch.stderr()).toBe(1);
      const { latest } = readBatch(batchFolder(fixture));
      expect(latest.get(0)).toMatchObject({ status: 'success', answer: 'hello person-0' });
      expect(latest.get(1)).toMatchObject({ status: 'error', attempts: 1, error: { code: 'model_not_offered' } });
      expect(latest.get(1)!.error.message).toContain('the item asks for the model "model-z", which worker');
      expect(latest.get(2)).toMatchObject({ status: 'error', attempts: 1, error: { code: 'model_not_offered' } });
      expect(latest.get(2)!.error.message).toContain('a model that is not a name');
      // Neither refused item reached a model.
      expect(chatRequests(server).map((request) => [taskName(request), request.body.model])).toEqual([['person-0', 'model-a'], ['person-0', 'model-a']]);
      expect(worker.stderr()).toContain('not run: the item asks for the model "model-z"');
    } finally {
      await queue.close();
      if (worker) await stopWorkers([worker]);
      await server.close();
    }
  });

  it("continues a run from a job's events only when they are that run's, inside its definition, and no other run's folder", async () => {
    const fixture = writeBatchFixture({ items: 4 });
    const server = await startBatchModel({ steps: 1 });
    const { queue, batch, jobs: [first, second, third, fourth] } = await batchWaitingOnQueue(redis, server, fixture, 4);
    const home = realpathSync(mkdtempSync(join(tmpdir(), 'manus-worker-')));
    let worker: SpawnedCli | undefined;
    try {
      const eventsOf = (runId: string, workspace: string) => gzipSync(`${JSON.stringify({ type: 'run-start', runId, workspace, recipe: { file: '/etc/crafted.yaml', overrides: { sandbox: 'host' } } })}\n`).toString('base64');
      // Another run on the worker's machine, which a job names as its own.
      const otherRun = join(home, '.manus', 'runs', 'other-run');
      mkdirSync(otherRun, { recursive: true });
      writeFileSync(join(otherRun, 'events.jsonl'), `${JSON.stringify({ type: 'run-start', runId: 'other-run', workspace: 'workspace/other-run', secret: 'another run' })}\n`);
      await first.updateData({ ...first.data, resume: { runId: '../../climbed', events: eventsOf('../../climbed', 'workspace/x') } });
      await second.updateData({ ...second.data, resume: { runId: 'rooted-run', events: eventsOf('rooted-run', '/') } });
      await third.updateData({ ...third.data, resume: { runId: 'other-run', events: eventsOf('other-run', 'workspace/other-run') } });
      // The definition's own folder as the workspace, where its recipe and plugins are.
      await fourth.updateData({ ...fourth.data, resume: { runId: 'dotted-run', events: eventsOf('dotted-run', '.') } });
      worker = startWorker(redis, server, 3, home);
      const { code } = await batch.closed;
      expect(code, batch.stderr()).toBe(0);
      const { latest } = readBatch(batchFolder(fixture));
      // Each ran afresh, with a run id of its own.
      for (const index of [0, 1, 2, 3]) {
        expect(latest.get(index)).toMatchObject({ status: 'success', answer: `hello person-${index}` });
        expect(['climbed', 'rooted-run', 'other-run', 'dotted-run']).not.toContain(latest.get(index)!.runId);
      }
      expect(existsSync(join(home, '.manus', 'runs', 'rooted-run'))).toBe(false);
      expect(existsSync(join(home, '.manus', 'runs', 'dotted-run'))).toBe(false);
      expect(existsSync(join(home, 'climbed'))).toBe(false);
      expect(readFileSync(join(otherRun, 'events.jsonl'), 'utf8')).toContain('another run');
      expect(JSON.stringify(chatRequests(server).map((request) => request.body))).not.toContain('another run');
    } finally {
      await queue.close();
      if (worker) await stopWorkers([worker]);
      await server.close();
    }
  });

  it('ships an installed pack with the batch: workers run its recipe, agent and plugin, with the plugin\'s npm dependency', async () => {
    const pack = {
      'node_modules/acme-weather/package.json': JSON.stringify({ name: 'acme-weather', version: '1.0.0', manus: {} }),
      'node_modules/acme-weather/agents.yaml': 'version: 1\nagents:\n  forecaster:\n    description: Forecasts.\n    system_prompt: You are the forecaster.\n    tools: [weather, terminate]\n',
      'node_modules/acme-weather/plugins/weather.ts': "import { defineTool } from 'manus-runtime';\nimport { sky } from 'weather-words';\nexport default defineTool({ name: 'weather', description: 'Weather.', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }, execute: ({ city }) => sky() + ' in ' + String(city) });\n",
      // The plugin's own npm dependency, which the workers have only from the batch's definition.
      'node_modules/acme-weather/node_modules/weather-words/package.json': JSON.stringify({ name: 'weather-words', version: '1.0.0', main: 'index.js' }),
      'node_modules/acme-weather/node_modules/weather-words/index.js': "exports.sky = () => 'Sunny';\n",
      'node_modules/acme-weather/recipes/forecast.yaml': 'version: 1\nname: forecast\ndescription: A forecast.\nparameters:\n  city: { type: string, description: the city }\nprompt: The weather in {{city}}?\nagent: forecaster\n',
      'cities.jsonl': '{"city": "Oslo"}\n{"city": "Lima"}\n',
    };
    const fixture = makeFixture(pack);
    const server = await startScriptedModelServer({
      turns: [],
      sideTurn: (request) => {
        const messages = request.body.messages as Array<{ role: string; content: unknown }>;
        const result = messages.find((message) => message.role === 'tool');
        const city = /The weather in (\w+)\?/.exec(JSON.stringify(messages))?.[1] ?? '';
        return result
          ? { toolCalls: [{ name: 'terminate', arguments: { status: 'success', message: String(result.content) } }] }
          : { toolCalls: [{ name: 'weather', arguments: { city } }] };
      },
    });
    const workers = [startWorker(redis, server, 2)];
    try {
      const result = await runCli(['batch', 'acme-weather/forecast', '--inputs', 'cities.jsonl', '--queue', redis.url, '--json'], { cwd: fixture, env: batchEnvironment(server), timeoutMs: 60_000 });
      expect(result.exitCode, result.stderr).toBe(0);
      expect(result.json.items.map((item: { answer: string }) => item.answer)).toEqual(['Sunny in Oslo', 'Sunny in Lima']);
      expect(result.json.batch.recipe.file).toBe('acme-weather/forecast');
    } finally {
      await stopWorkers(workers);
      await server.close();
    }
  });

  it('holds a rate limit across workers: one bucket in Redis for all of them', async () => {
    const clients = [new Redis(redis.port, '127.0.0.1'), new Redis(redis.port, '127.0.0.1')];
    try {
      const identity = { profileName: `rate-test-${Date.now()}`, baseUrl: 'http://127.0.0.1:1/v1', model: 'm' };
      // Two workers' limiters, four requests a second between them.
      const limiters = clients.map((client) => new RedisRateLimiter(client, identity, { requestsPerMinute: 4 }, { windowMs: 1000 }));
      const started = performance.now();
      const granted: number[] = [];
      await Promise.all(Array.from({ length: 8 }, async (_, index) => {
        const permit = await limiters[index % 2].acquire(0);
        granted.push(performance.now() - started);
        permit.release();
      }));
      granted.sort((left, right) => left - right);
      // The bucket holds four: the first four go at once, the next four one every quarter second.
      expect(granted[3]).toBeLessThan(200);
      expect(granted[4]).toBeGreaterThanOrEqual(200);
      expect(granted[7]).toBeGreaterThanOrEqual(900);
    } finally {
      for (const client of clients) client.disconnect();
    }
  });
});

const opensslMissing = spawnSync('openssl', ['version']).status === 0 ? undefined : 'openssl is not installed, so no certificate can be made';
if (!missing && opensslMissing) process.stdout.write(`the TLS queue test is skipped: ${opensslMissing}\n`);

describe.skipIf(missing !== undefined || opensslMissing !== undefined)('a queue over TLS', () => {
  it('runs a batch through a Redis that speaks only TLS and asks for a password, with the password from REDIS_PASSWORD', async () => {
    const folder = realpathSync(mkdtempSync(join(tmpdir(), 'manus-redis-tls-')));
    const tls = { certificateFile: join(folder, 'certificate.pem'), keyFile: join(folder, 'key.pem') };
    const made = spawnSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', tls.keyFile, '-out', tls.certificateFile], { encoding: 'utf8' });
    expect(made.status, made.stderr).toBe(0);
    const password = 'queue-password-5d1e';
    const redis = await startRedis({ tls, password });
    const fixture = writeBatchFixture({ items: 2 });
    const server = await startBatchModel({ steps: 1 });
    // The worker and the batch trust the test's certificate as Node does any extra authority.
    const environment = { ...batchEnvironment(server), REDIS_PASSWORD: password, NODE_EXTRA_CA_CERTS: tls.certificateFile };
    const home = realpathSync(mkdtempSync(join(tmpdir(), 'manus-worker-')));
    const worker = spawnCli(['worker', '--queue', redis.url], { cwd: home, env: { ...environment, MANUS_CACHE_DIR: join(home, 'cache'), XDG_CONFIG_HOME: join(home, 'config') } });
    try {
      expect(redis.url).toMatch(/^rediss:\/\/127\.0\.0\.1:\d+\/0$/);
      const result = await runCli(['batch', 'recipe.yaml', '--inputs', 'items.jsonl', '--queue', redis.url, '--json'], { cwd: fixture, env: environment, timeoutMs: 60_000 });
      expect(result.exitCode, result.stderr).toBe(0);
      expect(result.json.items.map((item: { answer: string }) => item.answer)).toEqual(['hello person-0', 'hello person-1']);
      expect(`${result.stdout}${result.stderr}${worker.stderr()}`).not.toContain(password);
    } finally {
      await stopWorkers([worker]);
      await server.close();
      await redis.stop();
    }
  });
});

describe('queue connection settings', () => {
  it('refuses a Redis on another machine without a password or TLS, and never shows a password', async () => {
    expect(() => parseQueueUrl('redis://10.1.2.3:6379/0', {})).toThrow(/needs a password \(in the URL or REDIS_PASSWORD\) or TLS/);
    expect(parseQueueUrl('redis://10.1.2.3:6379/0', { REDIS_PASSWORD: 'pw' }).options).toMatchObject({ host: '10.1.2.3', password: 'pw' });
    expect(parseQueueUrl('rediss://queue.example:6380/2', {}).options).toMatchObject({ host: 'queue.example', port: 6380, db: 2, tls: { servername: 'queue.example' } });
    expect(parseQueueUrl('redis://localhost/1', {}).options).toMatchObject({ host: 'localhost', port: 6379, db: 1 });
    const withPassword = parseQueueUrl('redis://user:s3cret@10.1.2.3:6379/0', {});
    expect(withPassword.options).toMatchObject({ username: 'user', password: 's3cret' });
    expect(withPassword.display).not.toContain('s3cret');
    const worker = await runCli(['worker', '--queue', 'redis://10.1.2.3:6379/0'], { cwd: tmpdir(), timeoutMs: 10_000 });
    expect(worker.exitCode).toBe(2);
    expect(worker.stderr).toContain('an open one is refused');
  });
});
