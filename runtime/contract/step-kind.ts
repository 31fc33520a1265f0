/**
 * The contract for a kind of flow step. The kernel runs `agent` and `parallel` steps itself; any
 * other kind (the planning family's `plan`) is a plain object a plugin exports, made with
 * `defineStepKind`, so the kernel names no particular flow. A kind says which of its fields hold
 * agents (so their tools load before the run) and templates (checked against the recipe's
 * parameters and earlier steps), and runs through the services its context gives: agents run as
 * sub-steps at paths of their own, templates rendered, events written under the step's path.
 */
import type { SchemaInput } from './schema-input.js';
import type { ChatMessage, JsonSchema, TraceWriter } from './tool.js';
import type { TokenUsage } from './model-types.js';

/** How a step ended; `skipped` is a step a failed step before it kept from running. */
export type StepStatus = 'success' | 'failure' | 'budget-exhausted' | 'stuck' | 'interrupted' | 'needs-input' | 'skipped';

/** Limits for one step, within the flow's. */
export interface StepBudgets {
  steps?: number;
  tokens?: number;
  timeSeconds?: number;
  cost?: number;
}

/** What a step produced, as later steps and the flow's answer see it. */
export interface StepResult {
  status: StepStatus;
  answer: string;
  /** The answer as data, when the step had a `response:` schema. */
  structured?: unknown;
  /** A parallel step's answers, in order. */
  answers?: string[];
  /** Why the step did not succeed, in a sentence. */
  reason?: string;
}

/** An agent step's result, with what it spent and its conversation, to continue it. */
export interface AgentRunResult extends StepResult {
  steps: number;
  usage: TokenUsage;
  /** Undefined when a model it used has an unknown price. */
  cost?: number;
  history: ChatMessage[];
}

export interface AgentRunRequest {
  /**
   * The agent: a value of one of the fields the kind lists in `agentFields` (a name from agents.yaml,
   * or an agent written inline), exactly as it appears in the step.
   */
  agent: unknown;
  task: string;
  /** The sub-step's path below this step's, e.g. `3` for `work/3`. Unique within the step. */
  path: string;
  /** Limits for this agent, within the step's and the flow's. */
  budgets?: StepBudgets;
  /** A JSON Schema the agent's answer must match; the result's `structured` holds it. */
  response?: JsonSchema;
  /** A conversation to continue instead of a fresh one: the task is added to it as the next message. */
  history?: ChatMessage[];
  /** A label for listings (`runs show`), such as the plan step's title. */
  title?: string;
}

/** What a running step of a plugin's kind is given. */
export interface StepContext<Fields> {
  /** The step's fields, as written (beyond name, kind, budgets and continue_on_failure). */
  fields: Fields;
  /** The step's name and path (`work`, or `research/2` inside a fan-out). */
  name: string;
  path: string;
  /** Fills `{{param}}`, `{{steps.<name>.answer}}` and the other placeholders of a template. */
  render(template: string): string;
  /**
   * Runs an agent as a sub-step, with its own history, budgets and events under `<path>/<sub-path>`.
   * When the run resumes, a sub-step that finished gives its recorded result without running again,
   * and the one that was running continues from its history: a kind that decides only from results
   * resumes where it stopped.
   */
  runAgent(request: AgentRunRequest): Promise<AgentRunResult>;
  /** Events under the step's path; their `type` should be noun-verb (`plan-update`). */
  trace: TraceWriter;
  /** The run's folder, for files the step keeps (a plan file). */
  runDirectory: string;
  workspace: string;
  signal: AbortSignal;
}

export interface StepKindDefinition<Fields = Record<string, unknown>> {
  kind: string;
  description: string;
  /** A JSON Schema (type: object) of the step's own fields; unknown fields are errors. */
  fields: JsonSchema;
  /** Dotted paths of fields that hold an agent (a name or inline) or a list of agent names, e.g. `planner.agent`, `executors`. */
  agentFields?: string[];
  /** Dotted paths of fields that are templates, checked at validation and rendered with `render`. */
  templateFields?: string[];
  run(context: StepContext<Fields>): Promise<StepResult>;
}

/** A step kind whose fields' type is read from its `fields` schema, as `defineTool` reads a tool's input. */
export function defineStepKind<const Fields extends JsonSchema>(
  definition: Omit<StepKindDefinition<SchemaInput<Fields>>, 'fields'> & { fields: Fields },
): StepKindDefinition<SchemaInput<Fields>> {
  return definition;
}

export type AnyStepKindDefinition = StepKindDefinition<any>;

/** The name a step kind is known by among a plugin's exports (and in the build's manifest). */
export function stepKindExportName(kind: string): string {
  return `step-kind:${kind}`;
}

export function isStepKindDefinition(candidate: unknown): candidate is AnyStepKindDefinition {
  const value = candidate as Partial<AnyStepKindDefinition> | undefined;
  return !!value && typeof value === 'object' && typeof value.kind === 'string' && typeof value.run === 'function' && !('execute' in value);
}
