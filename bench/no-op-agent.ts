/**
 * The benchmarks' agent: a plain JavaScript plugin with one tool that does nothing, and an agent
 * that calls it until told to terminate. Every benchmark runs this same agent, so their figures
 * compare.
 */
import type { ScriptedTurn } from '../test/support/scripted-model-server.js';

export const noopPluginSource = "export default { name: 'noop', description: 'Does nothing.', parameters: { type: 'object', properties: { note: { type: 'string' } }, required: ['note'] }, execute: ({ note }) => `noted ${note}` };\n";

/** The agent's YAML lines under `agent:`, indented by `indent` spaces. */
export function noopAgentLines(maxSteps: number, indent = 2): string[] {
  return [
    'system_prompt: You are a benchmark agent.',
    'next_step_prompt: Call noop again, or terminate when done.',
    'tools: [noop, terminate]',
    `max_steps: ${maxSteps}`,
  ].map((line) => `${' '.repeat(indent)}${line}`);
}

/** The loop benchmarks' recipe: the agent above, with its plugin in ./tools. */
export function noopRecipe(steps: number): string {
  return ['version: 1', 'name: bench', 'prompt: Call the noop tool until told otherwise.', 'plugins: [./tools]', 'agent:', ...noopAgentLines(steps + 5), ''].join('\n');
}

/** What the scripted model answers the loop benchmarks with: `steps` noop calls, then terminate. */
export function noopScript(steps: number): ScriptedTurn[] {
  const turns: ScriptedTurn[] = [];
  for (let step = 1; step <= steps; step += 1) {
    turns.push({ content: `Step ${step}.`, toolCalls: [{ name: 'noop', arguments: { note: `step ${step}` } }] });
  }
  turns.push({ toolCalls: [{ name: 'terminate', arguments: { status: 'success', message: 'done' } }] });
  return turns;
}
