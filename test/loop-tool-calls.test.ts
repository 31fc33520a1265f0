/**
 * Tool calls in the loop, driven in-process against a scripted `ChatModel`: errors going back to
 * the model, the error streak, permissions, and which calls of a turn may overlap.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { eventsOfType, useInProcessRuns } from './support/in-process-loop.js';
import { callReply, messageText, terminateReply, type ReceivedRequest, type ScriptedCall } from './support/scripted-chat-model.js';

const run = useInProcessRuns();

/** The tool results the model was sent in a request, in order. */
function toolResults(request: ReceivedRequest): Array<{ id: string; text: string }> {
  return request.messages.flatMap((message) => (message.role === 'tool' ? [{ id: message.tool_call_id, text: message.content }] : []));
}

describe('tool errors', () => {
  it('sends a throwing tool\'s message back as an error result, keeps the stack for the events file, and carries on', async () => {
    const { result, model, events } = await run([callReply('fail', { message: 'the disk is on fire' }), terminateReply('recovered')]);
    expect(result).toMatchObject({ status: 'success', answer: 'recovered', steps: 2 });
    expect(toolResults(model.requests[1])).toEqual([{ id: 'call_1', text: 'Error: the disk is on fire' }]);
    expect(eventsOfType(events, 'tool-call-end')[0]).toMatchObject({ tool: 'fail', isError: true, content: 'Error: the disk is on fire' });
    const [toolError] = eventsOfType(events, 'tool-error');
    expect(toolError).toMatchObject({ step: 1, callId: 'call_1', tool: 'fail', message: 'the disk is on fire' });
    expect(toolError.stack).toContain('Error: the disk is on fire\n    at ');
  });

  it('answers a call to an unknown tool with the tools there are', async () => {
    const { result, model, events } = await run([callReply('ecko', { text: 'x' }), terminateReply()]);
    expect(result.status).toBe('success');
    const [{ text }] = toolResults(model.requests[1]);
    expect(text).toContain("There is no tool named 'ecko'");
    expect(text).toContain("did you mean 'echo'");
    expect(text).toContain('Available tools: echo, wait, write_note, fail, terminate.');
    expect(eventsOfType(events, 'tool-call-end')[0]).toMatchObject({ tool: 'ecko', isError: true });
  });

  it('checks arguments against the schema before the tool runs', async () => {
    const { result, model } = await run([callReply('write_note', { path: 'note.txt' }), terminateReply()]);
    expect(result.files).toEqual([]);
    const [{ text }] = toolResults(model.requests[1]);
    expect(text).toContain("Invalid arguments for 'write_note'");
    expect(text).toContain("missing required argument 'text'");
  });

  it('answers arguments that are not JSON with an error, and keeps valid JSON in history', async () => {
    const { model } = await run([callReply('echo', '{{{ not json at all'), terminateReply()]);
    const [{ text }] = toolResults(model.requests[1]);
    expect(text).toContain('not valid JSON');
    const assistant = model.requests[1].messages.find((message) => message.role === 'assistant' && message.tool_calls);
    expect(assistant).toMatchObject({ tool_calls: [{ id: 'call_1', function: { name: 'echo', arguments: '{}' } }] });
  });

  it('repairs almost-JSON arguments and runs the call', async () => {
    const { model } = await run([callReply('echo', '```json\n{"text": "repaired",}\n```'), terminateReply()]);
    expect(toolResults(model.requests[1])).toEqual([{ id: 'call_1', text: 'echo: repaired' }]);
  });

  it('keeps the head and tail of a long result within max_observe', async () => {
    const { model } = await run([callReply('echo', { text: `HEAD${'x'.repeat(5000)}TAIL` }), terminateReply()], { agent: 'max_observe: 300' });
    const [{ text }] = toolResults(model.requests[1]);
    expect(text.length).toBeLessThanOrEqual(300);
    expect(text.startsWith('echo: HEADxxx')).toBe(true);
    expect(text.endsWith('xxxTAIL')).toBe(true);
    expect(text).toMatch(/\[\.\.\. \d+ characters omitted/);
  });
});

describe('the error streak', () => {
  const failing = (index: number) => callReply('fail', { message: `failure ${index}` });

  it('nudges after error_streak failed calls in a row, then stops as stuck at twice as many', async () => {
    const { result, model, events } = await run([1, 2, 3, 4, 5, 6].map(failing), { agent: 'error_streak: 2' });
    expect(result).toMatchObject({ status: 'stuck', steps: 4 });
    expect(result.answer).toBe('The last 4 tool calls all failed, after a warning at 2, so the run was stopped.');
    expect(model.requests).toHaveLength(4);
    expect(messageText(model.requests[2].messages.at(-1)!)).toContain('Your last 2 tool calls all failed');
    expect(JSON.stringify(model.requests[1].messages)).not.toContain('tool calls all failed');
    expect(eventsOfType(events, 'error-streak-nudge')).toMatchObject([{ step: 2, failures: 2 }]);
  });

  it('counts failed calls of one turn together', async () => {
    const { result, events } = await run([
      { toolCalls: [{ name: 'fail', arguments: { message: 'a' } }, { name: 'fail', arguments: { message: 'b' } }] },
      terminateReply('stopped trying'),
    ], { agent: 'error_streak: 2' });
    expect(result.status).toBe('success');
    expect(eventsOfType(events, 'error-streak-nudge')).toMatchObject([{ step: 1, failures: 2 }]);
  });

  it('starts again after a call that succeeds', async () => {
    const { result, events } = await run([
      failing(1), failing(2), callReply('echo', { text: 'a success' }), failing(3), failing(4), terminateReply('fine'),
    ], { agent: 'error_streak: 2' });
    expect(result).toMatchObject({ status: 'success', answer: 'fine', steps: 6 });
    expect(eventsOfType(events, 'error-streak-nudge').map((event) => event.step)).toEqual([2, 5]);
  });

  it('is off at error_streak: 0', async () => {
    const { result, events } = await run([...[1, 2, 3, 4, 5, 6].map(failing), terminateReply('fine')], { agent: 'error_streak: 0' });
    expect(result).toMatchObject({ status: 'success', steps: 7 });
    expect(eventsOfType(events, 'error-streak-nudge')).toHaveLength(0);
  });
});

describe('permissions', () => {
  const note = callReply('write_note', { path: 'note.txt', text: 'hello' });

  it('refuses a denied tool with an error result the model can read, without running it', async () => {
    const { result, model } = await run([note, terminateReply()], { agent: 'permissions: { deny: [write_note] }' });
    expect(result).toMatchObject({ status: 'success', files: [] });
    expect(existsSync(join(result.workspace, 'note.txt'))).toBe(false);
    expect(toolResults(model.requests[1])[0].text).toBe("Permission denied: agent 'loop-test (inline)' denies write_note. Do what the task needs without this call, or say what you need.");
  });

  it('stops as needs-input, with the call pending, when a call needs approval and no one can answer', async () => {
    const { result, model, events } = await run([note, terminateReply()], { agent: 'permissions: { ask: [write_note] }' });
    expect(result).toMatchObject({ status: 'needs-input', error: { code: 'approval_needed' }, files: [] });
    expect(result.answer).toContain(`continue with: manus resume ${result.runId} --approve call_1`);
    expect(model.requests).toHaveLength(1);
    expect(existsSync(join(result.workspace, 'note.txt'))).toBe(false);
    expect(eventsOfType(events, 'permission-needed')).toMatchObject([{ callId: 'call_1', tool: 'write_note', rule: 'write_note', arguments: { path: 'note.txt', text: 'hello' } }]);
    expect(events.at(-1)).toMatchObject({ type: 'run-end', status: 'needs-input' });
  });

  it('does not let the recipe\'s answers approve a call', async () => {
    const { result } = await run([note, terminateReply()], { agent: 'permissions: { ask: [write_note] }', recipe: 'answers: { write_note: "yes" }' });
    expect(result).toMatchObject({ status: 'needs-input', files: [] });
  });

  it('runs a call the user approves, and records the answer', async () => {
    const { result, events } = await run([note, terminateReply()], { agent: 'permissions: { ask: [write_note] }', answers: ['yes'] });
    expect(result).toMatchObject({ status: 'success', files: ['note.txt'] });
    expect(readFileSync(join(result.workspace, 'note.txt'), 'utf8')).toBe('hello');
    expect(eventsOfType(events, 'human-answer')).toMatchObject([{ answer: 'yes', source: 'answer', question: expect.stringContaining('Allow the agent to call write_note') }]);
  });

  it('tells the model when the user refuses', async () => {
    const { result, model } = await run([note, terminateReply()], { agent: 'permissions: { ask: [write_note] }', answers: ['no'] });
    expect(result).toMatchObject({ status: 'success', files: [] });
    expect(toolResults(model.requests[1])[0].text).toBe("Permission denied: the user did not approve the call to 'write_note'.");
  });
});

describe('calls in one turn', () => {
  interface Timing { label: string; started: number; ended: number }

  /** The start and end each timed call reported, in the order the model made the calls. */
  function timings(request: ReceivedRequest): Timing[] {
    return toolResults(request).map(({ text }) => {
      const match = /^(\S+) started=([\d.]+) ended=([\d.]+)$/.exec(text);
      if (!match) throw new Error(`not a timed result: ${text}`);
      return { label: match[1], started: Number(match[2]), ended: Number(match[3]) };
    });
  }

  const timed = (name: string, label: string, milliseconds: number): ScriptedCall => ({ name, arguments: { label, milliseconds } });

  it('runs independent calls together and returns the results in call order', async () => {
    const { result, model } = await run([
      { toolCalls: [timed('wait', 'slow', 150), timed('wait', 'fast', 10), timed('wait', 'medium', 80)] },
      terminateReply(),
    ], { tools: ['wait', 'terminate'] });
    expect(result.status).toBe('success');
    const [slow, fast, medium] = timings(model.requests[1]);
    expect([slow.label, fast.label, medium.label]).toEqual(['slow', 'fast', 'medium']);
    expect(Math.max(fast.started, medium.started)).toBeLessThan(slow.ended);
    expect(toolResults(model.requests[1]).map((toolResult) => toolResult.id)).toEqual(['call_1', 'call_2', 'call_3']);
    expect(model.requests[0].parallelToolCalls).toBe(true);
  });

  it('never overlaps two calls of a sequential tool, while other calls run beside them', async () => {
    const { model } = await run([
      { toolCalls: [timed('wait_in_line', 'first', 100), timed('wait_in_line', 'second', 50), timed('wait', 'beside', 50)] },
      terminateReply(),
    ], { tools: ['wait', 'wait_in_line', 'terminate'] });
    const [first, second, beside] = timings(model.requests[1]);
    expect(second.started).toBeGreaterThanOrEqual(first.ended);
    expect(beside.started).toBeLessThan(first.ended);
  });

  it('never overlaps calls of tools in one sequential group', async () => {
    const { model } = await run([
      { toolCalls: [timed('wait_in_group_a', 'a', 60), timed('wait_in_group_b', 'b', 60), timed('wait_in_group_a', 'again', 10)] },
      terminateReply(),
    ], { tools: ['wait_in_group_a', 'wait_in_group_b', 'terminate'] });
    const [a, b, again] = timings(model.requests[1]);
    expect(b.started).toBeGreaterThanOrEqual(a.ended);
    expect(again.started).toBeGreaterThanOrEqual(b.ended);
  });

  it('runs every call in turn when the agent turns parallel calls off', async () => {
    const { model } = await run([
      { toolCalls: [timed('wait', 'one', 60), timed('wait', 'two', 10)] },
      terminateReply(),
    ], { tools: ['wait', 'terminate'], agent: 'parallel_tool_calls: false' });
    const [one, two] = timings(model.requests[1]);
    expect(two.started).toBeGreaterThanOrEqual(one.ended);
    expect(model.requests[0].parallelToolCalls).toBe(false);
  });
});
