import { describe, expect, it } from 'vitest';
import { runScripted, terminate } from './support/loop-fixture.js';
import type { RecordedChatRequest, ScriptedTurn } from './support/scripted-model-server.js';

const echo = (text: string): ScriptedTurn => ({ toolCalls: [{ name: 'echo', arguments: { text } }] });

/** How many leading messages two requests share, byte for byte. */
function sharedMessages(first: RecordedChatRequest, second: RecordedChatRequest): number {
  let shared = 0;
  while (shared < first.body.messages.length && JSON.stringify(first.body.messages[shared]) === JSON.stringify(second.body.messages[shared])) shared += 1;
  return shared;
}

describe('the request prefix a provider caches', () => {
  it('stays byte-stable from one step to the next: tools, system prompt and stored history', async () => {
    const run = await runScripted([echo('one'), echo('two'), terminate()], { agentExtra: 'next_step_prompt: Keep going; say what you will do next.' });
    expect(run.exitCode, run.stderr).toBe(0);
    const [first, second, third] = run.requests;
    expect(JSON.stringify(second.body.tools)).toBe(JSON.stringify(first.body.tools));
    expect(JSON.stringify(third.body.tools)).toBe(JSON.stringify(first.body.tools));
    // Only the ephemeral next-step prompt at the end of a request is not repeated by the next one.
    for (const [earlier, later] of [[first, second], [second, third]]) {
      const shared = sharedMessages(earlier, later);
      expect(shared).toBe(earlier.body.messages.length - 1);
      expect(earlier.body.messages.at(-1)).toEqual({ role: 'user', content: 'Keep going; say what you will do next.' });
    }
  });

  it('marks the system prompt and the last stored message for endpoints that cache only what is marked', async () => {
    const run = await runScripted([echo('one'), terminate()], {
      agentExtra: 'next_step_prompt: Next?',
      profile: 'cache: explicit\nretry: { base_delay_ms: 5 }',
    });
    expect(run.exitCode, run.stderr).toBe(0);
    const marker = { type: 'ephemeral' };
    const messages = run.requests[1].body.messages as Array<{ role: string; content: unknown }>;
    expect(messages[0]).toEqual({ role: 'system', content: [{ type: 'text', text: expect.any(String), cache_control: marker }] });
    // system, task, assistant call, tool result, then the next-step prompt: the tool result ends the stored prefix.
    expect(messages.map((message) => message.role)).toEqual(['system', 'user', 'assistant', 'tool', 'user']);
    expect(messages[3].content).toEqual([{ type: 'text', text: expect.stringContaining('one'), cache_control: marker }]);
    expect(messages[4]).toEqual({ role: 'user', content: 'Next?' });
    expect(JSON.stringify(messages.slice(1, 3))).not.toContain('cache_control');
  });

  it('sends no markers by default', async () => {
    const run = await runScripted([echo('one'), terminate()]);
    expect(JSON.stringify(run.requests.map((request) => request.body.messages))).not.toContain('cache_control');
  });
});
