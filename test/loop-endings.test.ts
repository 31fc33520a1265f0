/**
 * How a run ends, driven in-process against a scripted `ChatModel`: on text or on terminate,
 * with a structured answer, stuck, after cut-off replies, or when the model fails.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ProviderError } from '../runtime/contract/errors.js';
import { eventsOfType, useInProcessRuns, type InProcessRunOptions } from './support/in-process-loop.js';
import { callReply, messageText, terminateReply, type ReceivedRequest } from './support/scripted-chat-model.js';

const run = useInProcessRuns();

function lastMessage(request: ReceivedRequest) {
  return request.messages.at(-1)!;
}

describe('finishing', () => {
  it('ends on a plain-text reply when the agent finishes on text', async () => {
    const { result, model, events } = await run([{ content: 'Paris is the capital of France.' }]);
    expect(result).toMatchObject({ status: 'success', answer: 'Paris is the capital of France.', steps: 1 });
    expect(result.usage).toEqual({ promptTokens: 10, completionTokens: 5, totalTokens: 15 });
    expect(model.requests).toHaveLength(1);
    expect(eventsOfType(events, 'step-end')).toMatchObject([{ step: 1, kind: 'finished' }]);
    expect(events.at(-1)).toMatchObject({ type: 'run-end', status: 'success', answer: 'Paris is the capital of France.', steps: 1 });
  });

  it('keeps going after text when the agent must call terminate', async () => {
    const { result, model } = await run([{ content: 'Thinking aloud.' }, terminateReply('Done now.')], { agent: 'finish_on_text: false' });
    expect(result).toMatchObject({ status: 'success', answer: 'Done now.', steps: 2 });
    expect(lastMessage(model.requests[1])).toEqual({ role: 'assistant', content: 'Thinking aloud.' });
  });

  it('reports terminate with failure as a failed task', async () => {
    const { result } = await run([terminateReply('The site is down.', 'failure')]);
    expect(result).toMatchObject({ status: 'failure', answer: 'The site is down.', steps: 1 });
  });

  it('skips the calls listed after terminate in the same turn', async () => {
    const { result, events } = await run([{
      toolCalls: [
        { name: 'terminate', arguments: { status: 'success', message: 'finished first' } },
        { name: 'write_note', arguments: { path: 'late.txt', text: 'should not exist' } },
      ],
    }]);
    expect(result).toMatchObject({ status: 'success', answer: 'finished first', files: [] });
    expect(existsSync(join(result.workspace, 'late.txt'))).toBe(false);
    expect(eventsOfType(events, 'tool-call-skipped')).toMatchObject([{ tool: 'write_note', after: 'call_1' }]);
    expect(eventsOfType(events, 'tool-call-start').map((event) => event.tool)).toEqual(['terminate']);
  });

  it('asks again after an empty reply instead of taking it as the answer', async () => {
    const { result, model } = await run([{ content: '' }, terminateReply('the real answer')]);
    expect(result).toMatchObject({ status: 'success', answer: 'the real answer', steps: 2 });
    expect(messageText(lastMessage(model.requests[1]))).toContain('Your last reply was empty');
  });

  it('finishes on text and offers no tools when tool_choice is none', async () => {
    const { result, model } = await run([{ content: 'Only words.' }], { agent: 'tool_choice: none\nfinish_on_text: false' });
    expect(result).toMatchObject({ status: 'success', answer: 'Only words.' });
    expect(model.requests[0]).toMatchObject({ toolChoice: 'none', toolNames: [] });
    expect(model.requests[0].tools).toBeUndefined();
  });

  it('passes tool_choice required on to the model', async () => {
    const { result, model } = await run([terminateReply('forced')], { agent: 'tool_choice: required' });
    expect(result.status).toBe('success');
    expect(model.requests[0].toolChoice).toBe('required');
  });
});

describe('structured answers', () => {
  const response = 'response: { type: object, required: [city, population], additionalProperties: false, properties: { city: { type: string }, population: { type: integer } } }';
  const answer = (value: unknown) => callReply('create_chat_completion', { response: value });

  it('accepts an answer given through the answer tool, which offers the schema', async () => {
    const { result, model } = await run([answer({ city: 'Oslo', population: 709000 })], { recipe: response });
    expect(result).toMatchObject({ status: 'success', structured: { city: 'Oslo', population: 709000 }, steps: 1 });
    expect(JSON.parse(result.answer)).toEqual({ city: 'Oslo', population: 709000 });
    expect(model.requests[0].toolNames).toEqual(['echo', 'wait', 'write_note', 'fail', 'terminate', 'create_chat_completion']);
    const answerTool = model.requests[0].tools!.find((tool) => tool.function.name === 'create_chat_completion')!;
    expect(answerTool.function.parameters).toMatchObject({ required: ['response'], properties: { response: { required: ['city', 'population'] } } });
  });

  it('accepts JSON text in a code fence', async () => {
    const { result } = await run([{ content: '```json\n{"city": "Bern", "population": 134000}\n```' }], { recipe: response });
    expect(result).toMatchObject({ status: 'success', structured: { city: 'Bern', population: 134000 } });
  });

  it('sends a non-conforming text answer back once, then takes the corrected one', async () => {
    const { result, model, events } = await run([{ content: '{"city": "Rome"}' }, answer({ city: 'Rome', population: 2800000 })], { recipe: response });
    expect(result).toMatchObject({ status: 'success', structured: { city: 'Rome', population: 2800000 }, steps: 2 });
    const correction = messageText(lastMessage(model.requests[1]));
    expect(correction).toContain('does not match the required format');
    expect(correction).toContain("must have required property 'population'");
    // The correction is part of the conversation, kept in history and in the events file.
    expect(eventsOfType(events, 'message').map((event) => messageText(event.message))).toContain(correction);
  });

  it('answers a non-conforming answer call with an error result, then takes the corrected one', async () => {
    const { result, model } = await run([answer({ city: 'Rome', population: 'many' }), answer({ city: 'Rome', population: 2800000 })], { recipe: response });
    expect(result).toMatchObject({ status: 'success', structured: { city: 'Rome', population: 2800000 } });
    const [toolResult] = model.requests[1].messages.filter((message) => message.role === 'tool');
    expect(messageText(toolResult)).toContain("Invalid arguments for 'create_chat_completion'");
  });

  it('fails when the corrected text answer still does not conform', async () => {
    const { result, model } = await run([{ content: '{"city": "Rome"}' }, { content: '{"city": "Rome", "population": "many"}' }, terminateReply('unreachable')], {
      recipe: response,
    });
    expect(result.status).toBe('failure');
    expect(result.answer).toContain('did not match the required format after a correction');
    expect(result.structured).toBeUndefined();
    expect(model.requests).toHaveLength(2);
    expect(model.remaining).toBe(1);
  });

  it('fails when the corrected answer call still does not conform', async () => {
    const { result, model } = await run([{ content: 'not json at all' }, answer({ city: 'Rome', population: 'many' }), terminateReply('unreachable')], {
      recipe: response,
    });
    expect(result.status).toBe('failure');
    expect(result.answer).toContain('did not match the required format after a correction');
    expect(model.requests).toHaveLength(2);
  });
});

describe('stuck detection', () => {
  it('nudges once after three identical calls, then stops with status stuck', async () => {
    const same = callReply('echo', { text: 'again' });
    const { result, model, events } = await run(Array.from({ length: 8 }, () => same));
    expect(result).toMatchObject({ status: 'stuck', steps: 4 });
    expect(result.answer).toContain('kept repeating the same action');
    expect(model.requests).toHaveLength(4);
    expect(messageText(lastMessage(model.requests[3]))).toContain('repeated the same action several times');
    expect(model.requests.slice(0, 3).map((request) => JSON.stringify(request.messages))).not.toContainEqual(expect.stringContaining('repeated the same action'));
    expect(eventsOfType(events, 'stuck-nudge')).toMatchObject([{ step: 3 }]);
    expect(eventsOfType(events, 'step-end').at(-1)).toMatchObject({ step: 4, kind: 'stuck' });
  });

  it('names in its nudge the tools that can finish the run, or a plain-text answer when none is offered', async () => {
    const same = callReply('echo', { text: 'again' });
    const nudge = async (options: InProcessRunOptions) => {
      const { model } = await run(Array.from({ length: 4 }, () => same), options);
      return messageText(lastMessage(model.requests[3]));
    };
    expect(await nudge({})).toContain('Change your approach, or call terminate if the task is done or cannot be done.');
    const withAnswerTool = await nudge({ recipe: 'response: { type: object, properties: { city: { type: string } }, required: [city] }' });
    expect(withAnswerTool).toContain('Change your approach, or call terminate or create_chat_completion if the task is done or cannot be done.');
    const textOnly = await nudge({ tools: ['echo'] });
    expect(textOnly).toContain('Change your approach, or give your final answer as plain text if the task is done or cannot be done.');
    expect(textOnly).not.toContain('terminate');
    expect(await nudge({ tools: ['echo'], agent: 'finish_on_text: false' })).toContain('without progress. Change your approach.');
  });

  it('treats the same arguments in another order as the same call', async () => {
    const first = callReply('wait', { label: 'a', milliseconds: 1 });
    const second = callReply('wait', '{"milliseconds": 1, "label": "a"}');
    const { result } = await run([first, second, first, second, first]);
    expect(result.status).toBe('stuck');
  });

  it('notices two turns alternating', async () => {
    const ping = callReply('echo', { text: 'ping' });
    const pong = callReply('echo', { text: 'pong' });
    const { result, events } = await run([ping, pong, ping, pong, ping, pong, ping, pong]);
    expect(result.status).toBe('stuck');
    expect(eventsOfType(events, 'stuck-nudge')).toHaveLength(1);
  });

  it('notices the same text again and again when text does not finish the run', async () => {
    const { result, events } = await run(Array.from({ length: 6 }, () => ({ content: 'I am thinking.' })), { agent: 'finish_on_text: false' });
    expect(result).toMatchObject({ status: 'stuck', steps: 4 });
    expect(eventsOfType(events, 'stuck-nudge')).toHaveLength(1);
  });

  it('lets a run that changes course after the nudge go on', async () => {
    const same = callReply('echo', { text: 'again' });
    const { result, events } = await run([same, same, same, callReply('echo', { text: 'something else' }), terminateReply('fine')]);
    expect(result).toMatchObject({ status: 'success', answer: 'fine', steps: 5 });
    expect(eventsOfType(events, 'stuck-nudge')).toHaveLength(1);
  });

  it('does not call varied progress stuck', async () => {
    const varied = Array.from({ length: 6 }, (_, index) => callReply('echo', { text: `${index}` }));
    const { result, events } = await run([...varied, terminateReply('fine')]);
    expect(result).toMatchObject({ status: 'success', steps: 7 });
    expect(eventsOfType(events, 'stuck-nudge')).toHaveLength(0);
  });

  it('waits for stuck_after identical turns', async () => {
    const same = callReply('echo', { text: 'again' });
    const { result, events } = await run(Array.from({ length: 8 }, () => same), { agent: 'stuck_after: 5' });
    expect(result).toMatchObject({ status: 'stuck', steps: 6 });
    expect(eventsOfType(events, 'stuck-nudge')).toMatchObject([{ step: 5 }]);
  });
});

describe('cut-off replies', () => {
  it('never runs a call from a reply cut off by the output limit, even one that parses', async () => {
    const { result, model, events } = await run([
      callReply('write_note', { path: 'note.txt', text: 'complete-looking' }, { finishReason: 'length' }),
      terminateReply('done'),
    ]);
    expect(result).toMatchObject({ status: 'success', answer: 'done', files: [] });
    expect(existsSync(join(result.workspace, 'note.txt'))).toBe(false);
    const [toolResult] = model.requests[1].messages.filter((message) => message.role === 'tool');
    expect(messageText(toolResult)).toContain('cut off by the output token limit');
    expect(eventsOfType(events, 'tool-call-end')[0]).toMatchObject({ tool: 'write_note', isError: true });
  });

  it('does not finish on a terminate call cut off with finish reason max_tokens', async () => {
    const { result, model } = await run([
      callReply('terminate', { status: 'success', message: 'half an ans' }, { finishReason: 'max_tokens' }),
      terminateReply('the whole answer'),
    ]);
    expect(result).toMatchObject({ status: 'success', answer: 'the whole answer', steps: 2 });
    expect(model.requests).toHaveLength(2);
  });

  it('does not take cut-off text as the answer, and asks for a shorter one', async () => {
    const { result, model, events } = await run([{ content: 'The answer begins and then', finishReason: 'length' }, { content: 'Short answer.' }]);
    expect(result).toMatchObject({ status: 'success', answer: 'Short answer.', steps: 2 });
    expect(messageText(lastMessage(model.requests[1]))).toContain('cut off by the output token limit');
    expect(eventsOfType(events, 'message').map((event) => event.message.role)).toEqual(['system', 'user', 'assistant', 'user', 'assistant']);
  });

  it('ends as stuck when every reply runs into the limit', async () => {
    const cutOff = { content: 'A very long', finishReason: 'length' };
    const { result, model, events } = await run(Array.from({ length: 6 }, () => cutOff));
    expect(result).toMatchObject({ status: 'stuck', steps: 4 });
    expect(model.requests).toHaveLength(4);
    expect(eventsOfType(events, 'stuck-nudge')).toHaveLength(1);
  });
});

describe('model failures', () => {
  it('ends as provider-failed with the error, keeping the steps already done', async () => {
    const failure = new ProviderError('server_error', 'the provider answered 503 three times');
    const { result, events } = await run([callReply('echo', { text: 'fine' }), { error: failure }]);
    expect(result).toMatchObject({
      status: 'provider-failed',
      steps: 1,
      error: { code: 'provider_server_error', message: 'the provider answered 503 three times' },
      answer: 'the provider answered 503 three times',
    });
    expect(result.usage.totalTokens).toBe(15);
    expect(events.at(-1)).toMatchObject({ type: 'run-end', status: 'provider-failed', error: { code: 'provider_server_error' } });
  });

  it('ends as an error when the model throws something unexpected', async () => {
    const { result } = await run([{ error: new TypeError('cannot read the reply') }]);
    expect(result).toMatchObject({ status: 'error', error: { code: 'internal_error' } });
    expect(result.error!.message).toContain('cannot read the reply');
  });
});
