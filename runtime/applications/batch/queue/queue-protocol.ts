/**
 * What a queued batch and its workers agree on: the queue's name, the Redis keys beside it, and
 * the shape of a job and of its result. A job says what to run (the definition's hash, the item's
 * parameters and budgets, the name of the model it asks for); never the user's grants, keys,
 * endpoints or environment, which are the worker's.
 */
import type { RecipeOverrides } from '../../../runs/recipe/resolve-recipe.js';
import type { ItemRunOutcome } from '../batch-item-run.js';
import type { BatchItemRecord } from '../batch-folder.js';
import type { ItemRetryPolicy } from '../item-retry.js';
import type { CheckResult } from '../../../config/check-types.js';
import { isRunStatus } from '../../../runs/run-status.js';

export const queueName = 'manus-batch-items';
/** BullMQ's keys and ours share one prefix, so one Redis can hold other applications' queues too. */
export const keyPrefix = 'manus';

export const definitionKey = (hash: string) => `${keyPrefix}:definition:${hash}`;
export const batchStopKey = (batchId: string) => `${keyPrefix}:batch:${batchId}:stop`;
export const batchSpentKey = (batchId: string) => `${keyPrefix}:batch:${batchId}:spent`;
export const rateBucketKey = (identity: string) => `${keyPrefix}:rate:${identity}`;

/** Definitions stay a week after a batch last stored them. */
export const definitionLifetimeSeconds = 7 * 24 * 60 * 60;

/** The item settings a job carries: budgets and fixed parameters, nothing the machine decides. */
export type QueuedOverrides = Pick<RecipeOverrides, 'parameters' | 'maxSteps' | 'maxTokens' | 'maxCost' | 'maxTimeSeconds'>;

const queuedBudgets = ['maxSteps', 'maxTokens', 'maxCost', 'maxTimeSeconds'] as const;

/**
 * The settings a worker takes from a job, read from whatever the job holds: only budgets and
 * parameters, so a job that also names a sandbox, a model, grants or MCP servers changes nothing.
 */
export function queuedOverrides(value: unknown): QueuedOverrides {
  const given = typeof value === 'object' && value !== null ? value as Record<string, unknown> : {};
  const overrides: QueuedOverrides = {};
  for (const name of queuedBudgets) {
    const budget = given[name];
    if (typeof budget === 'number' && Number.isFinite(budget) && budget > 0) overrides[name] = budget;
  }
  if (typeof given.parameters === 'object' && given.parameters !== null) {
    overrides.parameters = Object.fromEntries(Object.entries(given.parameters).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
  }
  return overrides;
}

export interface ItemJobData {
  batchId: string;
  index: number;
  parameters: Record<string, string>;
  definitionHash: string;
  /** The recipe's path inside the definition. */
  recipe: string;
  overrides: QueuedOverrides;
  /** The batch's own budgets, shared by every worker through Redis; the deadline in epoch milliseconds. */
  batchBudget: { tokens?: number; cost?: number; deadline?: number };
  retry: ItemRetryPolicy;
  /** An earlier run of the item that was cut short, to continue from: its id and its events gzipped, base64. */
  resume?: { runId: string; events: string };
  /**
   * The model profile or model id the item asks for, by name only: the worker runs it only when
   * its own user offers that name (`manus worker --models`), resolved against its own configuration.
   */
  model?: string;
  /** The item's replies come from, and go to, the worker's cache of replies, as this repeat of its cell. */
  replyCache?: { repeat: number };
}

/** What a worker makes of a job's model: none asked for, a name, or a value that is no name. */
export function queuedModel(value: unknown): { model?: string } | { unreadable: true } {
  if (value === undefined) return {};
  return typeof value === 'string' && value.length > 0 ? { model: value } : { unreadable: true };
}

/** A job's reply cache request, when it is one: a whole repeat index. */
export function queuedReplyCache(value: unknown): { repeat: number } | undefined {
  const repeat = isRecord(value) ? value.repeat : undefined;
  return typeof repeat === 'number' && Number.isSafeInteger(repeat) && repeat >= 0 ? { repeat } : undefined;
}

export interface ReplyCacheCounts {
  hits: number;
  misses: number;
}

/** Events a job carries to continue a run from, compressed; a run whose events are larger starts again. */
export const resumeEventsCapBytes = 4 * 1024 * 1024;

/** Where a worker is running an item, as its progress tells the batch. */
export interface ItemJobProgress {
  runId: string;
  runDirectory: string;
  /** The folder the run was started in (the definition's), which its workspace path is relative to. */
  cwd: string;
  worker: NonNullable<BatchItemRecord['worker']>;
}

export type ItemJobResult =
  | { kind: 'skipped'; reason: string }
  | {
    kind: 'finished';
    outcome: ItemRunOutcome;
    worker: NonNullable<BatchItemRecord['worker']>;
    /** The run's events.jsonl gzipped and base64-encoded, when it fits the cap. */
    events?: string;
    /** Why the events stayed on the worker, when they did. */
    eventsKept?: string;
    /** How many of the run's replies the worker's cache gave, and how many it asked the model for. */
    replyCache?: ReplyCacheCounts;
  };

/** A run id that can only name a folder of its own. */
export const safeRunId = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/**
 * A job's return value as a result, or undefined when it is not one. The batch checks what comes
 * back before it takes an item off its list, and takes only the fields a result has, copied: an
 * outcome cannot name another item, other parameters or events of its own, and its events are
 * written only under a run id that names a folder of its own.
 */
export function readItemJobResult(value: unknown): ItemJobResult | undefined {
  if (!isRecord(value)) return undefined;
  if (value.kind === 'skipped') return typeof value.reason === 'string' ? { kind: 'skipped', reason: value.reason } : undefined;
  if (value.kind !== 'finished') return undefined;
  const outcome = readOutcome(value.outcome);
  const worker = readWorker(value.worker);
  if (!outcome || !worker) return undefined;
  if (value.events !== undefined && typeof value.events !== 'string') return undefined;
  if (value.eventsKept !== undefined && typeof value.eventsKept !== 'string') return undefined;
  const replyCache = readReplyCacheCounts(value.replyCache);
  return {
    kind: 'finished',
    outcome,
    worker,
    ...(value.events !== undefined ? { events: value.events } : {}),
    ...(value.eventsKept !== undefined ? { eventsKept: value.eventsKept } : {}),
    ...(replyCache ? { replyCache } : {}),
  };
}

function readOutcome(value: unknown): ItemRunOutcome | undefined {
  if (!isRecord(value)) return undefined;
  const { status, exitCode, answer, structured, usage, cost, durationMs, startedAt, checks, runId, runDirectory, error } = value;
  if (!isRunStatus(status) || typeof durationMs !== 'number' || typeof startedAt !== 'string') return undefined;
  if (exitCode !== undefined && !Number.isInteger(exitCode)) return undefined;
  if (!isRecord(usage) || !['promptTokens', 'completionTokens', 'totalTokens'].every((name) => typeof usage[name] === 'number')) return undefined;
  if (answer !== undefined && typeof answer !== 'string') return undefined;
  if (cost !== undefined && typeof cost !== 'number') return undefined;
  if (runId !== undefined && (typeof runId !== 'string' || !safeRunId.test(runId))) return undefined;
  if (runDirectory !== undefined && typeof runDirectory !== 'string') return undefined;
  if (checks !== undefined && !(Array.isArray(checks) && checks.every(isCheckResult))) return undefined;
  if (error !== undefined && !(isRecord(error) && typeof error.code === 'string' && typeof error.message === 'string')) return undefined;
  return {
    status,
    ...(exitCode !== undefined ? { exitCode: exitCode as number } : {}),
    ...(answer !== undefined ? { answer } : {}),
    // A copy: what the worker's JSON held, nothing shared with anything else.
    ...(structured !== undefined ? { structured: structuredClone(structured) } : {}),
    usage: { promptTokens: usage.promptTokens as number, completionTokens: usage.completionTokens as number, totalTokens: usage.totalTokens as number },
    ...(cost !== undefined ? { cost } : {}),
    durationMs,
    startedAt,
    ...(checks !== undefined ? { checks: (checks as CheckResult[]).map(({ name, kind, passed, skipped, detail, durationMs: checkMs }) => ({ name, kind, passed, ...(skipped === true ? { skipped } : {}), detail, durationMs: checkMs })) } : {}),
    ...(runId !== undefined ? { runId } : {}),
    ...(runDirectory !== undefined ? { runDirectory } : {}),
    ...(error !== undefined ? { error: { code: (error as { code: string }).code, message: (error as { message: string }).message } } : {}),
  };
}

/** Counts a worker returned, when they are counts; anything else is left out. */
function readReplyCacheCounts(value: unknown): ReplyCacheCounts | undefined {
  if (!isRecord(value)) return undefined;
  const { hits, misses } = value;
  const count = (each: unknown): each is number => typeof each === 'number' && Number.isSafeInteger(each) && each >= 0;
  return count(hits) && count(misses) ? { hits, misses } : undefined;
}

export function readWorker(value: unknown): NonNullable<BatchItemRecord['worker']> | undefined {
  if (!isRecord(value) || typeof value.id !== 'string' || typeof value.host !== 'string' || typeof value.pid !== 'number') return undefined;
  return { id: value.id, host: value.host, pid: value.pid };
}

function isCheckResult(value: unknown): value is CheckResult {
  return isRecord(value) && typeof value.name === 'string' && typeof value.kind === 'string' && typeof value.passed === 'boolean' && typeof value.detail === 'string' && typeof value.durationMs === 'number';
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
