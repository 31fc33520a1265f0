/**
 * One run of a resolved plan: its id, folder, workspace and trace; the model connection; the
 * loop; and a result that says exactly how it ended. Resources are released however it ends.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, realpathSync, rmdirSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { hostname } from 'node:os';
import { runAgentLoop, type BudgetName, type LoopOutcome, type LoopSettings, type ResumeState } from './agent-loop.js';
import { attemptWithChecks } from './checks/check-attempts.js';
import type { CheckResult } from './checks/check-types.js';
import { ProtectedPaths, protectedPathsFor } from './protected-paths.js';
import { sandboxForRun } from './sandbox/run-sandbox.js';
import { chooseRunSandbox, requestedSandbox } from './sandbox/sandbox-choice.js';
import { killLeftoverProcesses } from './sandbox/process-records.js';
import type { RunPlan } from './config/resolve-recipe.js';
import { assertTrustGranted } from './config/trust-consent.js';
import { ConfigError, ExitCode, ManusError, type ExitCodeValue, type HumanInputNeededError } from './errors.js';
import { FinalAnswerSchema } from './final-answer.js';
import { askOnTerminal, createHumanChannel } from './human-channel.js';
import { ModelClient } from './model/model-client.js';
import { missingEnvironment, resolveModelConnection, type ModelConnection } from './model/model-connection.js';
import type { ChatModel, TokenUsage } from './model/model-types.js';
import { redactingModel } from './model/redacting-model.js';
import { TokenCounter } from './model/token-counter.js';
import { RunResourceRegistry } from './run-resources.js';
import { RunTrace, type RunEventListener } from './run-trace.js';
import { SecretRedactor } from './secret-redaction.js';
import { RunFaultGuard } from './tool-fault-guard.js';
import type { AnyToolDefinition, SandboxSettings, ToolContext } from './tool.js';
import { compareSnapshots, snapshotWorkspace, type WorkspaceSnapshot } from './sandbox/workspace-changes.js';
import { copyWorkspaceSource } from './workspace-source.js';

export type RunStatus = LoopOutcome['status'] | 'checks-failed' | 'provider-failed' | 'permission-denied' | 'needs-input' | 'error';

export interface RunResult {
  runId: string;
  status: RunStatus;
  exitCode: ExitCodeValue;
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
  error?: { code: string; message: string };
  /** The question the run stopped on when its status is `needs-input`. */
  question?: string;
  model: string;
  runDirectory: string;
  workspace: string;
  /** Workspace-relative paths of files written during the run. */
  files: string[];
  durationMs: number;
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
  /** Continue an earlier run in its own folder and workspace, from its recorded history. */
  resume?: { runId: string; runDirectory: string; workspace: string; state: ResumeState };
  /** Answers instead of the provider: recorded replies, when replaying a run. */
  model?: ChatModel;
  /** Extra fields for the run-start event (a replay names what it replays), or the run-resume event. */
  startDetails?: Record<string, unknown>;
  /** Also write every event to this file: a self-contained recording. */
  recordFile?: string;
  /** Hides the run's secrets; built from the profile and environment when not given. */
  redactor?: SecretRedactor;
  /** A folder the workspace starts as a copy of (relative to `cwd`); recorded so a replay can do the same. */
  workspaceSource?: string;
}

export function newRunId(now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return `${stamp}-${randomBytes(3).toString('hex')}`;
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

export function runsDirectoryFor(cwd: string, environment: Record<string, string | undefined>, runsDirectory?: string): string {
  return resolve(cwd, runsDirectory ?? environment.MANUS_RUNS_DIR ?? join('.manus', 'runs'));
}

export async function executeRun(plan: RunPlan, options: RunOptions): Promise<RunResult> {
  assertTrustGranted(plan);
  if (!options.model) checkEnvironment(plan, options.environment);
  const started = performance.now();
  const startedAt = Date.now();
  const runId = options.resume?.runId ?? newRunId();
  const runsDirectory = runsDirectoryFor(options.cwd, options.environment, options.runsDirectory);
  const runDirectory = options.resume?.runDirectory ?? join(runsDirectory, runId);
  const workspace = options.resume?.workspace ?? resolve(options.cwd, plan.workspace ?? join('workspace', runId));
  const workspaceSource = options.workspaceSource === undefined ? undefined : resolve(options.cwd, options.workspaceSource);
  if (workspaceSource) copyWorkspaceSource(workspaceSource, workspace);
  mkdirSync(runDirectory, { recursive: true });
  mkdirSync(workspace, { recursive: true });
  const realWorkspace = realpathSync(workspace);
  // What was there before, so the result lists only what the run wrote; taken while the run starts.
  const workspaceBefore = snapshotWorkspace(realWorkspace);

  const redactor = options.redactor ?? SecretRedactor.forRun(plan.profile, options.environment);
  const trace = new RunTrace(join(runDirectory, 'events.jsonl'), redactor, options.recordFile);
  if (options.onEvent) trace.onEvent(options.onEvent);
  const resources = new RunResourceRegistry();
  // A tool's stray asynchronous error becomes its call's error result instead of ending the process.
  const faults = new RunFaultGuard(trace);
  faults.start();
  // What the loop had done when an error cut it short: its last finished step.
  let progress = { step: options.resume?.state.step ?? 0, usage: options.resume?.state.usage };
  trace.onEvent((type, data) => {
    if (type === 'step-end') progress = { step: data.step as number, usage: data.usage as TokenUsage };
  });
  // Commands a killed runtime left running on the host, recorded in their run folders.
  const leftovers = killLeftoverProcesses(dirname(runDirectory));
  if (leftovers.killed.length > 0) trace.emit('sandbox-cleanup', { killedProcesses: leftovers.killed });
  // Chosen when a tool first needs it, so runs that execute no code never probe for a sandbox.
  let sandbox: Promise<SandboxSettings> | undefined;
  const hostConsent = {
    trustGrants: plan.trustGrants,
    ask: options.interactive ? (question: string) => askOnTerminal(question, {}, options.signal) : undefined,
  };
  const sandboxSettings = () => (sandbox ??= chooseRunSandbox(plan, hostConsent, trace));
  // What the runtime, git or a shell would later load or run on the host; kept as it is now.
  const protectedPaths = new ProtectedPaths(
    () => protectedPathsFor(plan, { cwd: options.cwd, workspace: realWorkspace, runsDirectory, environment: options.environment }),
    {
      display: (path) => relativeToCwd(options.cwd, path),
      repositoryRoots: [...new Set([options.cwd, realWorkspace])],
      onChanged: (changes) => trace.emit('protected-path-changed', {
        changes: changes.map((change) => ({ ...change, path: relativeToCwd(options.cwd, change.path) })),
      }),
    },
  );

  let connection: ModelConnection | undefined;
  let outcome: LoopOutcome | undefined;
  let checkResults: CheckResult[] = [];
  let attemptCount = 1;
  let checksFailed = false;
  let failure: ManusError | undefined;
  try {
    let model: ChatModel;
    if (options.model) {
      model = options.model;
    } else {
      connection = await resolveModelConnection(plan.profile, options.environment, { modelOverride: plan.modelOverride });
      const client = new ModelClient(connection, { onRetry: (notice) => trace.emit('model-retry', { ...notice }) });
      client.prepare();
      model = redactingModel(client, redactor);
    }
    const tools = new Map<string, AnyToolDefinition>(plan.tools);
    const responseSchema = plan.recipe.response ? new FinalAnswerSchema(plan.recipe.response) : undefined;
    if (responseSchema) tools.set(responseSchema.tool().name, responseSchema.tool());
    if (options.resume) {
      trace.emit('run-resume', { runId, step: options.resume.state.step, messages: options.resume.state.history.length, budgets: plan.budgets, pid: process.pid, host: hostname(), ...options.startDetails });
    } else trace.emit('run-start', {
      runId,
      // Which process runs it, so a listing can tell a live run from one that was killed.
      pid: process.pid,
      host: hostname(),
      // Paths relative to the current folder keep recordings free of machine-specific paths.
      recipe: { name: plan.recipe.name, file: relativeToCwd(options.cwd, plan.recipe.file), overrides: plan.overrides, workspace: plan.recipe.workspace },
      agent: plan.agent.name,
      agentSettings: { finishOnText: plan.agent.finishOnText, toolChoice: plan.agent.toolChoice },
      model: connection
        ? { profile: plan.profile.name, provider: connection.provider, baseUrl: connection.baseUrl, model: connection.model }
        : { profile: plan.profile.name, provider: 'recorded', model: 'recorded' },
      budgets: plan.budgets,
      tools: [...tools.keys()],
      sandbox: requestedSandbox(plan).kind,
      // What the user granted, for the record; a resumed run needs the grants given again.
      trust: [...plan.trustGrants],
      workspace: relativeToCwd(options.cwd, realWorkspace),
      workspaceSource: workspaceSource && relativeToCwd(options.cwd, workspaceSource),
      systemPrompt: plan.agent.systemPrompt,
      task: plan.task,
      response: plan.recipe.response,
      ...options.startDetails,
    });
    const human = createHumanChannel({
      interactive: options.interactive,
      answers: options.answers ?? [],
      recipeAnswers: plan.recipe.answers,
      onAsked: (question, answer, source) => trace.emit('human-answer', { question, answer, source }),
    });
    const modelAccess: ToolContext['model'] = {
      complete: async (messages, accessOptions) => {
        const reply = await model.complete({ messages, responseSchema: accessOptions?.responseSchema, signal: accessOptions?.signal ?? options.signal });
        return reply.content ?? '';
      },
    };
    const loopSettings: LoopSettings = {
      agent: plan.agent,
      task: plan.task,
      model,
      tools,
      contextProviders: plan.contextProviders,
      budgets: plan.budgets,
      responseSchema,
      trace,
      tokenCounter: new TokenCounter(connection?.model ?? plan.profile.model ?? 'gpt-4o'),
      vision: plan.profile.vision,
      prices: plan.profile.price,
      contextWindow: plan.profile.contextWindow,
      resume: options.resume?.state,
      signal: options.signal,
      runId,
      workspace: realWorkspace,
      runDirectory,
      resources,
      onTextDelta: options.onTextDelta,
      toolSettings: plan.toolSettings,
      faults,
      toolContext: async (call) => {
        // Before the first call does anything: the state every later check compares with.
        await protectedPaths.ready();
        return {
          runId,
          workspace: realWorkspace,
          runDirectory,
          step: call.step,
          callId: call.id,
          signal: call.signal,
          logger: {
            info: (message) => trace.emit('tool-log', { level: 'info', tool: call.name, message }),
            warn: (message) => trace.emit('tool-log', { level: 'warn', tool: call.name, message }),
            debug: (message) => trace.emit('tool-log', { level: 'debug', tool: call.name, message }),
          },
          trace,
          model: modelAccess,
          resources,
          human,
          settings: plan.toolSettings[call.name] ?? {},
          sandboxSettings,
          sandbox: () => sandboxForRun({ resources, sandboxSettings, workspace: realWorkspace, runDirectory, runId, protectedPaths }),
          protectedPaths,
        };
      },
    };
    // Checks run after the agent succeeds; a failed check gives the agent another attempt, in the
    // same conversation, with the failures added, while `retry` allows.
    let previous: LoopOutcome | undefined;
    const attempts = await Promise.race([faults.fatal, attemptWithChecks({
      checks: plan.recipe.checks,
      retry: plan.recipe.retry,
      trace,
      checkInput: {
        workspace: realWorkspace,
        responseSchema: plan.recipe.response,
        signal: options.signal,
        sandbox: async () => {
          await protectedPaths.ready();
          return sandboxForRun({ resources, sandboxSettings, workspace: realWorkspace, runDirectory, runId, protectedPaths });
        },
      },
      attempt: async (retryText) => {
        if (retryText === undefined || !previous) return (previous = await runAgentLoop(loopSettings));
        const retryMessage = { role: 'user' as const, content: retryText };
        trace.emit('message', { step: previous.steps, message: retryMessage });
        const resume: ResumeState = { history: [...previous.history, retryMessage], step: previous.steps, usage: previous.usage, files: previous.files };
        return (previous = await runAgentLoop({ ...loopSettings, resume }));
      },
    })]);
    outcome = attempts.outcome;
    checkResults = attempts.checks;
    attemptCount = attempts.attempts;
    if (attempts.interrupted) outcome = { ...outcome, status: 'interrupted', answer: 'The run was interrupted while its checks ran.' };
    else if (attempts.checksFailed) checksFailed = true;
  } catch (error) {
    failure = asManusError(error);
  }
  let disposalProblems: string[];
  try {
    disposalProblems = await resources.disposeAll();
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
  const lateChange = await protectedPaths.verify().then(() => undefined, (error: ManusError) => error);
  if (lateChange && failure?.code !== 'permission_denied') failure = lateChange;

  const files = await filesWritten(realWorkspace, await workspaceBefore, outcome?.files ?? []);
  const result: RunResult = {
    runId,
    status: failure ? statusOf(failure) : checksFailed ? 'checks-failed' : outcome!.status,
    exitCode: failure ? failure.exitCode : checksFailed ? ExitCode.taskFailed : exitCodeOf(outcome!.status),
    answer: failure ? answerFor(failure, runId) : outcome!.answer,
    checks: checkResults,
    attempts: attemptCount,
    startedAt: new Date(startedAt).toISOString(),
    structured: outcome?.structured,
    steps: outcome?.steps ?? progress.step,
    usage: outcome?.usage ?? progress.usage ?? { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
    cost: plan.profile.price ? outcome?.cost : undefined,
    exhaustedBudget: outcome?.exhaustedBudget,
    error: failure ? { code: failure.code, message: failure.message } : undefined,
    question: failure?.code === 'needs_input' ? (failure as HumanInputNeededError).question : undefined,
    model: connection?.model ?? (options.model ? 'recorded' : ''),
    runDirectory,
    workspace: realWorkspace,
    files,
    durationMs: Math.round(performance.now() - started),
  };
  // Where the run lives is known from the file's own place; keep machine paths out of recordings.
  const { runId: _runId, runDirectory: _runDirectory, workspace: _workspace, ...ending } = result;
  if (!trace.failure) trace.emit('run-end', ending);
  trace.close();
  if (plan.workspace === undefined) removeIfEmpty(realWorkspace);
  return result;
}

function relativeToCwd(cwd: string, path: string): string {
  const relativePath = relative(cwd, path);
  return relativePath.startsWith('..') || isAbsolute(relativePath) ? path : relativePath || '.';
}

function asManusError(error: unknown): ManusError {
  if (error instanceof ManusError || hasExitCode(error)) return error as ManusError;
  return new ManusError('internal_error', error instanceof Error ? error.stack ?? error.message : String(error), ExitCode.taskFailed);
}

function hasExitCode(error: unknown): boolean {
  return typeof error === 'object' && error !== null && typeof (error as { exitCode?: unknown }).exitCode === 'number'
    && typeof (error as { code?: unknown }).code === 'string';
}

function statusOf(error: ManusError): RunStatus {
  if (error.code === 'needs_input') return 'needs-input';
  if (error.exitCode === ExitCode.providerFailed) return 'provider-failed';
  if (error.exitCode === ExitCode.permissionDenied) return 'permission-denied';
  if (error.exitCode === ExitCode.interrupted) return 'interrupted';
  return 'error';
}

/** A run waiting for an answer says how to give it. */
function answerFor(error: ManusError, runId: string): string {
  if (error.code !== 'needs_input') return error.message;
  return `${error.message}; answer it with: manus resume ${runId} --answer "..."`;
}

export function exitCodeOf(status: LoopOutcome['status']): ExitCodeValue {
  switch (status) {
    case 'success':
      return ExitCode.success;
    case 'budget-exhausted':
      return ExitCode.budgetExhausted;
    case 'interrupted':
      return ExitCode.interrupted;
    case 'failure':
    case 'stuck':
      return ExitCode.taskFailed;
  }
}

async function filesWritten(workspace: string, before: WorkspaceSnapshot, reported: string[]): Promise<string[]> {
  const changes = compareSnapshots(before, await snapshotWorkspace(workspace));
  return [...new Set([...reported, ...changes.created, ...changes.modified])].sort();
}

function removeIfEmpty(folder: string): void {
  try {
    if (readdirSync(folder).length === 0) rmdirSync(folder);
  } catch {
    // Tidying an unused default workspace is a courtesy; failing to is harmless.
  }
}
