import { existsSync, mkdtempSync, readdirSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseQueueUrl } from '../../runtime/applications/batch/queue/redis-connection.js';
import { batchEnvironment, spawnCli, waitFor, type SpawnedCli } from './batch-fixture.js';
import type { RedisServer } from './redis-server.js';
import type { ScriptedModelServer } from './scripted-model-server.js';

/** The model key the queue tests give workers, to look for where it must never be. */
export const workerApiKey = 'sk-queue-test-secret-7f3a9c';

/** `manus worker` in a home folder of its own (its runs, cache and config), unless given one; `args` are more options. */
export function startWorker(redis: RedisServer, server: ScriptedModelServer, concurrency: number, home = realpathSync(mkdtempSync(join(tmpdir(), 'manus-worker-'))), args: string[] = []): SpawnedCli {
  return spawnCli(['worker', '--queue', redis.url, '--concurrency', String(concurrency), '--stall-timeout', '1.5', ...args], {
    cwd: home,
    env: { ...batchEnvironment(server), OPENAI_API_KEY: workerApiKey, MANUS_CACHE_DIR: join(home, 'cache'), XDG_CONFIG_HOME: join(home, 'config') },
  });
}

/** Stops the workers still running (SIGTERM) and waits for all of them. */
export async function stopWorkers(workers: ReadonlyArray<SpawnedCli | undefined>): Promise<void> {
  const started = workers.filter((worker): worker is SpawnedCli => worker !== undefined);
  for (const worker of started) if (worker.child.exitCode === null && worker.child.signalCode === null) worker.child.kill('SIGTERM');
  await Promise.all(started.map((worker) => worker.closed));
}

/**
 * A batch started with no worker yet, and its jobs as they wait on the queue, by item index, for
 * the test to rewrite as whoever can write to the queue could.
 */
export async function batchWaitingOnQueue(redis: RedisServer, server: ScriptedModelServer, fixture: string, items: number) {
  const { Queue } = await import('bullmq');
  const queue = new Queue('manus-batch-items', { connection: parseQueueUrl(redis.url, {}).options, prefix: 'manus' });
  const batch = spawnCli(['batch', 'recipe.yaml', '--inputs', 'items.jsonl', '--queue', redis.url, '--ci'], { cwd: fixture, env: batchEnvironment(server) });
  let jobs: Awaited<ReturnType<typeof queue.getWaiting>> = [];
  await waitFor(() => {
    void queue.getWaiting().then((waiting) => (jobs = waiting));
    const folders = existsSync(join(fixture, '.manus', 'batches')) ? readdirSync(join(fixture, '.manus', 'batches')) : [];
    jobs = jobs.filter((job) => folders.includes(job.data.batchId));
    return jobs.length === items;
  }, 30_000, 'the jobs on the queue');
  return { queue, batch, jobs: [...jobs].sort((left, right) => left.data.index - right.data.index) };
}
