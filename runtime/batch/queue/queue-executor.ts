/**
 * A batch run on workers: its definition stored in Redis under its hash, its items enqueued as
 * BullMQ jobs, and each job followed until its result comes back, to be recorded once however
 * often it was tried. Events arrive compressed and go into the batch folder; events too large to
 * travel stay on the worker. Redis going away pauses the batch; it goes on when Redis is back.
 */
import type { BatchRecord } from '../batch-folder.js';
import type { ExecutorHooks, ItemExecutor, ItemWork } from '../batch-run.js';
import type { ItemRetryPolicy } from '../item-retry.js';
import type { RunDefinition } from '../run-definition.js';
import type { RecipeOverrides } from '../../config/resolve-recipe.js';
import type { RunStatus } from '../../run-status.js';
import { keyPrefix, queueName, type ItemJobProgress } from './queue-protocol.js';
import { QueueError } from './queue-error.js';
import { Follower } from './queue-follower.js';
import { parseQueueUrl } from './redis-connection.js';

export interface QueueExecutorSettings {
  url: string;
  environment: Record<string, string | undefined>;
  record: BatchRecord;
  definition: RunDefinition;
  overrides: RecipeOverrides;
  retry: ItemRetryPolicy;
  /** Where returned events are written, each run in a folder of its own. */
  resultsDirectory: string;
  /** The exit code the command gives an item that ended so without a worker's outcome. */
  exitCodeFor(result: { status: RunStatus; error?: { code: string } }): number;
}

export class QueueExecutor implements ItemExecutor {
  constructor(private readonly settings: QueueExecutorSettings) {}

  async run(work: ItemWork[], hooks: ExecutorHooks): Promise<void> {
    const connection = parseQueueUrl(this.settings.url, this.settings.environment);
    const [{ Queue, QueueEvents }, { Redis }] = await Promise.all([import('bullmq'), import('ioredis')]);
    const redis = new Redis(connection.options);
    // Events from the stream's present end, read before any job is added: a job finished before
    // the listener's first read is still heard of, not left to the next full sweep.
    const [newest] = await redis.xrevrange(`${keyPrefix}:${queueName}:events`, '+', '-', 'COUNT', 1).catch((error: Error) => {
      redis.disconnect();
      throw new QueueError(`the queue's Redis at ${connection.display} cannot be read: ${error.message}`, { cause: error });
    });
    const queue = new Queue(queueName, { connection: connection.options, prefix: keyPrefix });
    const events = new QueueEvents(queueName, { connection: connection.options, prefix: keyPrefix, lastEventId: newest?.[0] ?? '0-0' });
    const follower = new Follower(this.settings, hooks, redis, queue);
    let unreachable = false;
    const onError = (error: Error) => {
      if (unreachable) return;
      unreachable = true;
      hooks.notice(`the queue's Redis at ${connection.display} is unreachable (${error.message}); the batch is paused and goes on when it is back`);
    };
    const onReady = () => {
      if (!unreachable) return;
      unreachable = false;
      hooks.notice(`the queue's Redis at ${connection.display} is back; the batch goes on`);
      follower.lookAgain();
    };
    redis.on('error', onError);
    redis.on('ready', onReady);
    queue.on('error', onError);
    events.on('error', onError);
    events.on('progress', ({ jobId, data }) => follower.progressed(jobId, data as unknown as ItemJobProgress));
    events.on('completed', ({ jobId }) => void follower.look(jobId));
    events.on('failed', ({ jobId }) => void follower.look(jobId));
    try {
      try {
        await follower.enqueue(work);
      } catch (error) {
        throw new QueueError(`the queue's Redis at ${connection.display} did not take the batch's jobs: ${(error as Error).message}`, { cause: error });
      }
      await follower.follow();
    } finally {
      await Promise.allSettled([events.close(), queue.close()]);
      redis.disconnect();
    }
  }
}
