/**
 * What the model is sent and what the run records, driven in-process against a scripted
 * `ChatModel`: the conversation, the tools offered, the next-step prompt and context providers
 * (seen each step, never stored), and the events file.
 */
import { describe, expect, it } from 'vitest';
import { eventsOfType, useInProcessRuns } from './support/in-process-loop.js';
import { callReply, messageText, terminateReply } from './support/scripted-chat-model.js';

const run = useInProcessRuns();

const echoes = (count: number) => Array.from({ length: count }, (_, index) => callReply('echo', { text: `${index + 1}` }));

describe('the conversation', () => {
  it('starts with the system prompt and the task, and offers the agent\'s tools in order', async () => {
    const { model } = await run([terminateReply()], { prompt: 'Count the files.' });
    const [request] = model.requests;
    expect(request.messages).toEqual([
      { role: 'system', content: 'You are a test agent.' },
      { role: 'user', content: 'Count the files.' },
    ]);
    expect(request).toMatchObject({ toolNames: ['echo', 'wait', 'write_note', 'fail', 'terminate'], toolChoice: 'auto', parallelToolCalls: true });
    expect(request.tools![0]).toEqual({
      type: 'function',
      function: {
        name: 'echo',
        description: 'Returns the text it is given.',
        parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false },
      },
    });
  });

  it('adds each turn to the conversation: the reply with its text and calls, then the results', async () => {
    const { model } = await run([
      { content: 'Echoing first.', toolCalls: [{ name: 'echo', arguments: { text: 'hello' } }] },
      terminateReply(),
    ]);
    expect(model.requests[1].messages.slice(2)).toEqual([
      {
        role: 'assistant',
        content: 'Echoing first.',
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'echo', arguments: '{"text":"hello"}' } }],
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'echo: hello' },
    ]);
  });

  it('sends each request as the last one plus the new turn, nothing re-sent or rewritten', async () => {
    const { model, events } = await run([...echoes(3), terminateReply()]);
    for (let index = 1; index < model.requests.length; index += 1) {
      const previous = model.requests[index - 1].messages;
      const current = model.requests[index].messages;
      expect(current.slice(0, previous.length)).toEqual(previous);
      expect(current).toHaveLength(previous.length + 2);
    }
    // The history in the events file is what the model was sent, and the final turn after it.
    const history = eventsOfType(events, 'message').map((event) => event.message);
    expect(history.slice(0, model.requests[3].messages.length)).toEqual(model.requests[3].messages);
    expect(history).toHaveLength(model.requests[3].messages.length + 2);
  });
});

describe('the next-step prompt and context providers', () => {
  it('sends the next-step prompt last in every request without storing it in history', async () => {
    const { model, events } = await run([...echoes(3), terminateReply()], { agent: 'next_step_prompt: NEXT-STEP-MARKER decide what to do.' });
    for (const request of model.requests) {
      const withPrompt = request.messages.filter((message) => messageText(message).includes('NEXT-STEP-MARKER'));
      expect(withPrompt).toEqual([{ role: 'user', content: 'NEXT-STEP-MARKER decide what to do.' }]);
      expect(request.messages.at(-1)).toBe(withPrompt[0]);
    }
    // Each request is the last one without its prompt, plus the new turn: the prompt is never re-sent.
    for (let index = 1; index < model.requests.length; index += 1) {
      const previous = model.requests[index - 1].messages.slice(0, -1);
      const current = model.requests[index].messages;
      expect(current.slice(0, previous.length)).toEqual(previous);
      expect(current).toHaveLength(previous.length + 3);
    }
    const history = eventsOfType(events, 'message').map((event) => messageText(event.message));
    expect(history.filter((text) => text.includes('NEXT-STEP-MARKER'))).toEqual([]);
  });

  it('shows a context provider\'s current state each step, before the next-step prompt, and never stores it', async () => {
    const { model, events } = await run([...echoes(2), terminateReply()], {
      agent: 'context_providers: [step_state]\nnext_step_prompt: What next?',
    });
    expect(model.requests.map((request) => request.messages.at(-1))).toEqual([
      { role: 'user', content: 'STATE at step 1; recent tools: none\n\nWhat next?' },
      { role: 'user', content: 'STATE at step 2; recent tools: echo\n\nWhat next?' },
      { role: 'user', content: 'STATE at step 3; recent tools: echo\n\nWhat next?' },
    ]);
    // Only the current state: no request carries an earlier step's.
    for (const request of model.requests) {
      expect(request.messages.filter((message) => messageText(message).includes('STATE at step'))).toHaveLength(1);
    }
    const history = eventsOfType(events, 'message').map((event) => messageText(event.message));
    expect(history.filter((text) => text.includes('STATE at step') || text.includes('What next?'))).toEqual([]);
  });

  it('keeps a provider\'s state on its own when there is no next-step prompt', async () => {
    const { model } = await run([callReply('wait', { label: 'short', milliseconds: 1 }), terminateReply()], { agent: 'context_providers: [step_state]' });
    expect(model.requests[1].messages.at(-1)).toEqual({ role: 'user', content: 'STATE at step 2; recent tools: wait' });
  });
});

describe('the events file', () => {
  it('records each step of the run in order, with what the model replied and spent', async () => {
    const { result, events } = await run([
      { content: 'Checking.', reasoning: 'The user wants an echo.', toolCalls: [{ name: 'echo', arguments: { text: 'hello' } }] },
      terminateReply('All done.'),
    ]);
    expect(result).toMatchObject({ status: 'success', answer: 'All done.', steps: 2, usage: { promptTokens: 20, completionTokens: 10, totalTokens: 30 } });
    expect(events.map((event) => event.type).filter((type) => type !== 'message')).toEqual([
      'run-start',
      'model-request', 'model-response', 'tool-call-start', 'tool-call-end', 'step-end',
      'model-request', 'model-response', 'tool-call-start', 'tool-call-end', 'step-end',
      'run-end',
    ]);
    expect(eventsOfType(events, 'message').map((event) => event.message.role)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant', 'tool']);
    expect(events[0]).toMatchObject({
      type: 'run-start',
      runId: result.runId,
      agent: 'loop-test (inline)',
      task: 'Do the task.',
      systemPrompt: 'You are a test agent.',
      tools: ['echo', 'wait', 'write_note', 'fail', 'terminate'],
      budgets: { steps: 20 },
    });
    expect(eventsOfType(events, 'model-request')[0]).toMatchObject({ step: 1, messages: 2, tools: 5 });
    expect(eventsOfType(events, 'model-response')[0]).toMatchObject({
      step: 1,
      content: 'Checking.',
      reasoning: 'The user wants an echo.',
      toolCalls: [{ id: 'call_1', name: 'echo', arguments: '{"text":"hello"}' }],
      finishReason: 'tool_calls',
      usage: { promptTokens: 10, completionTokens: 5, totalTokens: 15 },
    });
    expect(eventsOfType(events, 'tool-call-start')[0]).toMatchObject({ step: 1, callId: 'call_1', tool: 'echo', arguments: { text: 'hello' } });
    expect(eventsOfType(events, 'tool-call-end')[0]).toMatchObject({ step: 1, callId: 'call_1', tool: 'echo', isError: false, content: 'echo: hello', truncated: false });
    expect(eventsOfType(events, 'step-end').map((event) => [event.step, event.kind, event.usage.totalTokens])).toEqual([[1, 'continue', 15], [2, 'finished', 30]]);
    expect(events.at(-1)).toMatchObject({ type: 'run-end', status: 'success', answer: 'All done.', steps: 2, usage: { totalTokens: 30 } });
    for (const event of events) expect(Date.parse(event.time)).not.toBeNaN();
  });
});
