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

/** The results of the steps that ran before `before` (all of them when not given), each headed by its step. */
export function earlierResults(plan: FlowPlan, before?: PlanStep): string {
  const ran = plan.steps.filter((step) => step !== before && step.status !== 'pending' && step.status !== 'running');
  if (ran.length === 0) return 'No step has run yet.';
  return ran.map((step) => {
    const heading = `Step ${step.number} (${step.title}, by ${step.executor}): ${step.status}`;
    const reason = step.reason ? `\nReason: ${step.reason}` : '';
    return `${heading}${reason}\n${step.result?.trim() || '(no result)'}`;
  }).join('\n\n');
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
