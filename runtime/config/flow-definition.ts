/**
 * A recipe's `flow:` as read from YAML: named steps of a kind, with their own budgets. The fields
 * of kinds a plugin defines are kept as written; they are checked once the kind is loaded.
 */
import type { SourceLocation } from '../contract/errors.js';
import type { AgentConfig } from './types.js';
import type { YamlSource } from './yaml-source.js';
import type { JsonSchema } from '../contract/tool.js';
import type { StepBudgets } from '../contract/step-kind.js';

export interface FlowStepDefinition {
  /** The step's name; a fan-out's `step:` has its parent's. */
  name: string;
  kind: string;
  /** Where the step is in its YAML file, to locate problems with its fields. */
  yamlPath: Array<string | number>;
  location?: SourceLocation;
  budgets: StepBudgets;
  continueOnFailure: boolean;
  /** The fields beyond name, kind, budgets and continue_on_failure, as written. */
  fields: Record<string, unknown>;
  /** agent steps: a name from agents.yaml, or the agent written inline. */
  agent?: string | AgentConfig;
  prompt?: string;
  response?: JsonSchema;
  /** parallel steps: named steps at once, or one step for each item of `forEach`. */
  steps?: FlowStepDefinition[];
  step?: FlowStepDefinition;
  forEach?: string;
  maxConcurrency?: number;
}

export interface FlowDefinition {
  steps: FlowStepDefinition[];
  /** A template for the flow's answer; the last step's answer when not given. */
  answer?: string;
  /** The recipe's YAML, for the fields of kinds that load later. */
  source: YamlSource;
}

/** What a flow gets when its recipe leaves these out. */
export const flowDefaults = {
  /** Model requests of all its steps together. */
  steps: 500,
  /** Steps of a parallel step run at once. */
  maxConcurrency: 4,
};

/** The kinds the engine runs itself, and the fields each takes. */
export const kernelStepKinds = {
  agent: ['agent', 'prompt', 'response'],
  parallel: ['steps', 'step', 'for_each', 'max_concurrency'],
} as const;

/** Fields every step may have, whatever its kind. */
export const commonStepFields = ['name', 'kind', 'budgets', 'continue_on_failure'] as const;

export function isKernelStepKind(kind: string): kind is keyof typeof kernelStepKinds {
  return kind === 'agent' || kind === 'parallel';
}

/** Every step of the flow, those inside parallel steps included, in order. */
export function allSteps(steps: readonly FlowStepDefinition[]): FlowStepDefinition[] {
  return steps.flatMap((step) => [step, ...allSteps(step.steps ?? []), ...(step.step ? allSteps([step.step]) : [])]);
}
