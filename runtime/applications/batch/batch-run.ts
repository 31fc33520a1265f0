/**
 * A batch from its first item to its last: the items run by an executor (the embedded pool, or
 * workers on a queue), each start and outcome recorded in the batch folder as it happens, the
 * batch budget and the user's interrupt stopping what runs and what would start, and the batch's
 * own status at the end. The executor decides where items run; this file decides what is recorded.
 */
import { setMaxListeners } from 'node:events';
import { join } from 'node:path';
import { asManusError } from '../../runs/run-result.js';
import type { BudgetName } from '../../kernel/agent-loop.js';
import type { TokenUsage } from '../../contract/model-types.js';
import { BatchBudget } from './batch-budget.js';
import { batchTotals, type BatchFolder, type BatchItemRecord, type BatchRecord, type BatchStatus, type BatchTotals } from './batch-folder.js';
import type { BatchInput } from './batch-inputs.js';
import type { ItemRunOutcome } from './batch-item-run.js';

/** An item to run: afresh, or continued from an earlier run's events. */
export interface ItemWork {
  index: number;
  parameters: Record<string, string>;
  resumeFrom?: string;
  /** Attempts earlier sessions of the batch made. */
  attemptsBefore: number;
  /** Whether an earlier session recorded an outcome for it (which it then did not succeed with). */
  endedBefore?: boolean;
}

/** Where an item ran, when not in this process. */
export interface ItemPlace {
  worker?: BatchItemRecord['worker'];
  events?: BatchItemRecord['events'];
}

export interface ExecutorHooks {
  /** Aborted when the user interrupts the batch. */
  signal: AbortSignal;
  budget: BatchBudget;
  /** False once nothing more may start. */
  mayStart(): boolean;
  started(index: number, run: { runId: string; runDirectory?: string } & ItemPlace): void;
  /** Each item's outcome once; later outcomes for an index already finished are ignored. */
  finished(index: number, outcome: ItemRunOutcome & ItemPlace & { attempts: number }): void;
  /** Writes batch.json now: the executor changed the record (its settings). */
  saveRecord(): void;
  /** What a running item has spent so far, as its steps end. */
  progressed(index: number, usage: TokenUsage): void;
  /** Something the user should know that is not an item's outcome (the queue is unreachable, and back). */
  notice(message: string): void;
}

export interface ItemExecutor {
  /** Runs the work, returning once every item that started has finished and no more will start. */
  run(work: ItemWork[], hooks: ExecutorHooks): Promise<void>;
}

export type BatchProgressEvent =
  | { kind: 'item-start'; index: number; runId: string; totals: BatchTotals }
  | { kind: 'item-end'; item: BatchItemRecord; totals: BatchTotals }
  | { kind: 'run-usage'; totals: BatchTotals }
  | { kind: 'notice'; message: string; totals: BatchTotals }
  | { kind: 'stopping'; reason: 'interrupted' | BudgetName; totals: BatchTotals };

export interface BatchRunInput {
  folder: BatchFolder;
  record: BatchRecord;
  items: BatchInput[];
  /** Items' latest lines from earlier sessions (a resumed batch). */
  earlier: Map<number, BatchItemRecord>;
  work: ItemWork[];
  executor: ItemExecutor;
  /** The user's interrupt. */
  signal: AbortSignal;
  budget: BatchBudget;
  /** The exit code the command gives a batch that ended so. */
  exitCodeFor(status: Exclude<BatchStatus, 'running'>): number;
  onProgress?(event: BatchProgressEvent): void;
  /** The active time of earlier sessions, added to this one's. */
  earlierDurationMs?: number;
}

export interface BatchOutcome {
  record: BatchRecord;
  items: BatchItemRecord[];
  /** What ended the batch itself in error (its queue refused it), when something did; `record.error` says so too. */
  error?: unknown;
}

/** How long batch.json may lag behind items.jsonl while the batch runs. */
const recordIntervalMs = 200;

export async function runBatch(input: BatchRunInput): Promise<BatchOutcome> {
  const { folder, record, budget } = input;
  const latest = new Map(input.earlier);
  const finished = new Set<number>();
  const started = performance.now();
  const parameters = new Map(input.items.map((item) => [item.index, item.parameters]));
  const work = new Map(input.work.map((item) => [item.index, item]));
  // Usage of items still running, as their loops report it, so totals and the budget move live.
  const liveUsage = new Map<number, TokenUsage>();
  const stop = new AbortController();
  // Every running item listens to it.
  setMaxListeners(0, stop.signal);
  let stopReason: 'interrupted' | BudgetName | undefined;
  const totals = () => {
    const base = batchTotals(record.inputs.count, latest.values(), (input.earlierDurationMs ?? 0) + performance.now() - started);
    for (const usage of liveUsage.values()) {
      base.promptTokens += usage.promptTokens;
      base.completionTokens += usage.completionTokens;
      base.totalTokens += usage.totalTokens;
    }
    return base;
  };
  // batch.json follows each change within a moment: many items ending at once make one write, not many.
  let saveTimer: NodeJS.Timeout | undefined;
  const writeNow = () => {
    clearTimeout(saveTimer);
    saveTimer = undefined;
    record.totals = totals();
    folder.writeRecord(record);
  };
  const save = (status: BatchStatus = 'running') => {
    record.status = status;
    if (status !== 'running') writeNow();
    else saveTimer ??= setTimeout(writeNow, recordIntervalMs);
  };
  const stopWith = (reason: 'interrupted' | BudgetName) => {
    if (stopReason) return;
    stopReason = reason;
    input.onProgress?.({ kind: 'stopping', reason, totals: totals() });
    // An interrupt stops running items at once; an exhausted budget stops each at its next step,
    // as budget-exhausted, through the budget they share.
    if (reason === 'interrupted') stop.abort(input.signal.reason);
  };
  const onInterrupt = () => stopWith('interrupted');
  if (input.signal.aborted) onInterrupt();
  input.signal.addEventListener('abort', onInterrupt, { once: true });
  budget.onExhausted((name) => stopWith(name));

  record.status = 'running';
  delete record.finishedAt;
  delete record.exitCode;
  writeNow();
  const hooks: ExecutorHooks = {
    signal: stop.signal,
    budget,
    mayStart: () => stopReason === undefined && !budget.exhausted(),
    started(index, run) {
      if (finished.has(index)) return;
      const item: BatchItemRecord = {
        index,
        parameters: parameters.get(index) ?? {},
        runId: run.runId,
        ...(run.runDirectory ? { runDirectory: folder.relative(run.runDirectory) } : {}),
        status: 'running',
        usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
        durationMs: 0,
        startedAt: new Date().toISOString(),
        attempts: (work.get(index)?.attemptsBefore ?? 0) + 1,
        ...(run.worker ? { worker: run.worker } : {}),
      };
      latest.set(index, item);
      folder.appendItem(item);
      save();
      input.onProgress?.({ kind: 'item-start', index, runId: run.runId, totals: totals() });
    },
    finished(index, outcome) {
      if (finished.has(index)) return;
      finished.add(index);
      liveUsage.delete(index);
      const { runDirectory, attempts, ...rest } = outcome;
      const item: BatchItemRecord = {
        ...rest,
        // The item's own, whatever its outcome says.
        index,
        parameters: parameters.get(index) ?? {},
        ...(runDirectory ? { runDirectory: outcome.events?.stored === 'worker' ? runDirectory : folder.relative(runDirectory) } : {}),
        ...(outcome.events
          ? { events: outcome.events.stored === 'local' ? { stored: 'local', path: folder.relative(outcome.events.path) } : outcome.events }
          : runDirectory ? { events: { stored: 'local', path: folder.relative(join(runDirectory, 'events.jsonl')) } } : {}),
        attempts: (work.get(index)?.attemptsBefore ?? 0) + attempts,
      };
      latest.set(index, item);
      folder.appendItem(item);
      save();
      input.onProgress?.({ kind: 'item-end', item, totals: totals() });
    },
    saveRecord: writeNow,
    progressed(index, usage) {
      if (finished.has(index)) return;
      liveUsage.set(index, usage);
      input.onProgress?.({ kind: 'run-usage', totals: totals() });
    },
    notice(message) {
      input.onProgress?.({ kind: 'notice', message, totals: totals() });
    },
  };
  delete record.error;
  let failure: unknown;
  try {
    await input.executor.run(input.work, hooks);
  } catch (caught) {
    // The batch ends as a failure that says why, with its items as they are, and stays resumable.
    failure = caught;
    const error = asManusError(caught);
    record.error = { code: error.code, message: error.message };
    // Items it had started end with it: none is left running.
    for (const item of [...latest.values()]) {
      if (item.status !== 'running' || finished.has(item.index)) continue;
      const { runId, startedAt, worker } = item;
      hooks.finished(item.index, {
        status: 'error',
        answer: `the batch stopped: ${error.message}`,
        usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
        durationMs: Date.now() - Date.parse(startedAt),
        startedAt,
        error: { code: error.code, message: error.message },
        attempts: 0,
        ...(runId ? { runId } : {}),
        ...(worker ? { worker } : {}),
      });
    }
  } finally {
    input.signal.removeEventListener('abort', onInterrupt);
  }
  const ended = latest;
  const all = input.items.map((item) => ended.get(item.index));
  const allSucceeded = failure === undefined && all.every((item) => item?.status === 'success');
  const status: Exclude<BatchStatus, 'running'> = allSucceeded ? 'success'
    : failure !== undefined ? 'failure'
    : stopReason === 'interrupted' ? 'interrupted'
    : stopReason ? 'budget-exhausted'
    : 'failure';
  record.finishedAt = new Date().toISOString();
  record.exitCode = input.exitCodeFor(status);
  save(status);
  folder.close();
  return { record, items: all.filter((item): item is BatchItemRecord => item !== undefined), ...(failure !== undefined ? { error: failure } : {}) };
}
