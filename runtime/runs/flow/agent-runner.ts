/**
 * Runs one agent inside a run, as a flow's step or as a tool another agent calls: the one loop,
 * with the agent's own history, tools, model and budgets, events under its path, and resources of
 * its own that are released when it ends. An agent that lists `agent:<name>` is offered that agent
 * as a tool; what the called agent spends counts in its caller's budgets.
 */
import type { AgentConfig, PermissionBlock } from '../../config/types.js';
import { runAgentLoop, type LoopOutcome, type LoopSettings, type ResumeState, type SharedBudget } from '../../kernel/agent-loop.js';
import type { RunBudgets, RunPlan } from '../../config/run-plan.js';
import { FinalAnswerSchema } from '../../kernel/final-answer.js';
import type { ChatModel, TokenUsage } from '../../contract/model-types.js';
import { TokenCounter } from '../../services/model/token-counter.js';
import type { PreparedRun, RunModel, RunOptions } from '../run-types.js';
import { RunResourceRegistry } from '../../services/run-resources.js';
import { imageRecorder } from '../../kernel/run-images.js';
import { sandboxForRun } from '../../services/sandbox/run-sandbox.js';
import { defineTool, type AnyToolDefinition, type JsonSchema, type ToolContext, type TraceWriter } from '../../contract/tool.js';
import type { Toolbox } from '../../kernel/toolbox.js';
import { agentToolName } from '../../features/flow/agent-tool-names.js';
import { AgentToolbox } from '../../features/flow/agent-toolbox.js';
import { addUsage, zeroUsage } from '../../contract/token-usage.js';
import type { FlowAgent } from '../../config/flow-plan.js';
import { connectProfileModel } from '../../services/model/profile-model.js';
import { requireCostBudgetPrices } from '../../services/model/cost-budget-prices.js';
import { profilePriceBook } from '../../services/model/pricing.js';
import { combineSpending, UsageLedger } from '../../services/model/usage-ledger.js';
import { WorkspaceFiles } from '../../services/workspace-files.js';

export interface AgentRunRequest {
  agent: FlowAgent;
  task: string;
  /** Where its events go; none for the run's own agent. */
  path?: string;
  budgets: RunBudgets;
  response?: JsonSchema;
  resume?: ResumeState;
  signal: AbortSignal;
  sharedBudget?: SharedBudget;
  /** Blocks of the flow steps it runs in, decided beside its own permissions. */
  permissionBlocks?: PermissionBlock[];
}

export interface AgentRunnerServices {
  run: PreparedRun;
  plan: RunPlan;
  options: RunOptions;
  model: RunModel;
  /** The run's tools, MCP servers' among them; each agent is offered its own. */
  toolbox: Toolbox;
}

/** A model that answers each part of a run from its own recorded replies (a replay). */
interface PathScopedModel extends ChatModel {
  forPath(path: string): ChatModel;
}

export class AgentRunner {
  private readonly models = new Map<string, Promise<ChatModel>>();
  /** One for the run's tool calls: it holds only the workspace's real path, which every operation opens afresh. */
  private files: WorkspaceFiles | undefined;

  constructor(private readonly services: AgentRunnerServices) {}

  async run(request: AgentRunRequest): Promise<LoopOutcome> {
    const { run } = this.services;
    const { agent, path } = request;
    const resources = new RunResourceRegistry();
    const trace = path === undefined ? run.trace : run.trace.at(path);
    const responseSchema = request.response ? new FinalAnswerSchema(request.response) : undefined;
    const meter = new SpendingMeter(request.sharedBudget);
    const calledUsage = new UsageLedger();
    const own = new Map<string, AnyToolDefinition>();
    if (responseSchema) own.set(responseSchema.tool().name, responseSchema.tool());
    for (const tool of this.callableTools(agent.agentTools, request, meter, calledUsage)) own.set(tool.name, tool);
    const model = await this.modelFor(agent, path);
    const settings: LoopSettings = {
      agent: withStepPermissions(agent.config, request.permissionBlocks),
      task: request.task,
      model,
      tools: new AgentToolbox(this.services.toolbox, [...agent.tools, ...agent.mcpToolNames], own),
      calledTools: this.services.plan.calledTools,
      contextProviders: agent.contextProviders,
      budgets: request.budgets,
      responseSchema,
      trace,
      tokenCounter: new TokenCounter(agent.profile.model ?? this.services.plan.profile.model ?? 'gpt-4o'),
      vision: agent.profile.vision,
      prices: model.prices ?? profilePriceBook(agent.profile),
      contextWindow: agent.profile.contextWindow,
      resume: request.resume,
      signal: request.signal,
      onTextDelta: this.services.options.onTextDelta,
      faults: run.faults,
      outsideUsage: { take: () => combineSpending(calledUsage.take(), run.outsideUsage.take()) },
      sharedBudget: meter,
      recordImages: imageRecorder(run.runDirectory, trace),
      approvals: run.approvals,
      toolContext: (call) => this.toolContext(agent, trace, resources, call),
      contextProviderInput: (provider, step) => ({
        ...step,
        runId: run.runId,
        workspace: run.workspace,
        runDirectory: run.runDirectory,
        resources,
        vision: agent.profile.vision,
        settings: agent.toolSettings[provider] ?? {},
      }),
    };
    // A flow's agent may use a profile of its own, with a model named only once it connected.
    if (settings.prices && (request.budgets.cost !== undefined || this.services.plan.budgets.cost !== undefined)) {
      await requireCostBudgetPrices(agent.profile, agent.modelOverride ?? agent.profile.model ?? 'recorded', settings.prices);
    }
    try {
      return await runAgentLoop(settings);
    } finally {
      for (const problem of await resources.disposeAll()) trace.emit('resource-dispose-failed', { problem });
    }
  }

  /**
   * The agents this one may call, as tools taking a task. A call runs the called agent under the
   * caller's path, within what the caller's budgets have left, and its spending joins the caller's.
   */
  callableTools(names: readonly string[], caller: Pick<AgentRunRequest, 'path' | 'budgets'>, meter: SpendingMeter, calledUsage: UsageLedger): AnyToolDefinition[] {
    return names.map((name) => {
      const callee = this.services.plan.callableAgents.get(name)!;
      return defineTool({
        name: agentToolName(name),
        description: `Give a task to the agent '${name}' and get its answer. ${callee.config.description}`.trim(),
        parameters: {
          type: 'object',
          required: ['task'],
          properties: { task: { type: 'string', minLength: 1, description: 'The whole task, with everything the agent needs to know: it sees nothing else of this conversation.' } },
        },
        execute: async ({ task }, context) => {
          const { budgets } = caller;
          const outcome = await this.run({
            agent: callee,
            task,
            path: `${caller.path === undefined ? '' : `${caller.path}/`}${agentToolName(name)}/${context.callId}`,
            budgets: {
              steps: callee.config.maxSteps,
              tokens: budgets.tokens === undefined ? undefined : Math.max(0, budgets.tokens - meter.spent.usage.totalTokens),
              cost: budgets.cost === undefined ? undefined : Math.max(0, budgets.cost - meter.spent.cost),
            },
            signal: context.signal,
            // The caller's shared budgets stop the called agent too; its spending reaches them through the caller.
            sharedBudget: { spend: () => undefined, exhausted: () => meter.exhausted() },
          });
          calledUsage.add(outcome.usage, outcome.cost ?? null);
          if (outcome.status === 'success') return { content: outcome.answer, files: outcome.files };
          return { content: `The agent '${name}' did not finish its task (${outcome.status}): ${outcome.answer}`, isError: true, files: outcome.files };
        },
      });
    });
  }

  /** What a tool of the agent is given: the run's services, with resources of the agent's own. */
  private async toolContext(agent: FlowAgent, trace: TraceWriter, resources: RunResourceRegistry, call: { id: string; step: number; name: string; signal: AbortSignal }): Promise<ToolContext> {
    const { run, options } = this.services;
    await run.protectedPaths.ready();
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
      model: {
        complete: async (messages, access) => {
          const model = await this.modelFor(agent, undefined);
          const reply = await model.complete({ messages, responseSchema: access?.responseSchema, signal: access?.signal ?? options.signal });
          return reply.content ?? '';
        },
      },
      resources,
      human: run.human,
      settings: agent.toolSettings[call.name] ?? {},
      sandboxSettings: run.sandboxSettings,
      sandbox: () => sandboxForRun(run),
      network: run.network,
      protectedPaths: run.protectedPaths,
      files: (this.files ??= new WorkspaceFiles(run.workspace, run.protectedPaths)),
    };
  }

  /**
   * The model an agent talks to: the run's for the run's profile, a client of its own for another
   * profile, or, in a replay, the recorded replies of the agent's path.
   */
  private async modelFor(agent: FlowAgent, path: string | undefined): Promise<ChatModel> {
    const { plan, options, run, model } = this.services;
    if (options.model) {
      const given = options.model as Partial<PathScopedModel>;
      return path !== undefined && typeof given.forPath === 'function' ? given.forPath(path) : options.model;
    }
    if (agent.profile.name === plan.profile.name && agent.modelOverride === plan.modelOverride) return model.model;
    const key = `${agent.profile.name}\u0000${agent.modelOverride ?? ''}`;
    let connected = this.models.get(key);
    if (!connected) {
      connected = connectProfileModel(agent.profile, { environment: options.environment, modelOverride: agent.modelOverride, trace: run.trace, redactor: run.redactor })
        .then(({ model: profileModel }) => profileModel);
      this.models.set(key, connected);
    }
    return connected;
  }
}

/** What one loop has spent, passed on to the budget it shares with others. */
export class SpendingMeter implements SharedBudget {
  readonly spent = { usage: zeroUsage(), cost: 0 };

  constructor(private readonly shared: SharedBudget | undefined) {}

  spend(spent: { steps?: number; usage?: TokenUsage; cost?: number }): void {
    if (spent.usage) this.spent.usage = addUsage(this.spent.usage, spent.usage);
    this.spent.cost += spent.cost ?? 0;
    this.shared?.spend(spent);
  }

  exhausted() {
    return this.shared?.exhausted();
  }
}


/** The agent with the blocks of the steps it runs in added to its policy: they can only tighten it. */
function withStepPermissions(config: AgentConfig, blocks: PermissionBlock[] | undefined): AgentConfig {
  if (!blocks || blocks.length === 0) return config;
  const own = config.permissionPolicy ?? { blocks: [{ source: `agent '${config.name}'`, settings: config.permissions }] };
  return { ...config, permissionPolicy: { blocks: [...own.blocks, ...blocks] } };
}
