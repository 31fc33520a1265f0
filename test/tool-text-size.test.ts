import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import terminate from '../runtime/kernel/terminate-tool.js';
import type { AnyToolDefinition } from '../runtime/contract/tool.js';

const families = ['ask_human', 'browser', 'charts', 'code', 'files', 'planning', 'web'];

async function builtInTools(): Promise<Map<string, AnyToolDefinition>> {
  const tools = new Map<string, AnyToolDefinition>([[terminate.name, terminate]]);
  for (const family of families) {
    const module = (await import(`../plugins/${family}/index.ts`)) as { default: AnyToolDefinition | AnyToolDefinition[] };
    for (const tool of [module.default].flat()) tools.set(tool.name, tool);
  }
  return tools;
}

describe('the tool text the manus agent sends with every request', () => {
  it('fits in 6,300 characters as JSON, for all eleven of its tools', async () => {
    const agents = parse(readFileSync(new URL('../agents.yaml', import.meta.url), 'utf8')) as { agents: { manus: { tools: string[] } } };
    const tools = await builtInTools();
    const names = agents.agents.manus.tools;
    expect(names).toHaveLength(11);
    const specifications = names.map((name) => {
      const tool = tools.get(name);
      if (!tool) throw new Error(`no built-in tool ${name}`);
      return { type: 'function', function: { name: tool.name, description: tool.description, parameters: tool.parameters } };
    });
    expect(JSON.stringify(specifications).length).toBeLessThanOrEqual(6300);
  });
});
