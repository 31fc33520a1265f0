/**
 * A recipe's `flow:` as read from YAML: named steps of a kind, with their own budgets. The fields
 * of kinds a plugin defines are kept as written; they are checked once the kind is loaded.
 */
import type { FlowStepDefinition } from './types.js';

export type { FlowDefinition, FlowStepDefinition } from './types.js';

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
export const commonStepFields = ['name', 'kind', 'budgets', 'permissions', 'continue_on_failure'] as const;

export function isKernelStepKind(kind: string): kind is keyof typeof kernelStepKinds {
  return kind === 'agent' || kind === 'parallel';
}

/** Every step of the flow, those inside parallel steps included, in order. */
export function allSteps(steps: readonly FlowStepDefinition[]): FlowStepDefinition[] {
  return steps.flatMap((step) => [step, ...allSteps(step.steps ?? []), ...(step.step ? allSteps([step.step]) : [])]);
}
