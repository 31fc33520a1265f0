/**
 * What the planner and the executors of a `plan` flow step are asked, and the format of the
 * planner's plans. The planner answers with its plan as structured data, so the plan is a result
 * of its run (recorded, and given back when a run resumes) rather than state kept elsewhere.
 */
import type { JsonSchema } from 'manus-runtime';
import type { FlowPlan, PlanStep } from './flow-plan.js';
import { earlierResults, planOutline } from './flow-plan-text.js';

/** The plan's format: a title and steps, each with the executor (one of `executors`) that carries it out. */
export function planSchema(executors: readonly string[], minimumSteps: number): JsonSchema {
  return {
    type: 'object',
    additionalProperties: false,
    required: ['title', 'steps'],
    properties: {
      title: { type: 'string', minLength: 1, description: 'A short title for the plan.' },
      steps: {
        type: 'array',
        minItems: minimumSteps,
        description: 'The steps in the order they run.',
        items: {
          type: 'object',
          additionalProperties: false,
          required: ['title', 'description'],
          properties: {
            title: { type: 'string', minLength: 1, description: 'What the step achieves, in a few words.' },
            description: { type: 'string', description: 'What to do and what to produce, so the executor can work from this alone.' },
            executor: { type: 'string', enum: [...executors], description: 'Who carries out the step; the default executor when left out.' },
          },
        },
      },
    },
  };
}

function executorList(executors: readonly string[], defaultExecutor: string): string {
  return executors.map((name) => `- ${name}${name === defaultExecutor ? ' (the default)' : ''}`).join('\n');
}

export function planningTask(task: string, executors: readonly string[], defaultExecutor: string): string {
  return [
    'Make a plan for this task:',
    '',
    task.trim(),
    '',
    'Each step is carried out by one of these executors, with no memory of the other steps beyond the results they report:',
    executorList(executors, defaultExecutor),
    '',
    'Answer with the plan in the required format: a title, and the steps in order, each with a title, a description of what to do and what to produce, and its executor (the default when left out).',
  ].join('\n');
}

export function replanningTask(task: string, plan: FlowPlan, failed: PlanStep, executors: readonly string[], defaultExecutor: string): string {
  return [
    'You are revising a plan for this task:',
    '',
    task.trim(),
    '',
    planOutline(plan),
    '',
    `Step ${failed.number} (${failed.title}) did not succeed (${failed.status}): ${failed.reason ?? 'no reason given'}`,
    '',
    'Results so far:',
    '',
    earlierResults(plan),
    '',
    'Executors:',
    executorList(executors, defaultExecutor),
    '',
    'Answer in the required format with the steps that replace every step not yet run (the steps that ran stay as they are). ' +
      'Take the reason into account: try another approach or executor, split the step, or leave out work the task does not need. ' +
      'An empty list of steps means the results so far are enough to answer.',
  ].join('\n');
}

export function executorTask(task: string, plan: FlowPlan, step: PlanStep): string {
  return [
    'You are carrying out one step of a plan for this task:',
    '',
    task.trim(),
    '',
    planOutline(plan),
    '',
    'Results of the earlier steps:',
    '',
    earlierResults(plan, step),
    '',
    `Your step: ${step.number}. ${step.title}`,
    step.description.trim(),
    '',
    'Do only this step. When it is done, finish with its result: what you found or produced, with the names of the files you wrote. ' +
      'If it cannot be done, finish with a failure and say why.',
  ].join('\n');
}

export function answerTask(task: string, plan: FlowPlan): string {
  return [
    'The plan for this task has been carried out:',
    '',
    task.trim(),
    '',
    planOutline(plan),
    '',
    'Results of the steps:',
    '',
    earlierResults(plan),
    '',
    'Write the final answer to the task from these results, complete and for the user; name the files that were produced.',
  ].join('\n');
}
