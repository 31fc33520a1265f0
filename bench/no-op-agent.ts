/**
 * The benchmarks' agent: a plain JavaScript plugin with one tool that does nothing, and an agent
 * that calls it until told to terminate. Every benchmark runs this same agent, so their figures
 * compare.
 */
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
