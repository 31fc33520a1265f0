/**
 * A worker: takes batch items from the queue and runs them in this process, with what this machine
 * has (its model endpoint and key, sandbox, browser, the user's config and the grants given on its
 * command line; never grants from the queue). What it runs comes from the job's definition, checked
 * against its hash. A job may ask for a model by name: the worker runs it only when its own user
 * offers that name, and resolves it as a run on this machine would; any other name fails the item.
 * A job taken over from a stopped or killed worker on this machine, or one that carries the events
 * of a run cut short, continues that run (./worker-resumption.ts). Results go back with the events
 * compressed, up to a cap.
 */
import { existsSync, realpathSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { gunzipSync, gzip } from 'node:zlib';
import type { Job } from 'bullmq';
import type { TrustGrant } from '../../../contract/trust-grants.js';
import type { ChatModel } from '../../../contract/model-types.js';
import { InterruptedError } from '../../../contract/errors.js';
import { useRateLimiterFactory } from '../../../services/model/rate-limiter.js';
import { isInside } from '../../../services/workspace-paths.js';
import { terminalText } from '../../../services/terminal-text.js';
import { runBatchItem, type ItemRunOutcome, type ItemRunRequest } from '../batch-item-run.js';
import { itemNumber } from '../item-number.js';
import { retryDelayFor } from '../item-retry.js';
import { materialiseRunDefinition, RunDefinitionError, type RunDefinition } from '../run-definition.js';
import { definitionKey, keyPrefix, queuedModel, queuedOverrides, queuedReplyCache, queueName, type ItemJobData, type QueuedOverrides, type ItemJobProgress, type ItemJobResult, type ReplyCacheCounts } from './queue-protocol.js';
import { RedisBatchBudget } from './redis-batch-budget.js';
import { parseQueueUrl } from './redis-connection.js';
import { RedisRateLimiter } from './redis-rate-limiter.js';
import { continuedRun, jobMarkerOf } from './worker-resumption.js';

const gzipAsync = promisify(gzip);

export interface QueueWorkerSettings {
  url: string;
  environment: Record<string, string | undefined>;
  concurrency: number;
  trust: TrustGrant[];
  runsDirectory: string;
  /** Where definitions are materialised, one folder per hash. */
  cacheDirectory: string;
  /** Compressed events larger than this stay on the worker. */
  eventsCapBytes: number;
  /** How long a killed worker's job stays locked before another worker takes it. */
  stallTimeoutMs: number;
  exitCodeFor: ItemRunRequest['exitCodeFor'];
  /**
   * The model names this machine's user offers to jobs that ask for one (profiles or model ids,
   * resolved here as `--model` resolves them); a job that names another fails.
   */
  models: readonly string[];
  /** This machine's cache of replies for one run of `model` (undefined: the recipe's own) as repeat `repeat`. */
  replyCache?(model: string | undefined, repeat: number): { wrapModel(model: ChatModel): ChatModel; counts: ReplyCacheCounts };
  /** Lines for the worker's log: items taken and finished, the queue unreachable and back. */
  log(message: string): void;
}

export interface RunningWorker {
  /** Stops taking jobs; running items are interrupted and handed back to the queue. */
  stop(): Promise<void>;
  /** Settles when the worker has stopped. */
  closed: Promise<void>;
}

export async function startQueueWorker(settings: QueueWorkerSettings): Promise<RunningWorker> {
  const connection = parseQueueUrl(settings.url, settings.environment);
  const [{ Worker, DelayedError, UnrecoverableError }, { Redis }] = await Promise.all([import('bullmq'), import('ioredis')]);
  const redis = new Redis(connection.options);
  const identity = { id: `${hostname()}-${process.pid}`, host: hostname(), pid: process.pid };
  // The profiles' rate limits hold across every worker on this queue.
  useRateLimiterFactory((limiterIdentity, limits) => new RedisRateLimiter(redis, limiterIdentity, limits));
  const budgets = new Map<string, { budget: RedisBatchBudget; users: number }>();
  const definitions = new Map<string, Promise<string>>();
  const running = new Map<string, AbortController>();
  let stopping = false;

  const definitionFolder = (hash: string) => {
    let folder = definitions.get(hash);
    if (!folder) {
      folder = (async () => {
        const stored = await redis.getBuffer(definitionKey(hash));
        if (!stored) throw new RunDefinitionError(`the run definition ${hash} is not in the queue's Redis (it expires a week after its batch last stored it)`);
        const definition = JSON.parse(gunzipSync(stored).toString('utf8')) as RunDefinition;
        // Its real path: a run's workspace is recorded relative to it.
        return realpathSync(materialiseRunDefinition(definition, hash, settings.cacheDirectory));
      })();
      definitions.set(hash, folder);
      folder.catch(() => definitions.delete(hash));
    }
    return folder;
  };
  const batchBudget = (data: ItemJobData) => {
    let entry = budgets.get(data.batchId);
    if (!entry) {
      entry = { budget: new RedisBatchBudget(redis, data.batchId, data.batchBudget), users: 0 };
      budgets.set(data.batchId, entry);
    }
    entry.users += 1;
    return {
      budget: entry.budget,
      release: () => {
        entry.users -= 1;
        if (entry.users === 0) {
          entry.budget.close();
          budgets.delete(data.batchId);
        }
      },
    };
  };

  const processJob = async (job: Job<ItemJobData, ItemJobResult>, token?: string): Promise<ItemJobResult> => {
    const { data } = job;
    const shared = batchBudget(data);
    try {
      await shared.budget.refresh();
      if (shared.budget.stopped) return { kind: 'skipped', reason: `the batch was stopped (${shared.budget.stopped})` };
      const exhausted = shared.budget.exhausted();
      if (exhausted) return { kind: 'skipped', reason: `the batch's ${exhausted} budget ran out` };
      const asked = queuedModel(data.model);
      if ('unreadable' in asked || (asked.model !== undefined && !settings.models.includes(asked.model))) {
        const outcome = modelNotOffered('model' in asked ? asked.model : undefined, identity.id, settings);
        settings.log(`item ${itemNumber(data.index)} of batch ${data.batchId}: not run: ${outcome.answer}`);
        return { kind: 'finished', outcome, worker: identity };
      }
      let cwd: string;
      let recipeFile: string;
      try {
        cwd = await definitionFolder(data.definitionHash);
        recipeFile = recipeInside(cwd, data.recipe);
      } catch (error) {
        // A definition that is missing, altered or names paths outside itself stays so: no retry.
        if (RunDefinitionError.isInstance(error)) throw new UnrecoverableError((error as Error).message);
        throw error;
      }
      const overrides = queuedOverrides(data.overrides);
      const abort = new AbortController();
      running.set(job.id!, abort);
      const offStop = shared.budget.onStop((reason) => {
        if (reason === 'interrupted') abort.abort(new InterruptedError('the batch was interrupted'));
      });
      settings.log(`item ${itemNumber(data.index)} of batch ${data.batchId}: started${job.attemptsStarted > 1 ? ` (attempt ${job.attemptsStarted})` : ''}`);
      const cached = queuedReplyCache(data.replyCache);
      const replies = cached ? settings.replyCache?.(asked.model, cached.repeat) : undefined;
      let continued: ReturnType<typeof continuedRun>;
      let outcome: ItemRunOutcome;
      try {
        continued = continuedRun(job.progress, data, cwd, settings);
        outcome = await runBatchItem({
          parameters: data.parameters,
          recipeFile,
          cwd,
          overrides: { ...overrides, ...(asked.model !== undefined ? { model: asked.model } : {}), trust: settings.trust, ...timeLeft(data, overrides) },
          ...(replies ? { wrapModel: replies.wrapModel } : {}),
          runsDirectory: settings.runsDirectory,
          environment: settings.environment,
          signal: abort.signal,
          sharedBudget: shared.budget,
          ...(continued ? { resumeFrom: continued.resumeFrom, resumeCwd: continued.resumeCwd } : {}),
          startDetails: { job: jobMarkerOf(data) },
          // What is continued runs with this job's recipe and settings; only its history is taken.
          resumeSettings: 'request',
          exitCodeFor: settings.exitCodeFor,
          onRunStart: (runId, runDirectory) => {
            const progress: ItemJobProgress = { runId, runDirectory, cwd, worker: identity };
            void job.updateProgress(progress as unknown as object).catch(() => undefined);
          },
        });
      } finally {
        offStop();
        running.delete(job.id!);
        continued?.release();
      }
      // A worker that is stopping hands the item back, to be continued where it stopped.
      if (stopping && outcome.status === 'interrupted' && !shared.budget.stopped && token) {
        await job.moveToDelayed(Date.now(), token);
        throw new DelayedError();
      }
      const delay = retryDelayFor(data.retry, outcome, job.attemptsMade + 1);
      if (delay !== undefined && !shared.budget.stopped) {
        settings.log(`item ${itemNumber(data.index)} of batch ${data.batchId}: ${outcome.status}; it is tried again`);
        throw new Error(`item ${itemNumber(data.index)} ended ${outcome.status}: ${outcome.answer}`);
      }
      settings.log(`item ${itemNumber(data.index)} of batch ${data.batchId}: ${outcome.status} (exit ${String(outcome.exitCode)})`);
      return { kind: 'finished', outcome, worker: identity, ...(await eventsOf(outcome.runDirectory, settings.eventsCapBytes)), ...(replies ? { replyCache: { ...replies.counts } } : {}) };
    } finally {
      shared.release();
    }
  };

  const worker = new Worker<ItemJobData, ItemJobResult>(queueName, processJob, {
    connection: connection.options,
    prefix: keyPrefix,
    concurrency: settings.concurrency,
    lockDuration: settings.stallTimeoutMs,
    stalledInterval: Math.max(500, Math.round(settings.stallTimeoutMs / 2)),
    // A worker killed mid-item hands it on; an item that kills every worker it meets is given up.
    maxStalledCount: 3,
  });
  let unreachable = false;
  const onError = (error: Error) => {
    if (unreachable) return;
    unreachable = true;
    settings.log(`the queue's Redis at ${connection.display} is unreachable (${error.message}); waiting for it to come back`);
  };
  redis.on('error', onError);
  worker.on('error', onError);
  redis.on('ready', () => {
    if (!unreachable) return;
    unreachable = false;
    settings.log(`the queue's Redis at ${connection.display} is back`);
  });
  let resolveClosed!: () => void;
  const closed = new Promise<void>((resolve) => {
    resolveClosed = resolve;
  });
  await worker.waitUntilReady();
  settings.log(`worker ${identity.id}: taking items from ${connection.display}, ${settings.concurrency} at a time`);
  return {
    async stop() {
      if (stopping) return closed;
      stopping = true;
      for (const controller of running.values()) controller.abort(new InterruptedError('the worker was stopped'));
      await worker.close();
      for (const { budget } of budgets.values()) budget.close();
      redis.disconnect();
      resolveClosed();
      return closed;
    },
    closed,
  };
}

/** The recipe a job names inside its definition's folder, refused when the path leads out of it. */
function recipeInside(folder: string, path: unknown): string {
  if (typeof path !== 'string' || resolve(folder, path) === folder || !isInside(folder, resolve(folder, path))) {
    throw new RunDefinitionError(`the job names the recipe outside its run definition: ${String(path)}; it was not run`);
  }
  return path;
}

/**
 * The outcome of a job that asks for a model this worker's user does not offer: the name is only
 * a name, so nothing the job says can choose an endpoint, a key or a setting of this machine.
 */
function modelNotOffered(model: string | undefined, workerId: string, settings: QueueWorkerSettings): ItemRunOutcome {
  const code = 'model_not_offered';
  const asked = model === undefined ? 'a model that is not a name' : `the model ${JSON.stringify(terminalText(model).slice(0, 200))}`;
  const offered = settings.models.length > 0 ? `it offers ${settings.models.join(', ')}` : 'it offers none';
  const message = `the item asks for ${asked}, which worker ${workerId} does not offer (${offered}; \`manus worker --models\` names the models a worker runs items with)`;
  return {
    status: 'error',
    exitCode: settings.exitCodeFor({ status: 'error', error: { code } }),
    answer: message,
    usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
    durationMs: 0,
    startedAt: new Date().toISOString(),
    error: { code, message },
  };
}

/** An item of a batch with a deadline gets no more time than the batch has left. */
function timeLeft(data: ItemJobData, overrides: QueuedOverrides): { maxTimeSeconds?: number } {
  if (typeof data.batchBudget?.deadline !== 'number') return {};
  const left = Math.max(0.001, (data.batchBudget.deadline - Date.now()) / 1000);
  return { maxTimeSeconds: overrides.maxTimeSeconds === undefined ? left : Math.min(overrides.maxTimeSeconds, left) };
}

/** Compressed off the main thread, so that the worker's other runs do not wait for it. */
async function eventsOf(runDirectory: string | undefined, capBytes: number): Promise<{ events?: string; eventsKept?: string }> {
  if (!runDirectory) return {};
  const file = join(runDirectory, 'events.jsonl');
  if (!existsSync(file)) return {};
  const compressed = await gzipAsync(await readFile(file));
  if (compressed.length > capBytes) return { eventsKept: `the events are ${compressed.length} bytes compressed, over the ${capBytes}-byte cap` };
  return { events: compressed.toString('base64') };
}
