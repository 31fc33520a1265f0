/** The plan as people and agents read it: the plan file's Markdown and the outline in prompts. */
import type { FlowPlan, PlanStep, PlanStepStatus } from './flow-plan.js';

const statusMarks: Record<string, string> = { pending: '[ ]', running: '[>]', success: '[x]' };

/** `[x]` done, `[>]` running, `[ ]` pending, `[!]` any way of not succeeding. */
export function statusMark(status: PlanStepStatus): string {
  return statusMarks[status] ?? '[!]';
}

/** One line a step: number, mark, title, executor and status, with the reason when it did not succeed. */
export function planOutline(plan: FlowPlan): string {
  const lines = plan.steps.map((step) => {
    const reason = step.reason ? `: ${step.reason}` : '';
    return `${step.number}. ${statusMark(step.status)} ${step.title} (executor: ${step.executor}; ${step.status}${reason})`;
  });
  return [`Plan: ${plan.title}`, ...lines].join('\n');
}

/**
 * Characters of one step's result that prompts carry; a longer result keeps its head and tail, so
 * a step that returned a whole document does not crowd the task out of every later prompt. The plan
 * file keeps every result whole.
 */
export const resultCharactersInPrompts = 6000;

/** The results of the steps that ran, but for `except`, each headed by its step. */
export function earlierResults(plan: FlowPlan, except?: PlanStep): string {
  const ran = plan.steps.filter((step) => step !== except && step.status !== 'pending' && step.status !== 'running');
  if (ran.length === 0) return 'No step has run yet.';
  return ran.map((step) => {
    const heading = `Step ${step.number} (${step.title}, by ${step.executor}): ${step.status}`;
    const reason = step.reason ? `\nReason: ${step.reason}` : '';
    return `${heading}${reason}\n${headAndTail(step.result?.trim() || '(no result)', resultCharactersInPrompts)}`;
  }).join('\n\n');
}

/** The text, or its head and tail around a marker when it is longer than `limit`; counts code points, so no character is split. */
export function headAndTail(text: string, limit: number): string {
  const characters = Array.from(text);
  if (characters.length <= limit) return text;
  const half = Math.floor(limit / 2);
  const omitted = characters.length - 2 * half;
  return `${characters.slice(0, half).join('')}\n[... ${omitted} characters left out ...]\n${characters.slice(-half).join('')}`;
}

/** The plan file: the task, progress, and every step with its executor, status, reason and result. */
export function planMarkdown(plan: FlowPlan, task: string, maxReplans: number): string {
  const succeeded = plan.steps.filter((step) => step.status === 'success').length;
  const failed = plan.steps.filter((step) => !['pending', 'running', 'success'].includes(step.status)).length;
  const lines = [
    `# Plan: ${plan.title}`,
    '',
    '## Task',
    '',
    task.trim(),
    '',
    `Progress: ${succeeded} of ${plan.steps.length} steps succeeded, ${failed} did not; ` +
      `the plan was revised ${plan.replans} of at most ${maxReplans} times.`,
    '',
    '## Steps',
  ];
  for (const step of plan.steps) {
    lines.push('', `### ${step.number}. ${statusMark(step.status)} ${step.title}`, '', `- Executor: ${step.executor}`, `- Status: ${step.status}`);
    if (step.reason) lines.push(`- Reason: ${step.reason}`);
    if (step.description) lines.push('', step.description.trim());
    if (step.result !== undefined) lines.push('', 'Result:', '', step.result.trim() || '(no result)');
  }
  if (plan.answer !== undefined) lines.push('', '## Answer', '', plan.answer.trim());
  return `${lines.join('\n')}\n`;
}
