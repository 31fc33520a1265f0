import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../runtime/contract/tool.js';
import { ScriptedChatModel, callReply } from './support/scripted-chat-model.js';

const messages = (): ChatMessage[] => [{ role: 'user', content: 'hello' }];

describe('the scripted chat model', () => {
  it('answers with the queued replies in order, filling in ids, finish reasons and usage', async () => {
    const model = new ScriptedChatModel([callReply('echo', { text: 'a' }), { content: 'done', usage: { promptTokens: 7, completionTokens: 3 } }]);
    const first = await model.complete({ messages: messages() });
    expect(first).toMatchObject({
      content: null,
      toolCalls: [{ id: 'call_1', name: 'echo', arguments: '{"text":"a"}' }],
      finishReason: 'tool_calls',
      usage: { promptTokens: 10, completionTokens: 5, totalTokens: 15 },
    });
    const second = await model.complete({ messages: messages() });
    expect(second).toMatchObject({ content: 'done', toolCalls: [], finishReason: 'stop', usage: { promptTokens: 7, completionTokens: 3, totalTokens: 10 } });
    expect(model.remaining).toBe(0);
    await expect(model.complete({ messages: messages() })).rejects.toThrow('the script has no reply left for request 3');
  });

  it('records copies of what it was sent, safe from later changes', async () => {
    const model = new ScriptedChatModel([{ content: 'ok' }]);
    const sent = messages();
    const tool = { type: 'function' as const, function: { name: 'echo', description: 'Echoes.', parameters: { type: 'object' } } };
    await model.complete({ messages: sent, tools: [tool], toolChoice: 'required', parallelToolCalls: false });
    sent.push({ role: 'assistant', content: 'added later' });
    expect(model.requests).toEqual([{
      messages: [{ role: 'user', content: 'hello' }],
      tools: [tool],
      toolNames: ['echo'],
      toolChoice: 'required',
      parallelToolCalls: false,
      responseSchema: undefined,
    }]);
  });

  it('throws the scripted error, and builds a reply from the request when given a function', async () => {
    const failure = new Error('provider down');
    const model = new ScriptedChatModel([{ error: failure }, (request) => ({ content: `saw ${request.messages.length} message(s)` })]);
    await expect(model.complete({ messages: messages() })).rejects.toBe(failure);
    await expect(model.complete({ messages: messages() })).resolves.toMatchObject({ content: 'saw 1 message(s)' });
  });

  it('stops waiting when the request is aborted', async () => {
    const model = new ScriptedChatModel([{ content: 'late', delayMs: 10_000 }]);
    const controller = new AbortController();
    const reply = model.complete({ messages: messages(), signal: controller.signal });
    controller.abort(new Error('stopped'));
    await expect(reply).rejects.toThrow('stopped');
  });
});
