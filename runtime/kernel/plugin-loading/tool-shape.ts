/** Checks that a plugin's export looks like a tool before anything calls it. */

const toolNamePattern = /^[A-Za-z0-9_-]{1,64}$/;

export function describeToolProblems(candidate: unknown): string[] {
  if (!candidate || typeof candidate !== 'object') return [`expected a tool object made with defineTool, got ${typeof candidate}`];
  const tool = candidate as Record<string, unknown>;
  const problems: string[] = [];
  if (typeof tool.name !== 'string' || !toolNamePattern.test(tool.name)) {
    problems.push(`'name' must be 1-64 letters, digits, '_' or '-' (got ${JSON.stringify(tool.name)})`);
  }
  if (typeof tool.description !== 'string' || tool.description.trim() === '') problems.push("'description' must be a non-empty string");
  const parameters = tool.parameters as Record<string, unknown> | undefined;
  if (!parameters || typeof parameters !== 'object' || parameters.type !== 'object') {
    problems.push("'parameters' must be a JSON Schema with type: 'object'");
  }
  if (typeof tool.execute !== 'function') problems.push("'execute' must be a function");
  if (tool.calls !== undefined && (!Array.isArray(tool.calls) || tool.calls.some((name) => typeof name !== 'string' || !toolNamePattern.test(name)))) {
    problems.push("'calls' must be a list of tool names");
  }
  const label = typeof tool.name === 'string' ? `tool '${tool.name}': ` : '';
  return problems.map((problem) => label + problem);
}
