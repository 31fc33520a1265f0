/**
 * A batch run on workers: its definition stored in Redis under its hash, its items enqueued as
 * BullMQ jobs, and each job followed until its result comes back, to be recorded once however
 * often it was tried. Events arrive compressed and go into the batch folder; events too large to
 * travel stay on the worker. Redis going away pauses the batch; it goes on when Redis is back.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import type { Job, Queue as BullQueue } from 'bullmq';
import type { Redis as RedisClient } from 'ioredis';
import type { BatchRecord } from '../batch-folder.js';
import type { ExecutorHooks, ItemExecutor, ItemWork } from '../batch-run.js';
import type { ItemRetryPolicy } from '../item-retry.js';
import type { RunDefinition } from '../run-definition.js';
import type { RecipeOverrides } from '../../config/resolve-recipe.js';
import { batchSpentKey, batchStopKey, definitionKey, definitionLifetimeSeconds, keyPrefix, queueName, type ItemJobData, type ItemJobProgress, type ItemJobResult } from './queue-protocol.js';
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
  /** The exit code the command gives an item no worker could finish. */
  exitCodeFor(result: { status: 'error'; error: { code: string } }): number;
}

/** How often the workers' spending and the batch's stop are looked at. */
const sweepIntervalMs = 1000;
/** How often every outstanding job is looked at, beside the events that usually say first. */
const fullSweepIntervalMs = 5000;
/** Control keys outlive the batch a day, so a late worker still sees that it stopped. */
const controlLifetimeSeconds = 24 * 60 * 60;

export class QueueExecutor implements ItemExecutor {
  constructor(private readonly settings: QueueExecutorSettings) {}

  async run(work: ItemWork[], hooks: ExecutorHooks): Promise<void> {
    const connection = parseQueueUrl(this.settings.url, this.settings.environment);
    const [{ Queue, QueueEvents }, { Redis }] = await Promise.all([import('bullmq'), import('ioredis')]);
    const redis = new Redis(connection.options);
    const queue = new Queue(queueName, { connection: connection.options, prefix: keyPrefix });
    const events = new QueueEvents(queueName, { connection: connection.options, prefix: keyPrefix });
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
      await follower.enqueue(work);
      await follower.follow();
    } finally {
      await Promise.allSettled([events.close(), queue.close()]);
      redis.disconnect();
    }
  }
}

/** The jobs of one session of a batch, from enqueueing to their last result. */
class Follower {
  private readonly outstanding = new Map<string, ItemWork>();
  private readonly startedJobs = new Set<string>();
  private readonly looking = new Set<string>();
  private stopSent = false;
  private wake: (() => void) | undefined;
  private reportedSpent = { tokens: 0, cost: 0 };
  private lastFullSweep = -Infinity;

  constructor(
    private readonly settings: QueueExecutorSettings,
    private readonly hooks: ExecutorHooks,
    private readonly redis: RedisClient,
    private readonly queue: BullQueue,
  ) {}

  async enqueue(work: ItemWork[]): Promise<void> {
    const { record, definition, retry } = this.settings;
    // The definition first: a worker that takes a job finds what it names.
    await this.redis.set(definitionKey(definition.hash), gzipSync(JSON.stringify(definition)), 'EX', definitionLifetimeSeconds);
    await this.redis.del(batchStopKey(record.id));
    this.reportedSpent = { tokens: record.totals.totalTokens, cost: record.totals.cost ?? 0 };
    await this.redis.multi()
      .del(batchSpentKey(record.id))
      .hset(batchSpentKey(record.id), { tokens: this.reportedSpent.tokens, cost: this.reportedSpent.cost })
      .expire(batchSpentKey(record.id), controlLifetimeSeconds)
      .exec();
    // Jobs an earlier session of the batch left (its process was killed): their results are taken
    // as they come, rather than the items run again.
    const earlierSession = record.settings.queueSession;
    const fresh: ItemWork[] = [];
    for (const item of work) {
      const earlierJob = earlierSession ? await this.queue.getJob(`${record.id}-${earlierSession}-${item.index}`) : undefined;
      const state = earlierJob ? await earlierJob.getState() : 'unknown';
      if (earlierJob && ['completed', 'active', 'waiting', 'delayed', 'prioritized'].includes(state)) this.outstanding.set(earlierJob.id!, item);
      else fresh.push(item);
    }
    // A session of its own in each job id: a resumed batch's jobs are new jobs, not the finished ones.
    const session = randomBytes(3).toString('hex');
    record.settings.queueSession = session;
    this.hooks.saveRecord();
    const deadline = record.budgets.maxTimeSeconds === undefined ? undefined : Date.now() + record.budgets.maxTimeSeconds * 1000;
    const { parameters: _fixed, model: _model, sandbox: _sandbox, trust: _trust, ...budgets } = this.settings.overrides;
    const jobs = fresh.map((item) => {
      const jobId = `${record.id}-${session}-${item.index}`;
      this.outstanding.set(jobId, item);
      const data: ItemJobData = {
        batchId: record.id,
        index: item.index,
        parameters: item.parameters,
        definitionHash: definition.hash,
        recipe: definition.recipe,
        // The item's budgets and fixed parameters travel; the grants, model and sandbox are the worker's.
        overrides: { ...budgets, parameters: this.settings.overrides.parameters },
        batchBudget: { tokens: record.budgets.maxTokens, cost: record.budgets.maxCost, deadline },
        retry,
      };
      return { name: 'item', data, opts: { jobId, attempts: 1 + Math.max(retry.providerRetries, retry.retries), backoff: { type: 'exponential', delay: retry.baseDelayMs }, removeOnComplete: false, removeOnFail: false } };
    });
    for (let start = 0; start < jobs.length; start += 500) await this.queue.addBulk(jobs.slice(start, start + 500));
  }

  /** Until every job has a result, or was taken back before a worker started it. */
  async follow(): Promise<void> {
    const onInterrupt = () => this.wakeUp();
    this.hooks.signal.addEventListener('abort', onInterrupt, { once: true });
    try {
      while (this.outstanding.size > 0) {
        await this.sweep().catch(() => undefined);
        if (this.outstanding.size === 0) break;
        await new Promise<void>((resolve) => {
          this.wake = resolve;
          setTimeout(resolve, sweepIntervalMs);
        });
      }
      // What the last items spent, so the batch knows whether its budget ran out.
      await this.followSpending().catch(() => undefined);
    } finally {
      this.hooks.signal.removeEventListener('abort', onInterrupt);
    }
  }

  progressed(jobId: string, progress: ItemJobProgress): void {
    const item = this.outstanding.get(jobId);
    if (!item || !progress?.runId) return;
    this.startedJobs.add(jobId);
    this.hooks.started(item.index, { runId: progress.runId, runDirectory: progress.runDirectory, worker: progress.worker });
  }

  /** Looks at one job now (an event said it ended). */
  async look(jobId: string): Promise<void> {
    if (!this.outstanding.has(jobId) || this.looking.has(jobId)) return;
    this.looking.add(jobId);
    try {
      const job = await this.queue.getJob(jobId);
      if (job) await this.settle(jobId, job);
      else this.taken(jobId);
    } catch {
      // Redis is away; the next sweep looks again.
    } finally {
      this.looking.delete(jobId);
      if (this.outstanding.size === 0) this.wakeUp();
    }
  }

  private async sweep(): Promise<void> {
    await this.followSpending();
    if (!this.stopSent && !this.hooks.mayStart()) await this.sendStop();
    if (performance.now() - this.lastFullSweep < fullSweepIntervalMs) return;
    this.lastFullSweep = performance.now();
    for (const jobId of [...this.outstanding.keys()]) await this.look(jobId);
  }

  /** Looks at every job at the next sweep: events may have been missed while Redis was away. */
  lookAgain(): void {
    this.lastFullSweep = -Infinity;
    this.wakeUp();
  }

  /** What every worker spent, from Redis, so the batch budget sees it as it goes. */
  private async followSpending(): Promise<void> {
    const spent = await this.redis.hgetall(batchSpentKey(this.settings.record.id));
    const tokens = Number(spent.tokens ?? 0);
    const cost = Number(spent.cost ?? 0);
    const delta = { tokens: tokens - this.reportedSpent.tokens, cost: cost - this.reportedSpent.cost };
    if (delta.tokens <= 0 && delta.cost <= 0) return;
    this.reportedSpent = { tokens, cost };
    this.hooks.budget.spend({ usage: { promptTokens: 0, completionTokens: 0, totalTokens: Math.max(0, delta.tokens) }, cost: Math.max(0, delta.cost) });
  }

  /** Tells workers to start no more of the batch's jobs (and, when interrupted, to stop those running), and takes back the waiting ones. */
  private async sendStop(): Promise<void> {
    const reason = this.hooks.signal.aborted ? 'interrupted' : 'budget-exhausted';
    await this.redis.set(batchStopKey(this.settings.record.id), reason, 'EX', controlLifetimeSeconds);
    this.stopSent = true;
    for (const jobId of [...this.outstanding.keys()]) {
      if (this.startedJobs.has(jobId)) continue;
      const job = await this.queue.getJob(jobId);
      const state = job ? await job.getState() : 'unknown';
      if (state === 'waiting' || state === 'delayed' || state === 'prioritized' || state === 'unknown') {
        await job?.remove().catch(() => undefined);
        this.taken(jobId);
      }
    }
  }

  private async settle(jobId: string, job: Job): Promise<void> {
    const state = await job.getState();
    if (state === 'active' && !this.startedJobs.has(jobId) && isProgress(job.progress)) this.progressed(jobId, job.progress);
    if (state === 'completed') {
      this.record(jobId, job, job.returnvalue as ItemJobResult);
      await job.remove().catch(() => undefined);
    } else if (state === 'failed') {
      this.recordFailure(jobId, job);
      await job.remove().catch(() => undefined);
    }
  }

  private record(jobId: string, job: Job, result: ItemJobResult): void {
    const item = this.outstanding.get(jobId);
    if (!item) return;
    this.outstanding.delete(jobId);
    if (result.kind === 'skipped') return;
    const { outcome, worker } = result;
    const attempts = Math.max(1, job.attemptsStarted ?? job.attemptsMade);
    if (result.events !== undefined && outcome.runId) {
      const folder = join(this.settings.resultsDirectory, outcome.runId);
      mkdirSync(folder, { recursive: true });
      writeFileSync(join(folder, 'events.jsonl'), gunzipSync(Buffer.from(result.events, 'base64')));
      this.hooks.finished(item.index, { ...outcome, runDirectory: folder, worker, events: { stored: 'local', path: join(folder, 'events.jsonl') }, attempts });
      return;
    }
    const workerPath = outcome.runDirectory;
    this.hooks.finished(item.index, { ...outcome, worker, attempts, ...(workerPath ? { runDirectory: workerPath, events: { stored: 'worker', path: join(workerPath, 'events.jsonl') } } : {}) });
  }

  /** A job BullMQ gave up on: its worker kept dying on it, or could not run it at all. */
  private recordFailure(jobId: string, job: Job): void {
    const item = this.outstanding.get(jobId);
    if (!item) return;
    this.outstanding.delete(jobId);
    const message = `no worker could finish the item: ${job.failedReason || 'it failed'} (after ${Math.max(1, job.attemptsStarted ?? job.attemptsMade)} attempt(s))`;
    this.hooks.finished(item.index, {
      status: 'error',
      exitCode: this.settings.exitCodeFor({ status: 'error', error: { code: 'worker_failed' } }),
      answer: message,
      usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
      durationMs: job.finishedOn && job.processedOn ? job.finishedOn - job.processedOn : 0,
      startedAt: new Date(job.processedOn ?? job.timestamp).toISOString(),
      error: { code: 'worker_failed', message },
      attempts: Math.max(1, job.attemptsStarted ?? job.attemptsMade),
    });
  }

  /** A job removed before a worker started it: its item stays pending. */
  private taken(jobId: string): void {
    this.outstanding.delete(jobId);
  }

  private wakeUp(): void {
    this.wake?.();
  }
}

function isProgress(value: unknown): value is ItemJobProgress {
  return typeof value === 'object' && value !== null && typeof (value as ItemJobProgress).runId === 'string';
}
