/**
 * The executor of an eval's runs in this process: the embedded pool's rules (at most `concurrency`
 * at once, a provider failure continued from its events after a backoff, the batch budget shared),
 * with each item run on its own model, and through the cache of replies when the eval keeps one.
 */
import type { TokenUsage } from '../../contract/model-types.js';
import { abortableSleep } from '../../services/model/abortable-sleep.js';
import type { RecipeOverrides } from '../../runs/recipe/resolve-recipe.js';
import { continuesFromEvents } from '../../runs/run-resumption.js';
import type { ExecutorHooks, ItemExecutor, ItemWork } from '../batch/batch-run.js';
import { runBatchItem, type ItemRunOutcome, type ItemRunRequest } from '../batch/batch-item-run.js';
import { retryDelayFor, type ItemRetryPolicy } from '../batch/item-retry.js';
import type { ReplyCache } from './reply-cache.js';
import type { EvalCell } from './eval-matrix.js';

export interface EvalPoolSettings {
  concurrency: number;
  recipeFile: string;
  cwd: string;
  overrides: RecipeOverrides;
  runsDirectory: string;
  environment: Record<string, string | undefined>;
  retry: ItemRetryPolicy;
  exitCodeFor: ItemRunRequest['exitCodeFor'];
  cellOf(index: number): EvalCell;
  cache?: ReplyCache;
}

export class EvalPool implements ItemExecutor {
  constructor(private readonly settings: EvalPoolSettings) {}

  async run(work: ItemWork[], hooks: ExecutorHooks): Promise<void> {
    const queue = [...work];
    const lane = async () => {
      for (let next = queue.shift(); next && hooks.mayStart(); next = queue.shift()) await this.runItem(next, hooks);
    };
    await Promise.all(Array.from({ length: Math.max(1, Math.min(this.settings.concurrency, work.length)) }, lane));
  }

  private async runItem(work: ItemWork, hooks: ExecutorHooks): Promise<void> {
    let resumeFrom = work.resumeFrom;
    let attempts = 0;
    for (;;) {
      attempts += 1;
      const outcome = await this.attempt(work, resumeFrom, hooks);
      const delay = hooks.mayStart() ? retryDelayFor(this.settings.retry, outcome, attempts) : undefined;
      if (delay === undefined) {
        hooks.finished(work.index, { ...outcome, attempts });
        return;
      }
      resumeFrom = outcome.runDirectory && continuesFromEvents(outcome.runDirectory) ? outcome.runDirectory : undefined;
      const waited = await abortableSleep(delay, hooks.signal).then(() => true, () => false);
      if (!waited) {
        hooks.finished(work.index, { ...outcome, attempts });
        return;
      }
    }
  }

  private attempt(work: ItemWork, resumeFrom: string | undefined, hooks: ExecutorHooks): Promise<ItemRunOutcome> {
    const { settings } = this;
    const cell = settings.cellOf(work.index);
    const remaining = hooks.budget.remainingSeconds();
    const ownTime = settings.overrides.maxTimeSeconds;
    const { cache } = settings;
    return runBatchItem({
      parameters: work.parameters,
      recipeFile: settings.recipeFile,
      cwd: settings.cwd,
      overrides: {
        ...settings.overrides,
        ...(cell.model !== undefined ? { model: cell.model } : {}),
        ...(remaining !== undefined ? { maxTimeSeconds: ownTime === undefined ? remaining : Math.min(ownTime, remaining) } : {}),
      },
      runsDirectory: settings.runsDirectory,
      environment: settings.environment,
      signal: hooks.signal,
      sharedBudget: hooks.budget,
      resumeFrom,
      exitCodeFor: settings.exitCodeFor,
      ...(cache ? { wrapModel: (model) => cache.wrap(model, cell.model ?? 'default', cell.repeat) } : {}),
      startDetails: { eval: { row: cell.row, model: cell.model ?? 'default', repeat: cell.repeat } },
      onRunStart: (runId, runDirectory) => hooks.started(work.index, { runId, runDirectory }),
      onEvent: (type, data) => {
        if (type === 'step-end') hooks.progressed(work.index, data.usage as TokenUsage);
      },
    });
  }
}
