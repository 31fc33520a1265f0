/**
 * How a recorded run continues: the recipe and overrides it was started with, and the options that
 * give `executeRun` its history, workspace and spending (a flow's, each step's). Shared by
 * `manus resume` and batches, which resume interrupted items the same way.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { RecipeOverrides } from './recipe/resolve-recipe.js';
import { UsageError } from '../contract/errors.js';
import { FlowResume } from './flow/flow-resume.js';
import { callsAwaitingApproval, readRecordedRun, recordedRunApprovals, resumeStateOf, type ApprovalDecision, type RecordedRun } from './recorded-run.js';
import { activeDurationMs } from './run-history.js';
import type { RunOptions } from './run-types.js';

export interface RunResumption {
  recorded: RecordedRun;
  /** The recipe file as the run recorded it (relative to the folder it ran in). */
  recipeFile: string;
  /** The run's own overrides with the caller's changes; grants are never taken from the events file. */
  overrides: RecipeOverrides;
  /** What `executeRun` needs, once the plan is known (a flow resumes step by step). */
  options(isFlow: boolean): Pick<RunOptions, 'resume' | 'startDetails' | 'answers' | 'approvalDecisions'>;
  /** What the resumption does with the interrupted calls and answered questions, for the user to read. */
  notes(isFlow: boolean): string[];
  /** One line saying where the run continues. */
  label(isFlow: boolean): string;
}

export interface ResumptionRequest {
  /** The run's folder, holding its events file. */
  runDirectory: string;
  /** The folder the run was started in: its workspace path is relative to it. */
  cwd: string;
  answers?: readonly string[];
  /** The user's decisions about calls the run stopped on for approval, by call id. */
  approvals?: ReadonlyMap<string, ApprovalDecision>;
  /** Changes to the recorded overrides (larger budgets, the grants given again). */
  overrides?: RecipeOverrides;
}

export function readRunResumption(request: ResumptionRequest): RunResumption {
  const recorded = readRecordedRun(join(request.runDirectory, 'events.jsonl'), { repair: true });
  if (recorded.end?.status === 'success') {
    throw new UsageError(`run ${String(recorded.start.runId)} already finished successfully; there is nothing to resume`);
  }
  const recipe = recorded.start.recipe as { file: string; overrides?: RecipeOverrides };
  const runId = String(recorded.start.runId);
  const workspace = resolve(request.cwd, String(recorded.start.workspace));
  const earlierDurationMs = activeDurationMs(recorded.events) ?? 0;
  const answers = request.answers ?? [];
  const decisions = request.approvals ?? new Map<string, ApprovalDecision>();
  const waiting = callsAwaitingApproval(recorded);
  for (const id of decisions.keys()) {
    if (!waiting.some((call) => call.id === id)) {
      const listed = waiting.length > 0 ? `; it waits for ${waiting.map((call) => `${call.id} (${call.tool})`).join(', ')}` : '; it waits for no approval';
      throw new UsageError(`run ${runId} did not stop on the call ${id}${listed}`);
    }
  }
  const runApprovals = recordedRunApprovals(recorded);
  const approvalsGiven = decisions.size > 0 ? { approvalsGiven: [...decisions.keys()] } : {};
  let task: ReturnType<typeof resumeStateOf> | undefined;
  let flow: FlowResume | undefined;
  const taskPoint = () => (task ??= resumeStateOf(recorded, answers, decisions));
  const flowPoint = () => (flow ??= new FlowResume(recorded, answers, decisions));
  const answered = (questions: Array<{ id: string; answer: string }>) =>
    questions.length > 0 ? { answers: Object.fromEntries(questions.map((question) => [question.id, question.answer])) } : {};
  return {
    recorded,
    recipeFile: recipe.file,
    overrides: { ...recipe.overrides, ...request.overrides },
    options(isFlow) {
      if (isFlow) {
        const point = flowPoint();
        return {
          answers: point.answersLeft,
          approvalDecisions: decisions,
          resume: { runId, runDirectory: request.runDirectory, workspace, state: { history: [], step: point.spent.steps, usage: point.spent.usage, files: [] }, flow: point, runApprovals },
          startDetails: { earlierDurationMs, ...answered(point.answered), ...approvalsGiven },
        };
      }
      // The first answers go to the questions the run stopped on; the rest to questions still to come.
      const point = taskPoint();
      return {
        answers: point.remainingAnswers,
        approvalDecisions: decisions,
        resume: { runId, runDirectory: request.runDirectory, workspace, state: point.state, runApprovals },
        // The earlier duration lets listings add up the whole run from the end of its file alone;
        // the answers let a later resumption rebuild the same history.
        startDetails: { earlierDurationMs, ...answered(point.answeredQuestions), ...approvalsGiven },
      };
    },
    notes(isFlow) {
      if (isFlow) return [];
      const point = taskPoint();
      return [
        ...point.interruptedCalls.map((call) => `the ${call.name} call ${call.id} was interrupted; it is reported to the agent and not run again`),
        ...point.answeredQuestions.map((question) => `answering "${question.question}" with the answer given`),
        ...point.decidedCalls.map((call) => `${call.approved ? 'running' : 'refusing'} the ${call.name} call ${call.id}, as you decided`),
      ];
    },
    label(isFlow) {
      return isFlow
        ? `resuming flow run ${runId}: ${flowPoint().finished.size} step(s) finished`
        : `resuming run ${runId} after step ${taskPoint().state.step}`;
    },
  };
}

/** Statuses a run is continued from rather than started again: it was cut short, not finished. */
const continuedStatuses: ReadonlySet<string> = new Set(['interrupted', 'provider-failed']);

/**
 * Whether a batch continues the run in `runDirectory` from its events rather than starting the
 * item afresh: the run was killed (no end), interrupted, or stopped by its provider.
 */
export function continuesFromEvents(runDirectory: string): boolean {
  return continuedRecording(runDirectory) !== undefined;
}

/** The recorded run in `runDirectory` when a batch continues it (as `continuesFromEvents` says), read once. */
export function continuedRecording(runDirectory: string): RecordedRun | undefined {
  const file = join(runDirectory, 'events.jsonl');
  if (!existsSync(file)) return undefined;
  try {
    const recorded = readRecordedRun(file);
    return recorded.end === undefined || continuedStatuses.has(String(recorded.end.status)) ? recorded : undefined;
  } catch {
    // No run-start: the run never began; it starts afresh.
    return undefined;
  }
}
