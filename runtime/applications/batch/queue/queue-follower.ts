/**
 * The jobs of one session of a queued batch, from enqueueing to their last result: each item's
 * outcome recorded once however often it was tried, the workers' spending followed, the batch's
 * stop sent, and jobs a Redis lost enqueued again.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import type { Job, Queue as BullQueue } from 'bullmq';
import type { Redis as RedisClient } from 'ioredis';
import type { ExecutorHooks, ItemWork } from '../batch-run.js';
import { itemNumber } from '../item-number.js';
import { batchSpentKey, batchStopKey, definitionKey, definitionLifetimeSeconds, readItemJobResult, readWorker, resumeEventsCapBytes, safeRunId, type ItemJobData, type ItemJobProgress, type ItemJobResult, type ReplyCacheCounts } from './queue-protocol.js';
import type { BatchRecord } from '../batch-folder.js';
import type { ItemRetryPolicy } from '../item-retry.js';
import type { RunDefinition } from '../run-definition.js';
import type { RecipeOverrides } from '../../../runs/recipe/resolve-recipe.js';
import type { RunStatus } from '../../../runs/run-status.js';

/** What a queued batch is run with: the executor's settings, which its follower reads. */
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
  /** What one item's job asks beside the batch's settings: its own model, and its repeat for the workers' reply caches. */
  itemRequest?(item: ItemWork): Pick<ItemJobData, 'model' | 'replyCache'>;
  /** Told, for each run, how many replies a worker's cache gave and how many it asked for. */
  replyCacheCounted?(counts: ReplyCacheCounts): void;
}

/** How often the workers' spending and the batch's stop are looked at. */
const sweepIntervalMs = 1000;
/** How often every outstanding job is looked at, beside the events that usually say first. */
const fullSweepIntervalMs = 5000;
/** Control keys outlive the batch a day, so a late worker still sees that it stopped. */
const controlLifetimeSeconds = 24 * 60 * 60;
/** Returned events are refused past this size, decompressed. */
const returnedEventsLimitBytes = 512 * 1024 * 1024;
/** How long a batch ending in error waits for Redis to take its stop. */
const abandonWaitMs = 2000;
/** A job that has gone from Redis while it was followed is enqueued again this many times at most. */
const lostJobRequeues = 3;

/** What one look at a job found: its state, read before the job so a completed job holds its result. */
interface JobSeen {
  state: Awaited<ReturnType<BullQueue['getJobState']>>;
  job: Job | undefined;
}

export class Follower {
  /** Each job still owed an outcome, with the data it was enqueued with. */
  private readonly outstanding = new Map<string, { item: ItemWork; data: ItemJobData }>();
  private readonly startedJobs = new Set<string>();
  /** The run and worker each started job was last said to be in. */
  private readonly announced = new Map<string, string>();
  private readonly looking = new Set<string>();
  private readonly requeues = new Map<string, number>();
  private stopSent = false;
  private wake: (() => void) | undefined;
  private reportedSpent = { tokens: 0, cost: 0 };
  private lastFullSweep = -Infinity;
  /** A fault that is not Redis being away (the batch folder cannot be written): it ends the batch. */
  private fault: unknown;
  /** Which item's events each run folder under the results holds, for those written or continued in this session. */
  private readonly eventsOwners = new Map<string, number>();

  constructor(
    private readonly settings: QueueExecutorSettings,
    private readonly hooks: ExecutorHooks,
    private readonly redis: RedisClient,
    private readonly queue: BullQueue,
  ) {}

  async enqueue(work: ItemWork[]): Promise<void> {
    const { record } = this.settings;
    // The definition first: a worker that takes a job finds what it names.
    await this.storeDefinition();
    await this.redis.del(batchStopKey(record.id));
    this.reportedSpent = { tokens: record.totals.totalTokens, cost: record.totals.cost ?? 0 };
    await this.redis.multi()
      .del(batchSpentKey(record.id))
      .hset(batchSpentKey(record.id), { tokens: this.reportedSpent.tokens, cost: this.reportedSpent.cost })
      .expire(batchSpentKey(record.id), controlLifetimeSeconds)
      .exec();
    // Jobs earlier sessions of the batch left (their process was killed): their results are taken
    // as they come, rather than the items run again; not for an item whose outcome a session
    // recorded already, whose job is only left over.
    const earlierSessions = record.settings.queueSessions ?? (record.settings.queueSession ? [record.settings.queueSession] : []);
    const fresh: ItemWork[] = [];
    for (const item of work) {
      const earlierJob = item.endedBefore ? undefined : await this.earlierJobOf(item, earlierSessions);
      if (earlierJob) this.outstanding.set(earlierJob.id!, { item, data: earlierJob.data as ItemJobData });
      else fresh.push(item);
    }
    // A session of its own in each job id: a resumed batch's jobs are new jobs, not the finished ones.
    const session = randomBytes(3).toString('hex');
    record.settings.queueSession = session;
    record.settings.queueSessions = [...earlierSessions, session];
    this.hooks.saveRecord();
    const deadline = record.budgets.maxTimeSeconds === undefined ? undefined : Date.now() + record.budgets.maxTimeSeconds * 1000;
    for (const item of work) if (item.resumeFrom) this.eventsOwners.set(basename(item.resumeFrom), item.index);
    const jobs = fresh.map((item) => {
      const jobId = `${record.id}-${session}-${item.index}`;
      const data = { ...this.jobData(item, deadline), ...this.resumeOf(item) };
      this.outstanding.set(jobId, { item, data });
      return { name: 'item', data, opts: this.jobOptions(jobId) };
    });
    for (let start = 0; start < jobs.length; start += 500) await this.queue.addBulk(jobs.slice(start, start + 500));
  }

  /** The newest job an earlier session left for the item that is still to end, or already ended unrecorded. */
  private async earlierJobOf(item: ItemWork, sessions: readonly string[]): Promise<Job | undefined> {
    for (const session of [...sessions].reverse()) {
      const { state, job } = await this.see(`${this.settings.record.id}-${session}-${item.index}`);
      if (job && ['completed', 'active', 'waiting', 'delayed', 'prioritized'].includes(state)) return job;
    }
    return undefined;
  }

  private jobData(item: ItemWork, deadline: number | undefined): ItemJobData {
    const { record, definition, retry, overrides } = this.settings;
    const { parameters: _fixed, model: batchModel, sandbox: _sandbox, trust: _trust, ...budgets } = overrides;
    const own = this.settings.itemRequest?.(item) ?? {};
    const model = own.model ?? batchModel;
    return {
      batchId: record.id,
      index: item.index,
      parameters: item.parameters,
      definitionHash: definition.hash,
      recipe: definition.recipe,
      // The item's budgets and fixed parameters travel; the grants and sandbox are the worker's, and
      // the model only a name, which the worker runs only when its own user offers it.
      overrides: { ...budgets, parameters: overrides.parameters },
      batchBudget: { tokens: record.budgets.maxTokens, cost: record.budgets.maxCost, deadline },
      retry,
      ...(model !== undefined ? { model } : {}),
      ...(own.replyCache ? { replyCache: own.replyCache } : {}),
    };
  }

  /** An item cut short in an earlier session continues from its events, on whichever worker takes it. */
  private resumeOf(item: ItemWork): Pick<ItemJobData, 'resume'> {
    if (!item.resumeFrom) return {};
    const events = gzipSync(readFileSync(join(item.resumeFrom, 'events.jsonl')));
    if (events.length > resumeEventsCapBytes) {
      this.hooks.notice(`item ${itemNumber(item.index)}'s events are ${events.length} bytes compressed, over the ${resumeEventsCapBytes}-byte cap a job carries; it starts again`);
      return {};
    }
    return { resume: { runId: basename(item.resumeFrom), events: events.toString('base64') } };
  }

  private jobOptions(jobId: string) {
    const { retry } = this.settings;
    return { jobId, attempts: 1 + Math.max(retry.providerRetries, retry.retries), backoff: { type: 'exponential', delay: retry.baseDelayMs }, removeOnComplete: false, removeOnFail: false };
  }

  private async storeDefinition(): Promise<void> {
    const { definition } = this.settings;
    await this.redis.set(definitionKey(definition.hash), gzipSync(JSON.stringify(definition)), 'EX', definitionLifetimeSeconds);
  }

  /** Until every job has a result, or was taken back before a worker started it. */
  async follow(): Promise<void> {
    const onInterrupt = () => this.wakeUp();
    this.hooks.signal.addEventListener('abort', onInterrupt, { once: true });
    try {
      while (this.outstanding.size > 0 && this.fault === undefined) {
        await this.sweep().catch(() => undefined);
        if (this.outstanding.size === 0 || this.fault !== undefined) break;
        await new Promise<void>((resolve) => {
          this.wake = resolve;
          setTimeout(resolve, sweepIntervalMs);
        });
      }
      if (this.fault !== undefined) throw this.fault;
      // What the last items spent, so the batch knows whether its budget ran out.
      await this.followSpending().catch(() => undefined);
    } finally {
      this.hooks.signal.removeEventListener('abort', onInterrupt);
    }
  }

  /**
   * A job's progress, as Redis holds it: only a run id that names a folder of its own and a worker
   * of the right shape are taken. The worker's run folder is a path on the worker: the item's line
   * names the worker, not the path. A fault writing the line ends the batch.
   */
  progressed(jobId: string, progress: unknown): void {
    const entry = this.outstanding.get(jobId);
    const given = typeof progress === 'object' && progress !== null ? progress as Partial<Record<keyof ItemJobProgress, unknown>> : {};
    const worker = readWorker(given.worker);
    if (!entry || typeof given.runId !== 'string' || !safeRunId.test(given.runId) || !worker) return;
    // Said once for each run a worker starts the item in.
    const place = `${given.runId} ${worker.id}`;
    if (this.announced.get(jobId) === place) return;
    try {
      this.hooks.started(entry.item.index, { runId: given.runId, worker });
      this.announced.set(jobId, place);
      this.startedJobs.add(jobId);
    } catch (error) {
      this.fault ??= error;
      this.wakeUp();
    }
  }

  /** Tells workers to stop the batch's items, as for an interrupt: the batch ends in error without following them. */
  async abandon(): Promise<void> {
    const stop = this.redis.set(batchStopKey(this.settings.record.id), 'interrupted', 'EX', controlLifetimeSeconds).catch(() => undefined);
    // A Redis that does not answer is not waited for: the batch is ending anyway.
    await Promise.race([stop, new Promise((resolve) => setTimeout(resolve, abandonWaitMs).unref())]);
  }

  /** Looks at one job now (an event said it ended). */
  async look(jobId: string): Promise<void> {
    if (!this.outstanding.has(jobId) || this.looking.has(jobId)) return;
    this.looking.add(jobId);
    try {
      let seen: JobSeen;
      try {
        seen = await this.see(jobId);
      } catch {
        // Redis is away; the next sweep looks again.
        return;
      }
      await this.settle(jobId, seen);
    } catch (error) {
      this.fault ??= error;
    } finally {
      this.looking.delete(jobId);
      if (this.outstanding.size === 0 || this.fault !== undefined) this.wakeUp();
    }
  }

  /**
   * The state first, then the job: a job read first could complete before its state is asked for,
   * and would then seem completed without the result it was read without.
   */
  private async see(jobId: string): Promise<JobSeen> {
    const state = await this.queue.getJobState(jobId);
    const job = await this.queue.getJob(jobId);
    return { state, job };
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
    for (const jobId of [...this.outstanding.keys()]) {
      const { state, job } = await this.see(jobId);
      if (state !== 'waiting' && state !== 'delayed' && state !== 'prioritized' && state !== 'unknown') continue;
      const started = this.startedJobs.has(jobId);
      // A started job gone from Redis is for the sweep to find lost.
      if (!job && started) continue;
      await job?.remove().catch(() => undefined);
      // Handed back by a stopped worker, it ends as the batch does; never started, it stays pending.
      if (job && started) this.recordSkipped(jobId, job, 'the batch was stopped before a worker took it up again');
      else this.outstanding.delete(jobId);
    }
    // Only once every waiting job is taken back: a sweep that failed half way tries again.
    this.stopSent = true;
  }

  private async settle(jobId: string, { state, job }: JobSeen): Promise<void> {
    if (state === 'completed' || state === 'failed' || state === 'unknown') {
      if (!job) return this.lost(jobId);
      // A job whose state is unknown but whose data is there is between two of BullMQ's lists.
      if (state === 'unknown') return;
    }
    if (!job) return;
    if (state === 'active') this.progressed(jobId, job.progress);
    if (state === 'completed') {
      const result = readItemJobResult(job.returnvalue);
      if (result) this.record(jobId, job, result);
      else this.recordFailure(jobId, job, 'its worker returned a result the batch cannot read');
      await job.remove().catch(() => undefined);
    } else if (state === 'failed') {
      this.recordFailure(jobId, job, job.failedReason || 'it failed');
      await job.remove().catch(() => undefined);
    }
  }

  /** Records a result; the job leaves the list only once its outcome is written. */
  private record(jobId: string, job: Job, result: ItemJobResult): void {
    const entry = this.outstanding.get(jobId);
    if (!entry) return;
    if (result.kind === 'skipped') return this.recordSkipped(jobId, job, result.reason);
    const { outcome, worker } = result;
    const attempts = Math.max(1, job.attemptsStarted ?? job.attemptsMade);
    if (result.events !== undefined && outcome.runId) {
      let events: Buffer;
      try {
        events = gunzipSync(Buffer.from(result.events, 'base64'), { maxOutputLength: returnedEventsLimitBytes });
      } catch (error) {
        return this.recordFailure(jobId, job, `its worker returned events the batch cannot read (${(error as Error).message})`);
      }
      const folder = join(this.settings.resultsDirectory, outcome.runId);
      const file = join(folder, 'events.jsonl');
      const owner = this.eventsOwners.get(outcome.runId);
      // Another item's run id would put this item's events over that item's; the same events
      // again (a batch killed as it recorded them) are the same run's.
      if ((owner !== undefined && owner !== entry.item.index) || (owner === undefined && existsSync(folder) && !(existsSync(file) && readFileSync(file).equals(events)))) {
        return this.recordFailure(jobId, job, `its worker returned the run id ${outcome.runId}, which is another item's`);
      }
      mkdirSync(folder, { recursive: true });
      writeFileSync(file, events);
      this.eventsOwners.set(outcome.runId, entry.item.index);
      this.hooks.finished(entry.item.index, { ...outcome, runDirectory: folder, worker, events: { stored: 'local', path: join(folder, 'events.jsonl') }, attempts });
    } else {
      const workerPath = outcome.runDirectory;
      this.hooks.finished(entry.item.index, { ...outcome, worker, attempts, ...(workerPath ? { runDirectory: workerPath, events: { stored: 'worker', path: join(workerPath, 'events.jsonl') } } : {}) });
    }
    if (result.replyCache) this.settings.replyCacheCounted?.(result.replyCache);
    this.outstanding.delete(jobId);
  }

  /**
   * A job a worker returned unrun, the batch being stopped: an item that had not started stays
   * pending; one that had (handed back by a stopped worker, then skipped) ends as the batch did,
   * so that no item is left running.
   */
  private recordSkipped(jobId: string, job: Job, reason: string): void {
    if (!this.startedJobs.has(jobId)) {
      this.outstanding.delete(jobId);
      return;
    }
    const status = this.hooks.signal.aborted ? 'interrupted' : 'budget-exhausted';
    const entry = this.outstanding.get(jobId)!;
    this.hooks.finished(entry.item.index, {
      status,
      exitCode: this.settings.exitCodeFor({ status }),
      answer: `not finished: ${reason}`,
      usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
      durationMs: job.finishedOn && job.processedOn ? job.finishedOn - job.processedOn : 0,
      startedAt: new Date(job.processedOn ?? job.timestamp).toISOString(),
      attempts: Math.max(1, job.attemptsStarted ?? job.attemptsMade),
    });
    this.outstanding.delete(jobId);
  }

  /** A job BullMQ gave up on (its worker kept dying on it, or could not run it at all), or whose result cannot be read. */
  private recordFailure(jobId: string, job: Job, reason: string): void {
    const attempts = Math.max(1, job.attemptsStarted ?? job.attemptsMade);
    this.recordError(jobId, 'worker_failed', `no worker could finish the item: ${reason} (after ${attempts} attempt(s))`, {
      attempts,
      durationMs: job.finishedOn && job.processedOn ? job.finishedOn - job.processedOn : 0,
      startedAt: new Date(job.processedOn ?? job.timestamp).toISOString(),
    });
  }

  private recordError(jobId: string, code: string, message: string, timing: { attempts: number; durationMs: number; startedAt: string }): void {
    const entry = this.outstanding.get(jobId);
    if (!entry) return;
    this.hooks.finished(entry.item.index, {
      status: 'error',
      exitCode: this.settings.exitCodeFor({ status: 'error', error: { code } }),
      answer: message,
      usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
      error: { code, message },
      ...timing,
    });
    this.outstanding.delete(jobId);
  }

  /**
   * A job gone from Redis before the batch took its result: Redis came back without its data, or
   * someone removed it. While the batch goes on it is enqueued again (what the run is goes with
   * it, and what the batch has spent); a batch that is stopping leaves the item for `batch resume`.
   */
  private async lost(jobId: string): Promise<void> {
    const entry = this.outstanding.get(jobId);
    if (!entry) return;
    const requeued = this.requeues.get(jobId) ?? 0;
    const started = this.startedJobs.has(jobId);
    if (this.stopSent || requeued >= lostJobRequeues) {
      if (!started) {
        this.outstanding.delete(jobId);
        return;
      }
      const message = `the item's job is no longer on the queue${requeued > 0 ? ` (it was enqueued again ${requeued} time(s))` : ''}; \`manus batch resume\` runs it again`;
      this.recordError(jobId, 'job_lost', message, { attempts: 1 + requeued, durationMs: 0, startedAt: new Date().toISOString() });
      return;
    }
    try {
      await this.storeDefinition();
      await this.redis.multi()
        .hsetnx(batchSpentKey(this.settings.record.id), 'tokens', String(this.reportedSpent.tokens))
        .hsetnx(batchSpentKey(this.settings.record.id), 'cost', String(this.reportedSpent.cost))
        .expire(batchSpentKey(this.settings.record.id), controlLifetimeSeconds)
        .exec();
      await this.queue.add('item', entry.data, this.jobOptions(jobId));
    } catch {
      // Redis is away again; the next sweep finds the job still missing.
      return;
    }
    this.requeues.set(jobId, requeued + 1);
    this.startedJobs.delete(jobId);
    this.announced.delete(jobId);
    this.hooks.notice(`item ${itemNumber(entry.item.index)}'s job was no longer on the queue's Redis (did it restart without its data?); it is enqueued again`);
  }

  private wakeUp(): void {
    this.wake?.();
  }
}
