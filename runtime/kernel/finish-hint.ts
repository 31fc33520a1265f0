/**
 * How the agent can end its run, in words for the loop's nudges. The loop names no tool: the
 * wording comes from the tools in the run's toolbox that declare `finishesRun`, or, when none is
 * offered, from whether a plain-text reply is taken as the answer.
 */
import type { AnyToolDefinition } from '../contract/tool.js';

/**
 * "call terminate", "call terminate or create_chat_completion", "give your final answer as plain
 * text", or undefined when the agent has no way to finish but to run out of budget.
 */
export function finishHint(offeredTools: Iterable<AnyToolDefinition>, finishesOnText: boolean): string | undefined {
  const names = [...offeredTools].filter((tool) => tool.finishesRun === true).map((tool) => tool.name);
  if (names.length > 0) return `call ${listWithOr(names)}`;
  if (finishesOnText) return 'give your final answer as plain text';
  return undefined;
}

function listWithOr(names: string[]): string {
  if (names.length === 1) return names[0];
  return `${names.slice(0, -1).join(', ')} or ${names[names.length - 1]}`;
}
