import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readEvents } from './support/run-cli.js';
import { runScripted, terminate, toolMessages, writeLoopFixture, type ScriptedRun } from './support/loop-fixture.js';
import type { RecordedChatRequest, ScriptedTurn } from './support/scripted-model-server.js';

/** A fixture whose workspace `work/` holds a folder the model will try to delete. */
function fixtureWithKeep(agentExtra?: string): string {
  const fixture = writeLoopFixture({ tools: ['bash', 'terminate'], agentExtra });
  mkdirSync(join(fixture, 'work', 'keep'), { recursive: true });
  writeFileSync(join(fixture, 'work', 'keep', 'precious.txt'), 'still here\n');
  return fixture;
}

function run(turns: ScriptedTurn[], fixture = fixtureWithKeep()): Promise<ScriptedRun> {
  return runScripted(turns, { fixture, args: ['--workspace', 'work'] });
}

const bash = (argumentsText: string) => ({ name: 'bash', arguments: argumentsText });

/** Every tool call the request's history holds has a tool result, and its arguments are JSON. */
function expectValidHistory(request: RecordedChatRequest): void {
  const messages = request.body.messages as Array<{ role: string; tool_call_id?: string; tool_calls?: Array<{ id: string; function: { arguments: string } }> }>;
  const calls = messages.flatMap((message) => message.tool_calls ?? []);
  const answered = new Set(messages.filter((message) => message.role === 'tool').map((message) => message.tool_call_id));
  for (const call of calls) {
    expect(answered.has(call.id)).toBe(true);
    expect(() => JSON.parse(call.function.arguments)).not.toThrow();
  }
}

function toolEnds(scripted: ScriptedRun): Array<Record<string, any>> {
  return readEvents(scripted.json.runDirectory).filter((event) => event.type === 'tool-call-end');
}

describe('tool calls cut off by the output limit', () => {
  it('never runs a call whose arguments were cut off, and tells the model why', async () => {
    const fixture = fixtureWithKeep();
    const scripted = await run([
      { toolCalls: [bash('{"command": "rm -rf keep')], finishReason: 'length' },
      // The same tool does run whole calls: the folder was there to be deleted.
      { toolCalls: [bash('{"command": "ls keep"}')] },
      terminate('stopped'),
    ], fixture);
    expect(scripted.exitCode).toBe(0);
    expect(readFileSync(join(fixture, 'work', 'keep', 'precious.txt'), 'utf8')).toBe('still here\n');
    const [result] = toolMessages(scripted.requests[1]);
    expect(result.tool_call_id).toBe('call_0_0');
    expect(result.content).toContain('cut off by the output token limit');
    expect(result.content).toContain('shorter arguments');
    expect(result.content).toContain('write it to a file in several smaller calls');
    expectValidHistory(scripted.requests[1]);
    expect(toolMessages(scripted.requests[2]).at(-1)!.content).toContain('precious.txt');
    expect(toolEnds(scripted)[0]).toMatchObject({ tool: 'bash', isError: true });
  });

  it('runs no call of a cut-off reply, not even one whose JSON parses, and asks no one', async () => {
    // Asking would fail the run: there is no one to ask. A cut-off call must not get that far.
    const fixture = fixtureWithKeep('permissions: { ask: [bash] }');
    const scripted = await run([
      { toolCalls: [bash('{"command": "touch made-by-first-call"}'), bash('{"command": "rm -rf ke')], finishReason: 'length' },
      terminate('stopped'),
    ], fixture);
    expect(scripted.exitCode).toBe(0);
    expect(existsSync(join(fixture, 'work', 'made-by-first-call'))).toBe(false);
    expect(existsSync(join(fixture, 'work', 'keep', 'precious.txt'))).toBe(true);
    const results = toolMessages(scripted.requests[1]);
    expect(results.map((result) => result.tool_call_id)).toEqual(['call_0_0', 'call_0_1']);
    for (const result of results) expect(result.content).toContain('cut off by the output token limit');
    expectValidHistory(scripted.requests[1]);
    expect(toolEnds(scripted).slice(0, 2).map((end) => end.isError)).toEqual([true, true]);
  });

  it('stops a model that keeps getting cut off instead of nudging it forever', async () => {
    const fixture = fixtureWithKeep();
    const cutOff: ScriptedTurn = { toolCalls: [bash('{"command": "rm -rf keep')], finishReason: 'length' };
    const scripted = await run([...Array.from({ length: 8 }, () => cutOff), terminate('never reached')], fixture);
    expect(scripted.exitCode).not.toBe(0);
    expect(scripted.json.status).not.toBe('success');
    expect(scripted.requests.length).toBeLessThan(8);
    expect(existsSync(join(fixture, 'work', 'keep', 'precious.txt'))).toBe(true);
    expect(toolEnds(scripted).every((end) => end.isError === true)).toBe(true);
  });
});

describe('tool-call arguments that are not JSON', () => {
  it('never closes an unterminated object or string to run it', async () => {
    const fixture = fixtureWithKeep();
    const scripted = await run([
      { toolCalls: [bash('{"command": "rm -rf keep"')] },
      { toolCalls: [bash("{'command': 'rm -rf keep")] },
      terminate('stopped'),
    ], fixture);
    expect(scripted.exitCode).toBe(0);
    expect(existsSync(join(fixture, 'work', 'keep', 'precious.txt'))).toBe(true);
    for (const request of scripted.requests.slice(1)) {
      const result = toolMessages(request).at(-1)!;
      expect(result.content).toContain("The arguments for 'bash' are not valid JSON");
      expect(result.content).toContain('so the call was not run');
      expectValidHistory(request);
    }
    expect(toolEnds(scripted).slice(0, 2).map((end) => end.isError)).toEqual([true, true]);
  });

  it('still runs fenced JSON with a trailing comma', async () => {
    const fixture = fixtureWithKeep();
    const scripted = await run([
      { toolCalls: [bash('```json\n{"command": "echo fenced > fenced.txt",}\n```')] },
      terminate(),
    ], fixture);
    expect(scripted.exitCode).toBe(0);
    expect(readFileSync(join(fixture, 'work', 'fenced.txt'), 'utf8')).toBe('fenced\n');
  });

  it("never alters a value containing ', True or a trailing comma", async () => {
    const fixture = fixtureWithKeep();
    const scripted = await run([
      // Valid JSON but for the trailing comma outside the string.
      { toolCalls: [bash(`{"command": "printf '%s' \\"x: True, None, }\\" > double.txt",}`)] },
      // A Python-style dict: single quotes, an escaped quote inside, and a literal outside.
      { toolCalls: [bash(`{'command': 'printf \\'%s\\' "it\\'s: True" > single.txt', 'restart': False}`)] },
      terminate(),
    ], fixture);
    expect(scripted.exitCode).toBe(0);
    expect(readFileSync(join(fixture, 'work', 'double.txt'), 'utf8')).toBe('x: True, None, }');
    expect(readFileSync(join(fixture, 'work', 'single.txt'), 'utf8')).toBe("it's: True");
  });
});

describe('text cut off by the output limit', () => {
  it('is never taken as the final answer: the model is asked for a shorter complete one', async () => {
    const scripted = await runScripted([
      { content: 'The three largest moons of Jupiter are Ganymede, Callisto and', finishReason: 'length' },
      { content: 'Ganymede, Callisto and Io.' },
    ], { tools: ['terminate'], agentExtra: 'finish_on_text: true' });
    expect(scripted.exitCode, scripted.stderr).toBe(0);
    expect(scripted.json.answer).toBe('Ganymede, Callisto and Io.');
    const messages = scripted.requests[1].body.messages as Array<{ role: string; content: string }>;
    expect(messages.at(-1)!.content).toContain('cut off by the output token limit, so it was not taken as your answer');
  });

  it('stops a model that keeps running into the limit as stuck', async () => {
    const cutOff: ScriptedTurn = { content: 'An answer that never ends and', finishReason: 'length' };
    const scripted = await runScripted(Array.from({ length: 8 }, () => cutOff), { tools: ['terminate'], agentExtra: 'finish_on_text: true' });
    expect(scripted.exitCode).toBe(1);
    expect(scripted.json.status).toBe('stuck');
    expect(scripted.requests.length).toBeLessThan(8);
  });
});
