/**
 * A batch run on workers: the connection to the queue's Redis, the BullMQ queue and its events,
 * wired to the follower (./queue-follower.ts) that enqueues the items and records each result.
 * Redis away pauses the batch with a message, from its start on; an interrupt while it waits
 * ends the batch with nothing sent; a Redis that refuses the jobs ends it with a queue error.
 */
import type { ExecutorHooks, ItemExecutor, ItemWork } from '../batch-run.js';
import { keyPrefix, queueName } from './queue-protocol.js';
import { QueueError } from './queue-error.js';
import { Follower, type QueueExecutorSettings } from './queue-follower.js';
import { parseQueueUrl } from './redis-connection.js';

export type { QueueExecutorSettings } from './queue-follower.js';

export class QueueExecutor implements ItemExecutor {
  constructor(private readonly settings: QueueExecutorSettings) {}

  async run(work: ItemWork[], hooks: ExecutorHooks): Promise<void> {
    const connection = parseQueueUrl(this.settings.url, this.settings.environment);
    const [{ Queue, QueueEvents }, { Redis }] = await Promise.all([import('bullmq'), import('ioredis')]);
    const redis = new Redis(connection.options);
    let follower: Follower | undefined;
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
      follower?.lookAgain();
    };
    redis.on('error', onError);
    redis.on('ready', onReady);
    // Events from the stream's present end, read before any job is added: a job finished before
    // the listener's first read is still heard of, not left to the next full sweep. A Redis away
    // at the start is waited for, as later; an interrupt meanwhile ends the batch with nothing sent.
    const newest = await untilInterrupted(redis.xrevrange(`${keyPrefix}:${queueName}:events`, '+', '-', 'COUNT', 1), hooks.signal).catch((error: Error) => {
      redis.disconnect();
      throw new QueueError(`the queue's Redis at ${connection.display} cannot be read: ${error.message}`, { cause: error });
    });
    if (newest === undefined) {
      redis.disconnect();
      return;
    }
    const queue = new Queue(queueName, { connection: connection.options, prefix: keyPrefix });
    const events = new QueueEvents(queueName, { connection: connection.options, prefix: keyPrefix, lastEventId: newest[0]?.[0] ?? '0-0' });
    follower = new Follower(this.settings, hooks, redis, queue);
    const following = follower;
    queue.on('error', onError);
    events.on('error', onError);
    events.on('progress', ({ jobId, data }) => following.progressed(jobId, data));
    events.on('completed', ({ jobId }) => void following.look(jobId));
    events.on('failed', ({ jobId }) => void following.look(jobId));
    try {
      try {
        await following.enqueue(work);
      } catch (error) {
        await following.abandon();
        // A system call that failed (reading an item's events) is itself the error; Redis's is the queue's.
        if ((error as NodeJS.ErrnoException).syscall !== undefined) throw error;
        throw new QueueError(`the queue's Redis at ${connection.display} did not take the batch's jobs: ${(error as Error).message}`, { cause: error });
      }
      await following.follow().catch(async (error: unknown) => {
        await following.abandon();
        throw error;
      });
    } finally {
      await Promise.allSettled([events.close(), queue.close()]);
      redis.disconnect();
    }
  }
}

/** The promise's value, or undefined once `signal` is aborted first. */
function untilInterrupted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T | undefined> {
  if (signal.aborted) return Promise.resolve(undefined);
  return new Promise<T | undefined>((resolve, reject) => {
    const onAbort = () => resolve(undefined);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
