import { describe, expect, it } from 'vitest';
import { ToolGuides } from '../runtime/kernel/tool-guides.js';
import { defineTool, type ChatMessage } from '../runtime/contract/tool.js';
import { runScripted, terminate, toolMessages } from './support/loop-fixture.js';

const guided = defineTool({
  name: 'guided',
  description: 'A tool with a guide.',
  guide: 'Step one, then step two.',
  parameters: { type: 'object', properties: {} },
  execute: () => 'ok',
});
const plain = defineTool({ name: 'plain', description: 'No guide.', parameters: { type: 'object', properties: {} }, execute: () => 'ok' });
const tools = new Map([[guided.name, guided], [plain.name, plain]]);

describe('a tool\'s guide', () => {
  it('comes once, with the first result, and again once compaction has folded that result away', () => {
    const guides = new ToolGuides(tools);
    guides.recall([]);
    const first = guides.withGuide('guided', 'result 1');
    expect(first).toBe('How to use guided:\nStep one, then step two.\n\nresult 1');
    expect(guides.withGuide('guided', 'result 2')).toBe('result 2');
    expect(guides.withGuide('plain', 'result')).toBe('result');

    const history: ChatMessage[] = [{ role: 'system', content: 's' }, { role: 'user', content: 't' }, { role: 'tool', tool_call_id: 'a', content: first }];
    guides.recall(history);
    expect(guides.withGuide('guided', 'result 3')).toBe('result 3');
    // A summary replaced the messages: the guide is no longer before the model.
    guides.recall([{ role: 'system', content: 's' }, { role: 'user', content: 'summary of earlier work' }]);
    expect(guides.withGuide('guided', 'result 4')).toContain('How to use guided:');
  });

  it('stays out of every request\'s tool definitions, and reaches the model in the first result of the planning tool', async () => {
    const plan = { toolCalls: [{ name: 'planning', arguments: { command: 'create', title: 'Trip', steps: ['a', 'b'] } }] };
    const list = { toolCalls: [{ name: 'planning', arguments: { command: 'list' } }] };
    const run = await runScripted([plan, list, terminate()], { tools: ['planning', 'terminate'] });
    expect(run.exitCode, run.stderr).toBe(0);
    for (const request of run.requests) expect(JSON.stringify(request.body.tools)).not.toContain('unchanged steps keep their status');
    const results = toolMessages(run.requests[2]);
    expect(results[0].content).toMatch(/^How to use planning:\n/);
    expect(results[0].content).toContain('unchanged steps keep their status');
    expect(results[1].content).not.toContain('How to use planning:');
  });
});
