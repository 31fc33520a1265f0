/**
 * One run of a resolved plan: prepared (its id, folder, workspace, trace and model), attempted (the
 * loop and the recipe's checks), and finished with a result that says exactly how it ended.
 * Resources are released however it ends.
 */
import type { BudgetName, ResumeState, SharedBudget } from '../kernel/agent-loop.js';
import type { CheckResult } from '../config/check-types.js';
import type { RunPlan } from './recipe/resolve-recipe.js';
import { assertTrustGranted } from './recipe/trust-consent.js';
import { ConfigError, type ManusError } from '../contract/errors.js';
import { missingEnvironment } from '../services/model/model-connection.js';
import type { ChatModel, TokenUsage } from '../contract/model-types.js';
import { mcpServicesFor, startMcpServers } from '../features/mcp/run-mcp-servers.js';
import { attemptTask, type TaskAttempts } from './run-attempt.js';
import { attemptFlow } from '../features/flow/flow-attempt.js';
import type { FlowResume } from '../features/flow/flow-resume.js';
import type { FlowStepRecord } from '../features/flow/run-flow.js';
import { connectModel, prepareRun, recordRunStart, runToolbox, type RunModel } from './run-preparation.js';
import { asManusError, finishRun } from './run-result.js';
import type { RunStatus } from './run-status.js';
import type { RunEventListener } from '../services/run-trace.js';
import type { SecretRedactor } from '../services/secret-redaction.js';
import type { ToolWrapper } from '../kernel/toolbox.js';

export type { RunStatus } from './run-status.js';

export interface RunResult {
  runId: string;
  status: RunStatus;
  answer: string;
  structured?: unknown;
  /** The last attempt's check results (skipped ones when the agent did not succeed). */
  checks: CheckResult[];
  /** Attempts made, counting the first. */
  attempts: number;
  /** ISO 8601 time the run (or this resumption of it) started. */
  startedAt: string;
  steps: number;
  usage: TokenUsage;
  /** US dollars, when the model profile has prices. */
  cost?: number;
  exhaustedBudget?: BudgetName;
  /** The error that ended the run; its code is stable, for callers to act on. */
  error?: { code: string; message: string };
  /** The question the run stopped on when its status is `needs-input`. */
  question?: string;
  model: string;
  runDirectory: string;
  workspace: string;
  /** Workspace-relative paths of files written during the run. */
  files: string[];
  durationMs: number;
  /** A flow's steps, in the order they ended, each with its path and status. */
  flowSteps?: FlowStepRecord[];
}

export interface RunOptions {
  cwd: string;
  environment: Record<string, string | undefined>;
  signal: AbortSignal;
  runsDirectory?: string;
  interactive: boolean;
  answers?: string[];
  onEvent?: RunEventListener;
  onTextDelta?: (text: string) => void;
  /** Continue an earlier run in its own folder and workspace, from its recorded history (a flow's, from each step's). */
  resume?: { runId: string; runDirectory: string; workspace: string; state: ResumeState; flow?: FlowResume };
  /** Answers instead of the provider: recorded replies, when replaying a run. */
  model?: ChatModel;
  /** Extra fields for the run-start event (a replay names what it replays), or the run-resume event. */
  startDetails?: Record<string, unknown>;
  /** Extra fields for the run-end event, from the result (the CLI records the exit code it gives the run). */
  endDetails?: (result: RunResult) => Record<string, unknown>;
  /** Also write every event to this file: a self-contained recording. */
  recordFile?: string;
  /** Hides the run's secrets; built from the profile and environment when not given. */
  redactor?: SecretRedactor;
  /** A folder the workspace starts as a copy of (relative to `cwd`); recorded so a replay can do the same. */
  workspaceSource?: string;
  /** Wraps every tool the run offers, those that join while it runs (MCP servers' tools) included. */
  wrapTool?: ToolWrapper;
  /** A budget shared with other runs (a batch's totals): told what this run spends, and it stops when the budget is gone. */
  sharedBudget?: SharedBudget;
}

/** Fails before anything starts when variables the configuration names are missing, listing them all. */
export function checkEnvironment(plan: RunPlan, environment: Record<string, string | undefined>): void {
  const missing = missingEnvironment(plan.profile, environment);
  if (missing.length === 0) return;
  throw new ConfigError([{
    severity: 'error',
    message: `model profile '${plan.profile.name}' needs environment variables that are not set: ${missing.join(', ')}`,
    location: plan.profile.location,
  }]);
}

export async function executeRun(plan: RunPlan, options: RunOptions): Promise<RunResult> {
  assertTrustGranted(plan);
  if (!options.model) checkEnvironment(plan, options.environment);
  const run = prepareRun(plan, options);
  let model: RunModel | undefined;
  let attempts: TaskAttempts | undefined;
  let failure: ManusError | undefined;
  try {
    model = await connectModel(plan, options, run);
    const toolbox = runToolbox(plan, options);
    recordRunStart(run, plan, options, model, toolbox);
    await startMcpServers(plan, mcpServicesFor(run, options, model.model, toolbox.tools));
    attempts = plan.flow ? await attemptFlow(run, { ...plan, flow: plan.flow }, options, model, toolbox) : await attemptTask(run, plan, options, model, toolbox);
  } catch (error) {
    failure = asManusError(error);
  }
  return finishRun(run, plan, options, { attempts, failure, model });
}
