/**
 * One item of a batch, run in this process through the ordinary run machinery: its recipe resolved
 * with the item's parameters and budgets, or an earlier run of it continued from its events. Any
 * error becomes the item's outcome; nothing here ends the batch.
 */
import { join, resolve } from 'node:path';
import type { SharedBudget } from '../../kernel/agent-loop.js';
import { resolveRecipe, type RecipeOverrides, type RunPlan } from '../../runs/recipe/resolve-recipe.js';
import { failureStatus } from '../../runs/run-status.js';
import { redactorForPlan } from '../../runs/plan-secrets.js';
import { executeRun, type RunOptions, type RunResult } from '../../runs/run.js';
import { asManusError } from '../../runs/run-result.js';
import { readRunResumption } from '../../runs/run-resumption.js';
import type { RunEventListener } from '../../services/run-trace.js';
import type { BatchItemRecord } from './batch-folder.js';

export interface ItemRunRequest {
  parameters: Record<string, string>;
  /** As given, relative to `cwd`. */
  recipeFile: string;
  cwd: string;
  /** The batch's settings for every item: budgets, model, sandbox and the user's grants. */
  overrides: RecipeOverrides;
  runsDirectory: string;
  environment: Record<string, string | undefined>;
  signal: AbortSignal;
  sharedBudget?: SharedBudget;
  /** The runs folder was swept for what killed runtimes left running; each run need not sweep it again. */
  leftoversSwept?: boolean;
  /** An earlier run of the item to continue from its events instead of starting afresh. */
  resumeFrom?: string;
  /** The folder that earlier run was started in, when not `cwd`: its workspace path is relative to it. */
  resumeCwd?: string;
  /**
   * Where a continued run's recipe and settings come from: its events (`recorded`, for runs this
   * machine's user made), or this request (`request`, for events a worker was given): then only
   * the run's history and workspace are taken from the events.
   */
  resumeSettings?: 'recorded' | 'request';
  /** Wraps the run's model (an eval's cache of replies). */
  wrapModel?: RunOptions['wrapModel'];
  /** Recorded in the start of a run begun afresh (not of one continued). */
  startDetails?: Record<string, unknown>;
  /** The exit code the command gives a run that ended so. */
  exitCodeFor(result: { status: RunResult['status']; error?: { code: string } }): number;
  /** Told the run's id and folder as soon as it has them. */
  onRunStart?(runId: string, runDirectory: string): void;
  onEvent?: RunEventListener;
}

/** What the item came to, as its line in items.jsonl records it (its index, parameters and attempts aside). */
export type ItemRunOutcome = Omit<BatchItemRecord, 'index' | 'parameters' | 'attempts'> & { runDirectory?: string };

export async function runBatchItem(request: ItemRunRequest): Promise<ItemRunOutcome> {
  const startedAt = new Date();
  const started = performance.now();
  let plan: RunPlan | undefined;
  try {
    // A resumed item keeps the parameters it was started with; budgets and grants come from now.
    const { parameters: fixedParameters, ...settings } = request.overrides;
    const resumption = request.resumeFrom ? readRunResumption({ runDirectory: request.resumeFrom, cwd: request.resumeCwd ?? request.cwd, overrides: settings }) : undefined;
    const recorded = resumption && request.resumeSettings !== 'request' ? resumption : undefined;
    plan = await resolveRecipe(recorded?.recipeFile ?? request.recipeFile, {
      cwd: request.cwd,
      environment: request.environment,
      overrides: recorded?.overrides ?? { ...request.overrides, parameters: { ...request.parameters, ...fixedParameters } },
    });
    const redactor = redactorForPlan(plan, request.environment);
    const offered = resumption?.options(plan.flow !== undefined);
    // Events from elsewhere choose nothing: a continued run keeps the workspace a run of this plan
    // with that id has, or the item starts afresh.
    const resumed = offered?.resume && (request.resumeSettings !== 'request' || offered.resume.workspace === resolve(request.resumeCwd ?? request.cwd, plan.workspace ?? join('workspace', offered.resume.runId))) ? offered : undefined;
    const options: RunOptions = {
      cwd: request.cwd,
      environment: request.environment,
      signal: request.signal,
      runsDirectory: request.runsDirectory,
      interactive: false,
      // No one waits at a worker or behind an MCP client to approve a call: the model is told it was refused.
      unansweredApproval: 'deny',
      answers: resumed?.answers ?? [],
      redactor,
      sharedBudget: request.sharedBudget,
      ...(request.leftoversSwept ? { leftoversSwept: true } : {}),
      ...(request.wrapModel ? { wrapModel: request.wrapModel } : {}),
      onEvent: (type, data) => {
        if (type === 'run-start' || type === 'run-resume') request.onRunStart?.(String(data.runId), resumed?.resume?.runDirectory ?? `${request.runsDirectory}/${String(data.runId)}`);
        request.onEvent?.(type, data);
      },
      endDetails: (ended) => ({ exitCode: request.exitCodeFor(ended) }),
      ...(resumed ? { resume: resumed.resume, startDetails: resumed.startDetails } : { startDetails: request.startDetails }),
    };
    const result = await executeRun(plan, options);
    // What is recorded is redacted whole, as the command prints and reports a run.
    return redactor.redactValue(outcomeOf(result, request.exitCodeFor(result)));
  } catch (caught) {
    const error = asManusError(caught);
    const status = failureStatus(error);
    const outcome: ItemRunOutcome = {
      status,
      exitCode: request.exitCodeFor({ status, error }),
      answer: error.message,
      usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
      durationMs: Math.round(performance.now() - started),
      startedAt: startedAt.toISOString(),
      error: { code: error.code, message: error.message },
      ...(request.resumeFrom ? { runDirectory: request.resumeFrom } : {}),
    };
    return plan ? redactorForPlan(plan, request.environment).redactValue(outcome) : outcome;
  }
}

function outcomeOf(result: RunResult, exitCode: number): ItemRunOutcome {
  return {
    runId: result.runId,
    runDirectory: result.runDirectory,
    status: result.status,
    exitCode,
    answer: result.answer,
    ...(result.structured !== undefined ? { structured: result.structured } : {}),
    usage: result.usage,
    ...(result.cost !== undefined ? { cost: result.cost } : {}),
    durationMs: result.durationMs,
    startedAt: result.startedAt,
    checks: result.checks,
    ...(result.error ? { error: result.error } : {}),
  };
}
