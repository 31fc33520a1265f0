/**
 * The `plan` kind of flow step, OpenManus's planning flow: a planner agent plans the task as steps,
 * each carried out by one of the step's executors; a step that does not succeed makes the planner
 * revise the rest of the plan, and at the end the planner writes the answer from the results.
 * Every decision is made from the results of `runAgent` alone, which a resumed run gives back, so
 * a resumed step goes on where it stopped. The plan is kept in `<run folder>/plan-<step path>.md`
 * and sent as a `plan-update` event after every change.
 */
import { join } from 'node:path';
import { defineStepKind } from 'manus-runtime';
import type { ChatMessage, SchemaInput, StepContext, StepResult } from 'manus-runtime';
import { nextPendingStep, numberSteps, readPlannerAnswer, revisePlan, type FlowPlan, type PlanStep } from './flow-plan.js';
import { answerTask, executorTask, planningTask, planSchema, replanningTask } from './flow-plan-prompts.js';
import { planMarkdown } from './flow-plan-text.js';
import { writeFileAtomically } from './write-file-atomically.js';

const budgets = {
  type: 'object',
  additionalProperties: false,
  properties: {
    steps: { type: 'integer', minimum: 1 },
    tokens: { type: 'integer', minimum: 1 },
    time_seconds: { type: 'number', exclusiveMinimum: 0 },
    cost: { type: 'number', exclusiveMinimum: 0, description: 'US dollars, priced with the model profile\'s `price`.' },
  },
} as const;

const fields = {
  type: 'object',
  additionalProperties: false,
  required: ['planner', 'executors', 'prompt'],
  properties: {
    planner: {
      type: 'object',
      additionalProperties: false,
      required: ['agent'],
      description: 'The agent that plans, revises the plan and writes the answer.',
      properties: {
        agent: {
          description: 'An agent name from agents.yaml, or an agent declared inline.',
          anyOf: [{ type: 'string', minLength: 1 }, { type: 'object' }],
        },
        budgets: { ...budgets, description: 'Limits for each of the planner\'s turns (planning, each revision, the answer).' },
      },
    },
    executors: {
      type: 'array',
      minItems: 1,
      uniqueItems: true,
      items: { type: 'string', minLength: 1 },
      description: 'Names of the agents (from agents.yaml) that may carry out the plan\'s steps.',
    },
    default_executor: {
      type: 'string',
      minLength: 1,
      description: 'The executor of steps that name none; one of executors. Default: the first executor.',
    },
    max_replans: {
      type: 'integer',
      minimum: 0,
      default: 2,
      description: 'How many times the planner may revise the plan after a step does not succeed; one more failure fails the step.',
    },
    step_budgets: { ...budgets, description: 'Limits for each plan step\'s executor, within the flow step\'s.' },
    share_history: {
      type: 'boolean',
      default: false,
      description: 'Each executor continues its own conversation from its previous plan step, instead of starting afresh.',
    },
    prompt: { type: 'string', minLength: 1, description: 'The task to plan, a template.' },
    response: { type: 'object', description: 'A JSON Schema the planner\'s final answer must match.' },
  },
} as const;

type PlanStepFields = SchemaInput<typeof fields>;
type AgentRunResult = Awaited<ReturnType<StepContext<PlanStepFields>['runAgent']>>;
type StepBudgets = NonNullable<Parameters<StepContext<PlanStepFields>['runAgent']>[0]['budgets']>;

/** Statuses that need a person (stopped, or an approval no one could give): no revision helps, so the step stops. */
const stoppingStatuses: readonly string[] = ['interrupted', 'needs-input'];

export default defineStepKind({
  kind: 'plan',
  description: 'A planner agent plans the task as steps for executor agents, revises the plan when a step does not succeed, and writes the answer from the results.',
  fields,
  agentFields: ['planner.agent', 'executors', 'default_executor'],
  templateFields: ['prompt'],
  run: runPlanStep,
});

async function runPlanStep(context: StepContext<PlanStepFields>): Promise<StepResult> {
  const { fields: settings } = context;
  const executors = settings.executors;
  const defaultExecutor = settings.default_executor ?? executors[0];
  if (!executors.includes(defaultExecutor)) {
    return { status: 'failure', answer: '', reason: `default_executor '${defaultExecutor}' is not one of the executors (${executors.join(', ')})` };
  }
  const maxReplans = settings.max_replans ?? 2;
  const plannerBudgets = stepBudgets(settings.planner.budgets);
  const executorBudgets = stepBudgets(settings.step_budgets);
  const task = context.render(settings.prompt);
  const planFileName = `plan-${context.path.replaceAll('/', '-')}.md`;
  const plan: FlowPlan = { title: '', steps: [], replans: 0 };

  const record = async (change: string, step?: PlanStep): Promise<void> => {
    await writeFileAtomically(join(context.runDirectory, planFileName), planMarkdown(plan, task, maxReplans));
    context.trace.emit('plan-update', { change, ...(step ? { step: step.number } : {}), file: planFileName, plan: structuredClone(plan) });
  };
  // A step that stops early answers with the plan so far, which shows what was done and why it stopped.
  const stopped = (status: StepResult['status'], reason: string, answer = ''): StepResult => ({
    status,
    answer: plan.steps.length > 0 ? planMarkdown(plan, task, maxReplans) : answer,
    reason,
  });

  const planned = await context.runAgent({
    agent: settings.planner.agent,
    path: 'plan',
    task: planningTask(task, executors, defaultExecutor),
    response: planSchema(executors, 1),
    budgets: plannerBudgets,
    title: 'Plan the task',
  });
  if (planned.status !== 'success') return stopped(planned.status, `the planner made no plan: ${describeEnding(planned)}`, planned.answer);
  const first = readPlannerAnswer(planned.structured, executors);
  if ('problem' in first) return stopped('failure', first.problem, planned.answer);
  if (first.steps.length === 0) return stopped('failure', 'the planner\'s plan has no steps', planned.answer);
  plan.title = first.title ?? 'Plan';
  plan.steps = numberSteps(first.steps, 0, defaultExecutor);
  await record('created');

  const histories = new Map<string, ChatMessage[]>();
  for (let step = nextPendingStep(plan); step; step = nextPendingStep(plan)) {
    step.status = 'running';
    await record('step-start', step);
    const result = await context.runAgent({
      agent: step.executor,
      path: String(step.number),
      task: executorTask(task, plan, step),
      budgets: executorBudgets,
      history: settings.share_history ? histories.get(step.executor) : undefined,
      title: step.title,
    });
    if (settings.share_history) histories.set(step.executor, result.history);
    step.status = result.status;
    step.result = result.answer;
    if (result.status !== 'success') step.reason = describeEnding(result);
    await record('step-end', step);
    if (result.status === 'success') continue;

    const failure = `step ${step.number} (${step.title}) ended with ${step.status}: ${step.reason}`;
    if (stoppingStatuses.includes(result.status)) return stopped(result.status, failure);
    if (plan.replans >= maxReplans) {
      return stopped('failure', `${failure}; the plan was already revised ${plan.replans} time(s), as many as max_replans allows`);
    }
    const revised = await context.runAgent({
      agent: settings.planner.agent,
      path: `replan-${plan.replans + 1}`,
      task: replanningTask(task, plan, step, executors, defaultExecutor),
      response: planSchema(executors, 0),
      budgets: plannerBudgets,
      title: `Revise the plan after step ${step.number}`,
    });
    if (revised.status !== 'success') return stopped(revised.status, `${failure}; the planner did not revise the plan: ${describeEnding(revised)}`);
    const revision = readPlannerAnswer(revised.structured, executors);
    if ('problem' in revision) return stopped('failure', `${failure}; ${revision.problem}`);
    revisePlan(plan, revision.steps, defaultExecutor);
    await record('revised');
  }

  const answered = await context.runAgent({
    agent: settings.planner.agent,
    path: 'answer',
    task: answerTask(task, plan),
    response: settings.response,
    budgets: plannerBudgets,
    title: 'Write the answer',
  });
  if (answered.status !== 'success') return stopped(answered.status, `the planner did not write the answer: ${describeEnding(answered)}`);
  plan.answer = answered.answer;
  await record('answered');
  return { status: 'success', answer: answered.answer, ...(answered.structured !== undefined ? { structured: answered.structured } : {}) };
}

/** Why an agent's run did not succeed, in a sentence: its reason, else its answer, else its status. */
function describeEnding(result: AgentRunResult): string {
  return result.reason?.trim() || result.answer.trim() || result.status;
}

/** The recipe's budget keys as the runtime names them; undefined when none are given. */
function stepBudgets(written: { steps?: number; tokens?: number; time_seconds?: number; cost?: number } | undefined): StepBudgets | undefined {
  if (!written) return undefined;
  const { steps, tokens, time_seconds: timeSeconds, cost } = written;
  return Object.fromEntries(Object.entries({ steps, tokens, timeSeconds, cost }).filter(([, value]) => value !== undefined));
}
