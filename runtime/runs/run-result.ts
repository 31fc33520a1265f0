/**
 * How a run ends: its resources released, the protected paths checked a last time, the files it
 * wrote listed, and one result that says exactly how it ended, recorded as the run-end event.
 */
import { readdirSync, rmdirSync } from 'node:fs';
import type { RunPlan } from './recipe/resolve-recipe.js';
import { ApprovalNeededError, HumanInputNeededError, ManusError, PermissionDeniedError } from '../contract/errors.js';
import type { FlowStepRecord, PreparedRun, RunModel, RunOptions, RunResult, TaskAttempts } from './run-types.js';
import { failureStatus } from './run-status.js';
import { compareSnapshots, snapshotWorkspace } from '../services/sandbox/workspace-changes.js';

/** What the run came to before it ends: the attempts, or the error that cut them short. */
export interface RunEnding {
  attempts?: TaskAttempts;
  failure?: ManusError;
  model?: RunModel;
}

export async function finishRun(run: PreparedRun, plan: RunPlan, options: RunOptions, ending: RunEnding): Promise<RunResult> {
  const failure = await settleFailure(run, ending.failure);
  const result = runResult(run, plan, options, { ...ending, failure }, await filesWritten(run, ending.attempts?.outcome.files ?? []));
  // Where the run lives is known from the file's own place; keep machine paths out of recordings.
  const { runId: _runId, runDirectory: _runDirectory, workspace: _workspace, status, ...end } = result;
  // The caller's details (the CLI's exit code) follow the status, where they have always stood.
  if (!run.trace.failure) run.trace.emit('run-end', { status, ...options.endDetails?.(result), ...end });
  run.trace.close();
  if (plan.workspace === undefined) removeIfEmpty(run.workspace);
  return result;
}

/**
 * Releases the run's resources, then finds what failed the run, if anything did, however late:
 * the error that ended the attempts, a stray error, an event that could not be written, or a
 * protected path that changed.
 */
async function settleFailure(run: PreparedRun, failure: ManusError | undefined): Promise<ManusError | undefined> {
  const { faults, trace } = run;
  let disposalProblems: string[];
  try {
    disposalProblems = await run.resources.disposeAll();
  } finally {
    faults.stop();
  }
  // The runtime's own stray error, even one that came while resources were being released.
  if (!failure && faults.fatalError !== undefined) failure = asManusError(faults.fatalError);
  // An event that could not be written fails the run, even where the error itself was caught.
  if (!failure && trace.failure) failure = trace.failure;
  // A run whose events file cannot be written stops without adding more to it.
  if (!trace.failure) for (const problem of disposalProblems) trace.emit('resource-dispose-failed', { problem });
  // The last check: whatever changed a protected path (a tool that runs no command, a process that
  // outlived its command) is undone, and the run ends as denied.
  const lateChange = await run.protectedPaths.verify().then(() => undefined, (error: ManusError) => error);
  if (lateChange && !PermissionDeniedError.isInstance(failure)) return lateChange;
  return failure;
}

function runResult(run: PreparedRun, plan: RunPlan, options: RunOptions, ending: RunEnding, files: string[]): RunResult {
  const { attempts, failure } = ending;
  const progress = run.progress();
  let outcome = attempts?.outcome;
  if (attempts?.interrupted && outcome) outcome = { ...outcome, status: 'interrupted', answer: 'The run was interrupted while its checks ran.' };
  const checksFailed = attempts !== undefined && !attempts.interrupted && attempts.checksFailed;
  return {
    runId: run.runId,
    status: failure ? failureStatus(failure) : checksFailed ? 'checks-failed' : outcome!.status,
    answer: failure ? answerFor(failure, run.runId) : outcome!.answer,
    checks: attempts?.checks ?? [],
    attempts: attempts?.attempts ?? 1,
    startedAt: run.startedAt.toISOString(),
    structured: outcome?.structured,
    steps: outcome?.steps ?? progress.step,
    usage: outcome?.usage ?? progress.usage ?? { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
    cost: outcome?.cost,
    exhaustedBudget: outcome?.exhaustedBudget,
    error: failure ? { code: failure.code, message: failure.message } : undefined,
    question: HumanInputNeededError.isInstance(failure) ? failure.question : undefined,
    model: ending.model?.connection?.model ?? (options.model ? 'recorded' : ''),
    runDirectory: run.runDirectory,
    workspace: run.workspace,
    files,
    durationMs: Math.round(performance.now() - run.started),
    ...(outcome && 'flowSteps' in outcome ? { flowSteps: outcome.flowSteps as FlowStepRecord[] } : {}),
  };
}

/** Errors of the runtime's own kinds as they are, whichever copy of the runtime made them; anything else is an internal error. */
export function asManusError(error: unknown): ManusError {
  if (ManusError.isInstance(error)) return error;
  return new ManusError('internal_error', error instanceof Error ? error.stack ?? error.message : String(error));
}

/** A run waiting for an answer or an approval says how to give it. */
function answerFor(error: ManusError, runId: string): string {
  if (ApprovalNeededError.isInstance(error)) {
    return `${error.message}; continue with: manus resume ${runId} --approve ${error.callId}  (or --deny ${error.callId} --reason "...")`;
  }
  if (!HumanInputNeededError.isInstance(error)) return error.message;
  return `${error.message}; answer it with: manus resume ${runId} --answer "..."`;
}

async function filesWritten(run: PreparedRun, reported: string[]): Promise<string[]> {
  const changes = compareSnapshots(await run.workspaceBefore, await snapshotWorkspace(run.workspace));
  return [...new Set([...reported, ...changes.created, ...changes.modified])].sort();
}

function removeIfEmpty(folder: string): void {
  try {
    if (readdirSync(folder).length === 0) rmdirSync(folder);
  } catch {
    // Tidying an unused default workspace is a courtesy; failing to is harmless.
  }
}
