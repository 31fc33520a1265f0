/**
 * What a run sets up before its first model call: its id, folder and workspace; the trace, the
 * per-run resources and the fault guard; the sandbox, chosen when a tool first needs it; the
 * protected paths; the model; the toolbox; and the run-start (or run-resume) event recording them.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, realpathSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import type { TokenUsage } from '../contract/model-types.js';
import type { SandboxSettings } from '../contract/tool.js';
import { FinalAnswerSchema } from '../kernel/final-answer.js';
import { currentToolCall, RunFaultGuard } from '../kernel/tool-fault-guard.js';
import { Toolbox } from '../kernel/toolbox.js';
import { agentToolName, agentToolPrefix } from '../features/flow/agent-tool-names.js';
import { askOnTerminal, createHumanChannel } from '../services/human-channel.js';
import { createApprovalGate } from '../services/permissions/approval-gate.js';
import { UsageLedger } from '../services/model/usage-ledger.js';
import { connectProfileModel } from '../services/model/profile-model.js';
import { EgressPolicy } from '../services/network/egress-policy.js';
import { createToolNetwork } from '../services/network/tool-network.js';
import { controlEntryRoots, ProtectedPaths } from '../services/protected-paths/protected-paths.js';
import { RunResourceRegistry } from '../services/run-resources.js';
import { RunTrace } from '../services/run-trace.js';
import { killLeftoverProcesses } from '../services/sandbox/process-records.js';
import { chooseRunSandbox, requestedSandbox } from '../services/sandbox/sandbox-choice.js';
import { snapshotWorkspace } from '../services/sandbox/workspace-changes.js';
import { redactorForPlan } from './plan-secrets.js';
import { protectedPathsFor } from './protected-path-list.js';
import type { RunPlan } from './recipe/resolve-recipe.js';
import type { PreparedRun, RunModel, RunOptions, RunToolbox } from './run-types.js';
import { copyWorkspaceSource } from './workspace-source.js';

export type { PreparedRun, RunModel, RunToolbox };

export function newRunId(now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return `${stamp}-${randomBytes(3).toString('hex')}`;
}

export function runsDirectoryFor(cwd: string, environment: Record<string, string | undefined>, runsDirectory?: string): string {
  return resolve(cwd, runsDirectory ?? environment.MANUS_RUNS_DIR ?? join('.manus', 'runs'));
}

/** Creates the run's folders and services; the fault guard is running when this returns. */
export function prepareRun(plan: RunPlan, options: RunOptions): PreparedRun {
  const started = performance.now();
  const startedAt = new Date();
  const runId = options.resume?.runId ?? newRunId();
  const runsDirectory = runsDirectoryFor(options.cwd, options.environment, options.runsDirectory);
  const runDirectory = options.resume?.runDirectory ?? join(runsDirectory, runId);
  const workspacePath = options.resume?.workspace ?? resolve(options.cwd, plan.workspace ?? join('workspace', runId));
  const workspaceSource = options.workspaceSource === undefined ? undefined : resolve(options.cwd, options.workspaceSource);
  if (workspaceSource) copyWorkspaceSource(workspaceSource, workspacePath);
  mkdirSync(runDirectory, { recursive: true });
  mkdirSync(workspacePath, { recursive: true });
  const workspace = realpathSync(workspacePath);
  // Taken while the run starts, before any tool can write.
  const workspaceBefore = snapshotWorkspace(workspace);

  const redactor = options.redactor ?? redactorForPlan(plan, options.environment);
  const trace = new RunTrace(join(runDirectory, 'events.jsonl'), redactor, options.recordFile);
  if (options.onEvent) trace.onEvent(options.onEvent);
  const faults = new RunFaultGuard(trace);
  faults.start();
  let progress = { step: options.resume?.state.step ?? 0, usage: options.resume?.state.usage };
  trace.onEvent((type, data) => {
    if (type === 'step-end') progress = { step: data.step as number, usage: data.usage as TokenUsage };
  });
  // Commands a killed runtime left running on the host, recorded in their run folders.
  const leftovers = options.leftoversSwept ? undefined : killLeftoverProcesses(dirname(runDirectory));
  if (leftovers && leftovers.killed.length > 0) trace.emit('sandbox-cleanup', { killedProcesses: leftovers.killed });
  const hostConsent = {
    trustGrants: plan.trustGrants,
    ask: options.interactive ? (question: string) => askOnTerminal(question, {}, options.signal) : undefined,
  };
  let sandbox: Promise<SandboxSettings> | undefined;
  const protectedPaths = new ProtectedPaths(
    () => protectedPathsFor(plan, { cwd: options.cwd, workspace, runsDirectory, environment: options.environment }),
    {
      display: (path) => relativeToCwd(options.cwd, path),
      repositoryRoots: controlEntryRoots({ cwd: options.cwd, workspace }),
      onChanged: (changes) => trace.emit('protected-path-changed', {
        changes: changes.map((change) => ({ ...change, path: relativeToCwd(options.cwd, change.path) })),
      }),
    },
  );
  const resources = new RunResourceRegistry();
  const egress = egressPolicyFor(plan, resources, trace);
  return {
    runId,
    runsDirectory,
    runDirectory,
    workspace,
    workspaceSource,
    workspaceBefore,
    started,
    startedAt,
    redactor,
    trace,
    resources,
    faults,
    progress: () => progress,
    sandboxSettings: () => (sandbox ??= chooseRunSandbox(plan, hostConsent, trace)),
    protectedPaths,
    network: createToolNetwork(plan.networkAccess, egress),
    human: createHumanChannel({
      interactive: options.interactive,
      answers: options.answers ?? [],
      asker: options.asker,
      recipeAnswers: plan.recipe.answers,
      onAsked: (question, answer, source) => trace.emit('human-answer', { question, answer, source }),
    }),
    outsideUsage: new UsageLedger(),
    approvals: createApprovalGate({
      unanswered: options.unansweredApproval ?? 'stop',
      decided: options.approvalDecisions,
      runApprovals: options.resume?.runApprovals,
    }),
  };
}

/**
 * The run's egress policy when its sandbox may reach only named hosts, or the user's
 * `network.only` holds every connection (both: a host must be on both lists, so a recipe only
 * narrows the user's); every refused connection becomes a `connection-refused` event naming the
 * tool call that asked, when there was one.
 */
function egressPolicyFor(plan: RunPlan, resources: RunResourceRegistry, trace: RunTrace): EgressPolicy | undefined {
  const sandbox = requestedSandbox(plan);
  const sandboxHosts = sandbox.network ? undefined : sandbox.allowHosts;
  const hosts = sandboxHosts ?? plan.networkAccess.only;
  if (!hosts) return undefined;
  return new EgressPolicy({
    hosts,
    access: plan.networkAccess,
    resources,
    onRefused: (refusal) => trace.emit('connection-refused', { ...refusal }),
    currentCall: currentToolCall,
  });
}

/** The caller's model (a replay's recorded replies), or a client for the plan's profile, ready to answer. */
export async function connectModel(plan: RunPlan, options: RunOptions, run: PreparedRun): Promise<RunModel> {
  if (options.model) return { model: options.model };
  const connected = await connectProfileModel(plan.profile, { environment: options.environment, modelOverride: plan.modelOverride, trace: run.trace, redactor: run.redactor });
  return options.wrapModel ? { ...connected, model: options.wrapModel(connected.model) } : connected;
}

export function runToolbox(plan: RunPlan, options: Pick<RunOptions, 'wrapTool'> = {}): RunToolbox {
  const tools = new Toolbox(plan.tools, options.wrapTool);
  const responseSchema = plan.recipe.response ? new FinalAnswerSchema(plan.recipe.response) : undefined;
  if (responseSchema) tools.set(responseSchema.tool().name, responseSchema.tool());
  return { tools, responseSchema };
}

/** The first event of a run, or of its resumption: what runs, where, with which model and tools. */
export function recordRunStart(run: PreparedRun, plan: RunPlan, options: RunOptions, model: RunModel, toolbox: RunToolbox): void {
  const { trace, runId } = run;
  if (options.resume) {
    const { state } = options.resume;
    trace.emit('run-resume', { runId, step: state.step, messages: state.history.length, budgets: plan.budgets, pid: process.pid, host: hostname(), ...options.startDetails });
    return;
  }
  const { connection } = model;
  trace.emit('run-start', {
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
    // The agents it may call are tools too, offered as the loop starts.
    tools: [...toolbox.tools.keys(), ...plan.agent.tools.filter((name) => name.startsWith(agentToolPrefix)).map((name) => agentToolName(name.slice(agentToolPrefix.length)))],
    sandbox: requestedSandbox(plan).kind,
    // What the user granted, for the record; a resumed run needs the grants given again.
    trust: [...plan.trustGrants],
    workspace: relativeToCwd(options.cwd, run.workspace),
    workspaceSource: run.workspaceSource && relativeToCwd(options.cwd, run.workspaceSource),
    ...(plan.flow
      ? { flow: { steps: plan.flow.definition.steps.map((step) => ({ name: step.name, kind: step.kind })), parameters: plan.flow.parameters } }
      : { systemPrompt: plan.agent.systemPrompt, task: plan.task, response: plan.recipe.response }),
    ...options.startDetails,
  });
}

function relativeToCwd(cwd: string, path: string): string {
  const relativePath = relative(cwd, path);
  return relativePath.startsWith('..') || isAbsolute(relativePath) ? path : relativePath || '.';
}
