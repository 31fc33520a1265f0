/**
 * The agent's work on the task: the loop, then the recipe's checks. A failed check gives the agent
 * another attempt, in the same conversation with the failures added, while `retry` allows. The
 * loop is given what it uses; tools and context providers get their own inputs from here.
 */
import { runAgentLoop, type LoopOutcome, type LoopSettings, type ResumeState } from '../kernel/agent-loop.js';
import type { RunPlan } from './recipe/resolve-recipe.js';
import { TokenCounter } from '../services/model/token-counter.js';
import type { PreparedRun, RunModel, RunOptions, RunToolbox, TaskAttempts } from './run-types.js';
import { sandboxForRun } from '../services/sandbox/run-sandbox.js';
import { imageRecorder } from '../kernel/run-images.js';
import { agentToolPrefix } from '../features/flow/agent-tool-names.js';
import type { ToolContext } from '../contract/tool.js';
import { attemptWithChecks } from '../features/checks/check-attempts.js';
import { requireCostBudgetPrices } from '../services/model/cost-budget-prices.js';
import { profilePriceBook } from '../services/model/pricing.js';
import { WorkspaceFiles } from '../services/workspace-files.js';

export type { TaskAttempts } from './run-types.js';

/** Runs the attempts; a stray error the fault guard cannot pin on a tool call ends them at once. */
export async function attemptTask(run: PreparedRun, plan: RunPlan, options: RunOptions, model: RunModel, toolbox: RunToolbox): Promise<TaskAttempts> {
  const loopSettings = { ...loopSettingsFor(run, plan, options, model, toolbox), ...(await agentCalls(run, plan, options, model, toolbox)) };
  if (plan.budgets.cost !== undefined && loopSettings.prices) {
    await requireCostBudgetPrices(plan.profile, model.connection?.model ?? plan.profile.model ?? 'recorded', loopSettings.prices);
  }
  let previous: LoopOutcome | undefined;
  const attempts = attemptWithChecks({
    checks: plan.recipe.checks,
    retry: plan.recipe.retry,
    trace: run.trace,
    checkInput: {
      workspace: run.workspace,
      responseSchema: plan.recipe.response,
      signal: options.signal,
      sandbox: async () => {
        await run.protectedPaths.ready();
        return sandboxForRun(run);
      },
    },
    attempt: async (retryText) => {
      if (retryText === undefined || !previous) return (previous = await runAgentLoop(loopSettings));
      const retryMessage = { role: 'user' as const, content: retryText };
      run.trace.emit('message', { step: previous.steps, message: retryMessage });
      const resume: ResumeState = { history: [...previous.history, retryMessage], step: previous.steps, usage: previous.usage, cost: previous.cost, files: previous.files };
      return (previous = await runAgentLoop({ ...loopSettings, resume }));
    },
  });
  return Promise.race([run.faults.fatal, attempts]);
}

/** The agents the run's agent may call as tools (`agent:<name>`): offered beside its own, their spending counted as its. */
async function agentCalls(run: PreparedRun, plan: RunPlan, options: RunOptions, model: RunModel, toolbox: RunToolbox): Promise<Partial<LoopSettings>> {
  const called = plan.agent.tools.filter((name) => name.startsWith(agentToolPrefix)).map((name) => name.slice(agentToolPrefix.length));
  if (called.length === 0) return {};
  const [{ AgentRunner, SpendingMeter }, { AgentToolbox }, { combineSpending, UsageLedger }] = await Promise.all([
    import('./flow/agent-runner.js'),
    import('../features/flow/agent-toolbox.js'),
    import('../services/model/usage-ledger.js'),
  ]);
  const runner = new AgentRunner({ run, plan, options, model, toolbox: toolbox.tools });
  const meter = new SpendingMeter(options.sharedBudget);
  const calledUsage = new UsageLedger();
  const tools = runner.callableTools(called, { budgets: plan.budgets }, meter, calledUsage);
  return {
    tools: new AgentToolbox(toolbox.tools, 'all', new Map(tools.map((tool) => [tool.name, tool]))),
    sharedBudget: meter,
    outsideUsage: { take: () => combineSpending(run.outsideUsage.take(), calledUsage.take()) },
  };
}

function loopSettingsFor(run: PreparedRun, plan: RunPlan, options: RunOptions, { model, connection }: RunModel, toolbox: RunToolbox): LoopSettings {
  return {
    agent: plan.agent,
    task: plan.task,
    model,
    tools: toolbox.tools,
    calledTools: plan.calledTools,
    contextProviders: plan.contextProviders,
    budgets: plan.budgets,
    sharedBudget: options.sharedBudget,
    responseSchema: toolbox.responseSchema,
    trace: run.trace,
    tokenCounter: new TokenCounter(connection?.model ?? plan.profile.model ?? 'gpt-4o'),
    vision: plan.profile.vision,
    prices: model.prices ?? profilePriceBook(plan.profile),
    contextWindow: plan.profile.contextWindow,
    resume: options.resume?.state,
    signal: options.signal,
    onTextDelta: options.onTextDelta,
    faults: run.faults,
    outsideUsage: run.outsideUsage,
    recordImages: imageRecorder(run.runDirectory, run.trace),
    approvals: run.approvals,
    toolContext: toolContexts(run, plan, options, { model, connection }),
    contextProviderInput: (provider, step) => ({
      ...step,
      runId: run.runId,
      workspace: run.workspace,
      runDirectory: run.runDirectory,
      resources: run.resources,
      vision: plan.profile.vision,
      settings: plan.toolSettings[provider] ?? {},
    }),
  };
}

/** What each tool call is given: the run's services, and its own step, id, signal and logger. */
function toolContexts(run: PreparedRun, plan: RunPlan, options: RunOptions, { model }: RunModel): LoopSettings['toolContext'] {
  const { trace, human } = run;
  const modelAccess: ToolContext['model'] = {
    complete: async (messages, accessOptions) => {
      const reply = await model.complete({ messages, responseSchema: accessOptions?.responseSchema, signal: accessOptions?.signal ?? options.signal });
      return reply.content ?? '';
    },
  };
  // One per run: it holds only the workspace's real path, which every operation opens afresh.
  let files: WorkspaceFiles | undefined;
  return async (call) => {
    // Before the first call does anything: the state every later check compares with.
    await run.protectedPaths.ready();
    files ??= new WorkspaceFiles(run.workspace, run.protectedPaths);
    return {
      runId: run.runId,
      workspace: run.workspace,
      runDirectory: run.runDirectory,
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
      resources: run.resources,
      human,
      settings: plan.toolSettings[call.name] ?? {},
      sandboxSettings: run.sandboxSettings,
      sandbox: () => sandboxForRun(run),
      network: run.network,
      protectedPaths: run.protectedPaths,
      files,
    };
  };
}
