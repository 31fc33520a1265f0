/** `manus resume`: continue a run from its events file, with the same history, workspace and plan. */
import { resolveRecipe, type RecipeOverrides, type RunPlan } from '../runtime/config/resolve-recipe.js';
import { parseTrustGrants } from '../runtime/config/trust-grants.js';
import { UsageError } from '../runtime/errors.js';
import { readRecordedRun, resumeStateOf, type RecordedRun } from '../runtime/recorded-run.js';
import { FlowResume } from '../runtime/flow/flow-resume.js';
import { activeDurationMs, resolveRunId } from '../runtime/run-history.js';
import { runsDirectoryFor } from '../runtime/run-preparation.js';
import { join, resolve } from 'node:path';
import type { ResumeCommandOptions } from './program.js';
import { printPlanWarnings, runWithProgress } from './run-command.js';

export async function resumeCommand(runId: string, options: ResumeCommandOptions): Promise<number> {
  const trust = [...parseTrustGrants(options.trust)];
  const runsDirectory = runsDirectoryFor(process.cwd(), process.env, options.runsDir);
  const runDirectory = join(runsDirectory, await resolveRunId(runsDirectory, runId));
  const recorded = readRecordedRun(join(runDirectory, 'events.jsonl'), { repair: true });
  for (const warning of recorded.warnings) process.stderr.write(`warning: ${warning}\n`);
  if (recorded.end?.status === 'success') {
    throw new UsageError(`run ${recorded.start.runId} already finished successfully; there is nothing to resume`);
  }
  const recipe = recorded.start.recipe as { file: string; overrides?: RecipeOverrides };
  // The grants of the first run are not taken from its events file: the user gives them again.
  const overrides: RecipeOverrides = {
    ...recipe.overrides,
    ...(options.maxSteps ? { maxSteps: options.maxSteps } : {}),
    ...(options.maxTokens ? { maxTokens: options.maxTokens } : {}),
    trust,
  };
  const plan = await resolveRecipe(recipe.file, { cwd: process.cwd(), overrides });
  printPlanWarnings(plan, options);
  if (plan.flow) return resumeFlow(recorded, runDirectory, plan, options);
  // The first answers go to the questions the run stopped on; the rest to questions still to come.
  const { state, interruptedCalls, answeredQuestions, remainingAnswers } = resumeStateOf(recorded, options.answer);
  for (const call of interruptedCalls) process.stderr.write(`the ${call.name} call ${call.id} was interrupted; it is reported to the agent and not run again\n`);
  for (const question of answeredQuestions) process.stderr.write(`answering "${question.question}" with the answer given\n`);
  const result = await runWithProgress(plan, { ...options, answer: remainingAnswers }, {
    resume: { runId: String(recorded.start.runId), runDirectory, workspace: resolve(String(recorded.start.workspace)), state },
    startDetails: {
      // So that listings add up the whole run from the end of its file alone.
      earlierDurationMs: activeDurationMs(recorded.events) ?? 0,
      // So that a later resumption rebuilds the same history.
      ...(answeredQuestions.length > 0 ? { answers: Object.fromEntries(answeredQuestions.map((question) => [question.id, question.answer])) } : {}),
    },
  }, `resuming run ${String(recorded.start.runId)} after step ${state.step}`);
  return result.exitCode;
}

/** A flow continues each step that was running from its own history; steps that finished keep their results. */
async function resumeFlow(recorded: RecordedRun, runDirectory: string, plan: RunPlan, options: ResumeCommandOptions): Promise<number> {
  const flow = new FlowResume(recorded, options.answer);
  const result = await runWithProgress(plan, { ...options, answer: flow.answersLeft }, {
    resume: {
      runId: String(recorded.start.runId),
      runDirectory,
      workspace: resolve(String(recorded.start.workspace)),
      state: { history: [], step: flow.spent.steps, usage: flow.spent.usage, files: [] },
      flow,
    },
    startDetails: {
      earlierDurationMs: activeDurationMs(recorded.events) ?? 0,
      ...(flow.answered.length > 0 ? { answers: Object.fromEntries(flow.answered.map((question) => [question.id, question.answer])) } : {}),
    },
  }, `resuming flow run ${String(recorded.start.runId)}: ${flow.finished.size} step(s) finished`);
  return result.exitCode;
}
