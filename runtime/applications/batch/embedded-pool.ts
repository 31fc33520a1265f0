/**
 * The embedded pool: a batch's items run in this process, at most `concurrency` at once, through
 * the ordinary run machinery. An item whose provider failed is continued from its events after a
 * backoff; other failures are tried again only as `retries` allows. The batch's runs folder is
 * swept once, before the first item, for commands a killed session of it left running: every run
 * after that is this process's own, so sweeping it again as each run starts (a look into every run
 * folder, hundreds in a large batch) would find nothing.
 */
import type { TokenUsage } from '../../contract/model-types.js';
import { abortableSleep } from '../../services/model/abortable-sleep.js';
import type { RecipeOverrides } from '../../runs/recipe/resolve-recipe.js';
import type { ExecutorHooks, ItemExecutor, ItemWork } from './batch-run.js';
import { runBatchItem, type ItemRunOutcome, type ItemRunRequest } from './batch-item-run.js';
import { continuesFromEvents } from '../../runs/run-resumption.js';
import { killLeftoverProcesses } from '../../services/sandbox/process-records.js';
import { retryDelayFor, type ItemRetryPolicy } from './item-retry.js';

export interface EmbeddedPoolSettings {
  concurrency: number;
  recipeFile: string;
  cwd: string;
  overrides: RecipeOverrides;
  runsDirectory: string;
  environment: Record<string, string | undefined>;
  retry: ItemRetryPolicy;
  exitCodeFor: ItemRunRequest['exitCodeFor'];
  /** What one item's run has beside the batch's own settings (an eval's model and reply cache). */
  itemRequest?(work: ItemWork): Pick<Partial<ItemRunRequest>, 'wrapModel' | 'startDetails'> & { overrides?: Partial<RecipeOverrides> };
}

export class EmbeddedPool implements ItemExecutor {
  constructor(private readonly settings: EmbeddedPoolSettings) {}

  async run(work: ItemWork[], hooks: ExecutorHooks): Promise<void> {
    const leftovers = killLeftoverProcesses(this.settings.runsDirectory);
    if (leftovers.killed.length > 0) hooks.notice(`stopped ${leftovers.killed.length} process group(s) an earlier, killed session of the batch left running`);
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
      // A provider that failed is asked again where the run stopped; another failure starts afresh.
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
    const remaining = hooks.budget.remainingSeconds();
    const ownTime = settings.overrides.maxTimeSeconds;
    const { overrides, ...itemRequest } = settings.itemRequest?.(work) ?? {};
    return runBatchItem({
      ...itemRequest,
      parameters: work.parameters,
      recipeFile: settings.recipeFile,
      cwd: settings.cwd,
      overrides: { ...settings.overrides, ...overrides, ...(remaining !== undefined ? { maxTimeSeconds: ownTime === undefined ? remaining : Math.min(ownTime, remaining) } : {}) },
      runsDirectory: settings.runsDirectory,
      environment: settings.environment,
      signal: hooks.signal,
      sharedBudget: hooks.budget,
      leftoversSwept: true,
      resumeFrom,
      exitCodeFor: settings.exitCodeFor,
      onRunStart: (runId, runDirectory) => hooks.started(work.index, { runId, runDirectory }),
      onEvent: (type, data) => {
        if (type === 'step-end') hooks.progressed(work.index, data.usage as TokenUsage);
      },
    });
  }
}
