/**
 * Replays a recorded run with the model's recorded replies, so no model is needed: with the
 * recorded tool results (a faithful demo), or with the real tools (a regression test of the
 * recipe's tools), reporting the first step where the new run departs from the recording.
 */
import { readCompaction, readPermissions } from '../config/agent-definition.js';
import { agentDefaults, recipeDefaults } from '../config/defaults.js';
import type { RunPlan } from './recipe/resolve-recipe.js';
import type { AgentConfig } from '../config/types.js';
import { emptyAgentsConfig, readModelProfile } from './recipe/load-agents.js';
import type { ChatModel, ModelReply, ModelRequest } from '../contract/model-types.js';
import { defaultNetworkAccess } from '../services/network/guarded-lookup.js';
import { recordedReplies, recordedToolResults, type RecordedReply, type RecordedRun } from './recorded-run.js';
import { defineTool, type AnyToolDefinition, type ToolResult } from '../contract/tool.js';
import type { ToolWrapper } from '../kernel/toolbox.js';
import { ManusError } from '../contract/errors.js';

export type ReplayToolMode = 'recorded' | 'real';

export interface Divergence {
  step: number;
  what: string;
  recorded?: string;
  actual?: string;
}

/** Collects the first place the replay departs from the recording. */
export class DivergenceLog {
  first?: Divergence;
  count = 0;

  note(divergence: Divergence): void {
    this.count += 1;
    this.first ??= divergence;
  }
}

const recordingExhaustedErrorMarker = 'manus.error.RecordingExhaustedError';
const recordingExhaustedErrorSymbol = Symbol.for(recordingExhaustedErrorMarker);

export class RecordingExhaustedError extends ManusError {
  private readonly [recordingExhaustedErrorSymbol] = true;

  constructor(replies: number) {
    super('replay_exhausted', `the replay asked for more model replies than the recording has (${replies})`);
  }

  static isInstance(error: unknown): error is RecordingExhaustedError {
    return ManusError.hasMarker(error, recordingExhaustedErrorMarker);
  }
}

/**
 * A model that answers with the recorded replies, in order: the run's own agent with the replies it
 * got, and each part of the run that has a path (a flow's step, an agent called as a tool) with the
 * replies of that path, whatever order parts running at once asked in.
 */
export class RecordedModel implements ChatModel {
  private readonly replies: ReturnType<typeof recordedReplies>;
  private next = 0;
  private readonly divergences: DivergenceLog;
  private readonly all: RecordedReply[];
  private readonly scoped = new Map<string, RecordedModel>();

  /** The replies of a recorded run, or of one part of it. */
  constructor(source: RecordedRun | { replies: RecordedReply[]; path: string }, divergences: DivergenceLog) {
    this.all = 'events' in source ? recordedReplies(source) : source.replies;
    const path = 'events' in source ? undefined : source.path;
    this.replies = this.all.filter((reply) => reply.path === path);
    this.divergences = divergences;
  }

  /** The replies of one part of the run. */
  forPath(path: string): ChatModel {
    let model = this.scoped.get(path);
    if (!model) {
      model = new RecordedModel({ replies: this.all, path }, this.divergences);
      this.scoped.set(path, model);
    }
    return model;
  }

  async complete(_request: ModelRequest): Promise<ModelReply> {
    const reply = this.replies[this.next];
    if (!reply) {
      this.divergences.note({ step: this.next + 1, what: 'the run needed a model reply the recording does not have' });
      throw new RecordingExhaustedError(this.replies.length);
    }
    this.next += 1;
    return {
      content: reply.content,
      toolCalls: reply.toolCalls,
      reasoning: reply.reasoning,
      finishReason: reply.finishReason,
      usage: reply.usage,
      model: 'recorded',
      ...(reply.profile ? { profile: reply.profile } : {}),
      ...(reply.cost !== undefined ? { cost: reply.cost } : {}),
      attempts: 1,
      durationMs: 0,
    };
  }
}

/**
 * Stand-ins answering each call with its recorded result. Tools among `available` that declare
 * `replaySafe` behave the same whatever the world does, so they run for real.
 */
export function recordedTools(
  run: RecordedRun,
  toolNames: string[],
  divergences: DivergenceLog,
  available: ReadonlyMap<string, AnyToolDefinition> = new Map(),
): Map<string, AnyToolDefinition> {
  const results = recordedToolResults(run);
  const tools = new Map<string, AnyToolDefinition>();
  for (const name of toolNames) {
    const real = available.get(name);
    if (real?.replaySafe) {
      tools.set(name, real);
      continue;
    }
    tools.set(name, defineTool({
      name,
      description: `${name} (recorded results)`,
      parameters: { type: 'object' },
      execute: (_input, context): ToolResult => {
        const result = results.get(context.callId);
        // The recorded call wrote its files in the original workspace, not in this one.
        if (result) return { content: result.content, isError: result.isError };
        divergences.note({ step: context.step, what: `the recording has no result for the ${name} call ${context.callId}` });
        return { content: 'Error: this call is not in the recording', isError: true };
      },
    }));
  }
  return tools;
}

/** A wrapper for real tools that compares each result with the recorded one for the same call. */
export function comparingWithRecording(run: RecordedRun, divergences: DivergenceLog): ToolWrapper {
  const results = recordedToolResults(run);
  return (tool) => {
    if (tool.replaySafe) return tool;
    return {
      ...tool,
      async execute(input, context) {
        const value = await tool.execute(input, context);
        const actual = typeof value === 'string' ? value : value.content;
        const recorded = results.get(context.callId);
        if (!recorded) divergences.note({ step: context.step, what: `${tool.name} was called, but the recording has no such call (${context.callId})` });
        else if (recorded.content !== actual) {
          divergences.note({ step: context.step, what: `the result of ${tool.name} differs from the recording`, recorded: recorded.content, actual });
        }
        return value;
      },
    };
  };
}

/** A run plan from the recording alone, for replays that need neither the recipe nor a model. */
export function planFromRecording(run: RecordedRun, basePlan?: RunPlan): RunPlan {
  const start = run.start;
  const budgets = { steps: Math.max((start.budgets?.steps as number | undefined) ?? agentDefaults.max_steps, recordedReplies(run).length) };
  const agent: AgentConfig = basePlan?.agent ?? {
    name: String(start.agent ?? 'recorded'),
    description: 'recorded',
    systemPrompt: String(start.systemPrompt ?? agentDefaults.system_prompt),
    tools: (start.tools as string[] | undefined) ?? [],
    maxSteps: budgets.steps,
    maxObserve: Number.MAX_SAFE_INTEGER,
    toolChoice: start.agentSettings?.toolChoice ?? agentDefaults.tool_choice,
    parallelToolCalls: agentDefaults.parallel_tool_calls,
    finishOnText: start.agentSettings?.finishOnText ?? agentDefaults.finish_on_text,
    stuckAfter: Number.MAX_SAFE_INTEGER,
    errorStreak: 0,
    compaction: readCompaction(),
    llm: agentDefaults.llm,
    contextProviders: [],
    permissions: readPermissions(undefined),
    toolSettings: {},
    toolLocations: {},
  };
  return {
    recipe: basePlan?.recipe ?? {
      file: String(start.recipe?.file ?? run.file),
      name: String(start.recipe?.name ?? 'recorded'),
      description: '',
      parameters: [],
      agent: agent.name,
      pluginFolders: [],
      packs: [],
      budgets: {},
      response: start.response,
      toolSettings: {},
      answers: {},
      checks: [],
      retry: { maxAttempts: recipeDefaults.retry.max_attempts },
      mcpServers: [],
    },
    overrides: {},
    agent: { ...agent, maxSteps: budgets.steps },
    profile: basePlan?.profile ?? readModelProfile('recorded'),
    task: String(start.task ?? ''),
    // The replay's own workspace, never the recorded one, which the recorded run has changed.
    workspace: undefined,
    tools: basePlan?.tools ?? new Map(),
    calledTools: basePlan?.calledTools ?? new Map(),
    contextProviders: [],
    budgets: basePlan ? { ...basePlan.budgets, steps: Math.max(basePlan.budgets.steps, budgets.steps) } : budgets,
    sandbox: basePlan?.sandbox,
    toolSettings: basePlan?.toolSettings ?? {},
    warnings: [],
    agentsConfig: basePlan?.agentsConfig ?? emptyAgentsConfig(),
    trustGrants: basePlan?.trustGrants ?? new Set(),
    trustRequests: basePlan?.trustRequests ?? [],
    // With recorded results no MCP server starts; with real tools the recipe's servers start again.
    mcpServers: basePlan?.mcpServers ?? [],
    mcpToolNames: basePlan?.mcpToolNames ?? [],
    networkAccess: basePlan?.networkAccess ?? defaultNetworkAccess,
    flow: basePlan?.flow,
    callableAgents: basePlan?.callableAgents ?? new Map(),
    packs: basePlan?.packs ?? [],
  };
}
