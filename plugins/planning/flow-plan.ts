/**
 * The plan a `plan` flow step works through: numbered steps, each with its executor, status and
 * result. It is built only from the planner's answers and the executors' results, so a resumed run
 * that gets the same results back builds the same plan.
 */
import type { StepResult } from 'manus-runtime';

/** `pending` and `running` before a step ends, then how its executor's run ended. */
export type PlanStepStatus = 'pending' | 'running' | StepResult['status'];

export interface PlanStep {
  /** Counts from 1 across the whole step, replanned steps included; the executor's sub-path. */
  number: number;
  title: string;
  description: string;
  executor: string;
  status: PlanStepStatus;
  /** The executor's answer. */
  result?: string;
  /** Why the step did not succeed. */
  reason?: string;
}

export interface FlowPlan {
  title: string;
  steps: PlanStep[];
  /** How many times the planner revised the plan after a step did not succeed. */
  replans: number;
  /** The planner's final answer, once written. */
  answer?: string;
}

/** A step as the planner writes it in its answer. */
export interface PlannedStep {
  title: string;
  description?: string;
  executor?: string;
}

export interface PlannerAnswer {
  title?: string;
  steps: PlannedStep[];
}

/** Steps a new plan or a revision starts with: numbered after `after`, executor filled in. */
export function numberSteps(planned: PlannedStep[], after: number, defaultExecutor: string): PlanStep[] {
  return planned.map((step, index) => ({
    number: after + index + 1,
    title: step.title,
    description: step.description ?? '',
    executor: step.executor ?? defaultExecutor,
    status: 'pending',
  }));
}

/**
 * The plan with every step not yet run replaced by the revision's steps. Steps that ran stay, the
 * one that did not succeed included, so the plan keeps the record of what was tried.
 */
export function revisePlan(plan: FlowPlan, revision: PlannedStep[], defaultExecutor: string): void {
  const ran = plan.steps.filter((step) => step.status !== 'pending');
  plan.steps = [...ran, ...numberSteps(revision, ran.length, defaultExecutor)];
  plan.replans += 1;
}

export function nextPendingStep(plan: FlowPlan): PlanStep | undefined {
  return plan.steps.find((step) => step.status === 'pending');
}

/**
 * Reads the planner's structured answer. The run checked it against the schema the planner was
 * given; this guards the kind against an answer that reached it some other way.
 */
export function readPlannerAnswer(structured: unknown, executors: readonly string[]): PlannerAnswer | { problem: string } {
  if (structured === null || typeof structured !== 'object') return { problem: 'the planner gave no structured plan' };
  const { title, steps } = structured as { title?: unknown; steps?: unknown };
  if (!Array.isArray(steps)) return { problem: 'the planner\'s plan has no list of steps' };
  const planned: PlannedStep[] = [];
  for (const [index, step] of steps.entries()) {
    const { title: stepTitle, description, executor } = (step ?? {}) as Record<string, unknown>;
    if (typeof stepTitle !== 'string' || stepTitle.trim() === '') return { problem: `step ${index + 1} of the planner's plan has no title` };
    if (executor !== undefined && (typeof executor !== 'string' || !executors.includes(executor))) {
      return { problem: `step ${index + 1} of the planner's plan names the executor ${JSON.stringify(executor)}, which is not one of ${executors.join(', ')}` };
    }
    planned.push({ title: stepTitle, description: typeof description === 'string' ? description : undefined, executor: executor as string | undefined });
  }
  return { title: typeof title === 'string' ? title : undefined, steps: planned };
}
