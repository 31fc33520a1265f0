import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readEvents } from './support/run-cli.js';
import { runScripted, terminate, toolMessages } from './support/loop-fixture.js';

describe('finishing', () => {
  it('ends on terminate with the answer on stdout and exit 0', async () => {
    const run = await runScripted([
      { content: 'Echoing first.', toolCalls: [{ name: 'echo', arguments: { text: 'hello' } }] },
      terminate('The answer is 42.'),
    ]);
    expect(run.exitCode).toBe(0);
    expect(run.json).toMatchObject({ status: 'success', answer: 'The answer is 42.', steps: 2, model: 'scripted-model' });
    expect(run.json.usage.totalTokens).toBeGreaterThan(0);
    expect(toolMessages(run.requests[1])).toEqual([{ role: 'tool', tool_call_id: expect.any(String), content: 'echo: hello' }]);
  });

  it('prints the plain answer without --json', async () => {
    const { fixture } = await runScripted([terminate('unused')]);
    const run = await runScripted([terminate('Plain answer.')], { fixture, args: [] });
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toContain('Plain answer.');
  });

  it('ends on a plain-text reply, the weakness that makes other runtimes churn', async () => {
    const run = await runScripted([{ content: 'Paris is the capital of France.' }]);
    expect(run.exitCode).toBe(0);
    expect(run.json).toMatchObject({ status: 'success', answer: 'Paris is the capital of France.', steps: 1 });
    expect(run.requests).toHaveLength(1);
  });

  it('keeps going after text when the agent does not finish on text', async () => {
    const run = await runScripted([{ content: 'Thinking aloud.' }, terminate('Done now.')], { agentExtra: 'finish_on_text: false' });
    expect(run.json).toMatchObject({ status: 'success', answer: 'Done now.', steps: 2 });
  });

  it('reports terminate with failure as a failed task, exit 1', async () => {
    const run = await runScripted([terminate('The site is down.', 'failure')]);
    expect(run.exitCode).toBe(1);
    expect(run.json).toMatchObject({ status: 'failure', answer: 'The site is down.' });
  });
});

describe('progress', () => {
  it('shows the text a reply sends alongside its tool calls, before the calls', async () => {
    const run = await runScripted([
      { content: "I'll compute it.", toolCalls: [{ name: 'echo', arguments: { text: 'six times seven' } }] },
      terminate('42'),
    ]);
    expect(run.exitCode).toBe(0);
    expect(run.stderr).toContain("[step 1/20] I'll compute it.\n[step 1/20] echo(text=\"six times seven\")\n");
  });
});

describe('budgets', () => {
  const endlessEcho = Array.from({ length: 10 }, (_, index) => ({ toolCalls: [{ name: 'echo', arguments: { text: `step ${index}` } }] }));

  it('stops at the step budget with its own status and exit 3', async () => {
    const run = await runScripted(endlessEcho, { agentExtra: 'max_steps: 3' });
    expect(run.exitCode).toBe(3);
    expect(run.json).toMatchObject({ status: 'budget-exhausted', exhaustedBudget: 'steps', steps: 3 });
    expect(run.requests).toHaveLength(3);
  });

  it('lets --max-steps override the agent and recipe', async () => {
    const run = await runScripted(endlessEcho, { agentExtra: 'max_steps: 3', args: ['--max-steps', '5'] });
    expect(run.exitCode).toBe(3);
    expect(run.json.steps).toBe(5);
  });

  it('stops when the token budget is spent', async () => {
    const turns = endlessEcho.map((turn) => ({ ...turn, usage: { prompt_tokens: 400, completion_tokens: 100 } }));
    const run = await runScripted(turns, { recipeExtra: 'budgets: { tokens: 1200 }' });
    expect(run.exitCode).toBe(3);
    expect(run.json).toMatchObject({ status: 'budget-exhausted', exhaustedBudget: 'tokens' });
    expect(run.json.usage.totalTokens).toBeGreaterThanOrEqual(1000);
    expect(run.requests.length).toBeLessThanOrEqual(3);
  });

  it('never sends a request whose prompt alone would pass what is left of the token budget', async () => {
    // The provider counts 500 prompt tokens a step, more than the runtime's own count of the
    // prompt: the gap it learns from the first reply keeps a third request (1200 + 500 > 1500) unsent.
    const turns = endlessEcho.map((turn) => ({ ...turn, usage: { prompt_tokens: 500, completion_tokens: 100 } }));
    const run = await runScripted(turns, { recipeExtra: 'budgets: { tokens: 1500 }' });
    expect(run.exitCode).toBe(3);
    expect(run.json).toMatchObject({ status: 'budget-exhausted', exhaustedBudget: 'tokens' });
    expect(run.requests).toHaveLength(2);
    expect(run.json.usage.totalTokens).toBe(1200);
    const modelResponses = readEvents(run.json.runDirectory).filter((event) => event.type === 'model-response');
    let spent = 0;
    for (const response of modelResponses) {
      expect(response.usage.promptTokens).toBeLessThanOrEqual(1500 - spent);
      spent += response.usage.totalTokens;
    }
  });

  it('stops a slow run at the time budget, even in the middle of a model call', async () => {
    const started = Date.now();
    const run = await runScripted([{ delayMs: 10_000, content: 'too late' }], { recipeExtra: 'budgets: { time_seconds: 1 }' });
    expect(run.exitCode).toBe(3);
    expect(run.json).toMatchObject({ status: 'budget-exhausted', exhaustedBudget: 'time' });
    expect(Date.now() - started).toBeLessThan(8000);
  });
});

describe('stuck detection', () => {
  it('nudges once on repeated identical calls, then stops with status stuck', async () => {
    const same = { toolCalls: [{ name: 'echo', arguments: { text: 'again' } }] };
    const run = await runScripted(Array.from({ length: 8 }, () => same));
    expect(run.exitCode).toBe(1);
    expect(run.json.status).toBe('stuck');
    // Three identical turns earn a nudge; the fourth identical turn after it stops the run.
    expect(run.requests).toHaveLength(4);
    const nudged = JSON.stringify(run.requests[3].body.messages);
    expect(nudged).toContain('repeated the same action');
    const events = readEvents(run.json.runDirectory);
    expect(events.filter((event) => event.type === 'stuck-nudge')).toHaveLength(1);
  });

  it('treats the same call with reordered arguments as a repeat', async () => {
    const first = { toolCalls: [{ name: 'wait', arguments: { label: 'a', milliseconds: 1 } }] };
    const second = { toolCalls: [{ name: 'wait', arguments: '{"milliseconds": 1, "label": "a"}' }] };
    const run = await runScripted([first, second, first, second, first]);
    expect(run.json.status).toBe('stuck');
  });

  it('does not call varied progress stuck', async () => {
    const varied = Array.from({ length: 6 }, (_, index) => ({ toolCalls: [{ name: 'echo', arguments: { text: `${index}` } }] }));
    const run = await runScripted([...varied, terminate('fine')]);
    expect(run.json).toMatchObject({ status: 'success', steps: 7 });
  });
});

describe('tool calls', () => {
  it('runs independent calls of one turn concurrently and reports results in call order', async () => {
    const run = await runScripted([
      {
        toolCalls: [
          { name: 'wait', arguments: { label: 'slow', milliseconds: 700 } },
          { name: 'wait', arguments: { label: 'fast', milliseconds: 50 } },
          { name: 'wait', arguments: { label: 'medium', milliseconds: 300 } },
        ],
      },
      terminate(),
    ]);
    expect(run.exitCode).toBe(0);
    const results = toolMessages(run.requests[1]).map((message) => message.content);
    expect(results.map((content) => content.split(' ')[0])).toEqual(['slow', 'fast', 'medium']);
    const times = results.map((content) => ({
      started: Number(/started=(\d+)/.exec(content)![1]),
      ended: Number(/ended=(\d+)/.exec(content)![1]),
    }));
    // All three started before the slowest ended: they overlapped.
    expect(Math.max(...times.map((time) => time.started))).toBeLessThan(times[0].ended);
    const callIds = (run.requests[1].body.messages as any[]).find((message) => message.tool_calls)?.tool_calls.map((call: any) => call.id);
    expect(toolMessages(run.requests[1]).map((message) => message.tool_call_id)).toEqual(callIds);
  });

  it('runs the calls one by one when the agent turns parallel calls off', async () => {
    const run = await runScripted([
      { toolCalls: [{ name: 'wait', arguments: { label: 'one', milliseconds: 200 } }, { name: 'wait', arguments: { label: 'two', milliseconds: 10 } }] },
      terminate(),
    ], { agentExtra: 'parallel_tool_calls: false' });
    const [one, two] = toolMessages(run.requests[1]).map((message) => message.content);
    expect(Number(/started=(\d+)/.exec(two)![1])).toBeGreaterThanOrEqual(Number(/ended=(\d+)/.exec(one)![1]));
    expect(run.requests[0].body.parallel_tool_calls).toBe(false);
  });

  it('keeps the head and tail of a long observation within max_observe', async () => {
    const run = await runScripted([{ toolCalls: [{ name: 'big_output', arguments: { characters: 50_000 } }] }, terminate()], {
      agentExtra: 'max_observe: 1000',
    });
    const [observation] = toolMessages(run.requests[1]);
    expect(observation.content.length).toBeLessThanOrEqual(1000);
    expect(observation.content.startsWith('HEADxxx')).toBe(true);
    expect(observation.content.endsWith('xxxTAIL')).toBe(true);
    expect(observation.content).toMatch(/\[\.\.\. \d+ characters omitted/);
  });

  it('answers an unknown tool with an error naming the available tools', async () => {
    const run = await runScripted([{ toolCalls: [{ name: 'ecko', arguments: { text: 'x' } }] }, terminate()]);
    const [result] = toolMessages(run.requests[1]);
    expect(result.content).toContain("There is no tool named 'ecko'");
    expect(result.content).toContain("did you mean 'echo'");
    expect(result.content).toContain('Available tools: echo, wait, big_output, fail, read_env, terminate');
    expect(run.exitCode).toBe(0);
  });

  it('repairs almost-JSON arguments once, and answers hopeless JSON with an error result', async () => {
    const run = await runScripted([
      { toolCalls: [{ name: 'echo', arguments: '```json\n{"text": "repaired",}\n```' }] },
      { toolCalls: [{ name: 'echo', arguments: '{{{ not json at all' }] },
      terminate(),
    ]);
    expect(run.exitCode).toBe(0);
    expect(toolMessages(run.requests[1])[0].content).toBe('echo: repaired');
    const failed = toolMessages(run.requests[2]).at(-1)!;
    expect(failed.content).toContain('not valid JSON');
    // History keeps valid JSON so strict providers accept the conversation.
    const assistantCalls = (run.requests[2].body.messages as any[]).filter((message) => message.tool_calls).flatMap((message) => message.tool_calls);
    for (const call of assistantCalls) expect(() => JSON.parse(call.function.arguments)).not.toThrow();
  });

  it('checks arguments against the schema before the tool runs', async () => {
    const run = await runScripted([{ toolCalls: [{ name: 'echo', arguments: { txt: 'typo' } }] }, terminate()]);
    const [result] = toolMessages(run.requests[1]);
    expect(result.content).toContain("Invalid arguments for 'echo'");
    expect(result.content).toContain("missing required argument 'text'");
  });

  it('returns a throwing tool\'s error to the model and carries on', async () => {
    const run = await runScripted([{ toolCalls: [{ name: 'fail', arguments: {} }] }, terminate('recovered')]);
    expect(run.exitCode).toBe(0);
    expect(toolMessages(run.requests[1])[0].content).toBe('Error: the disk is on fire');
    const end = readEvents(run.json.runDirectory).find((event) => event.type === 'tool-call-end');
    expect(end).toMatchObject({ tool: 'fail', isError: true });
  });
});

describe('prompts', () => {
  it('sends the next-step prompt with each request without storing it in history', async () => {
    const turns = [0, 1, 2].map((index) => ({ toolCalls: [{ name: 'echo', arguments: { text: `${index}` } }] }));
    const run = await runScripted([...turns, terminate()], { agentExtra: 'next_step_prompt: NEXT-STEP-MARKER decide what to do.' });
    for (const request of run.requests) {
      const messages = request.body.messages as Array<{ role: string; content: string }>;
      expect(messages.filter((message) => JSON.stringify(message).includes('NEXT-STEP-MARKER'))).toHaveLength(1);
      expect(messages.at(-1)!.content).toContain('NEXT-STEP-MARKER');
    }
    // Each request is the previous one's history plus the new turn: nothing is re-sent or rewritten.
    for (let index = 1; index < run.requests.length; index += 1) {
      const previous = (run.requests[index - 1].body.messages as unknown[]).slice(0, -1);
      const current = run.requests[index].body.messages as unknown[];
      expect(current.slice(0, previous.length)).toEqual(previous);
      expect(current.length).toBe(previous.length + 3);
    }
  });
});

describe('structured answers', () => {
  const response = 'response: { type: object, required: [city, population], additionalProperties: false, properties: { city: { type: string }, population: { type: integer } } }';

  it('accepts an answer that matches the response schema', async () => {
    const run = await runScripted([
      { toolCalls: [{ name: 'create_chat_completion', arguments: { response: { city: 'Oslo', population: 709000 } } }] },
    ], { recipeExtra: response });
    expect(run.exitCode).toBe(0);
    expect(run.json.structured).toEqual({ city: 'Oslo', population: 709000 });
    const tools = run.requests[0].body.tools as Array<{ function: { name: string; parameters: any } }>;
    const answerTool = tools.find((tool) => tool.function.name === 'create_chat_completion')!;
    expect(answerTool.function.parameters.properties.response.required).toEqual(['city', 'population']);
  });

  it('accepts a JSON text answer in a code fence', async () => {
    const run = await runScripted([{ content: '```json\n{"city": "Bern", "population": 134000}\n```' }], { recipeExtra: response });
    expect(run.json).toMatchObject({ status: 'success', structured: { city: 'Bern', population: 134000 } });
  });

  it('sends a non-conforming answer back once for correction', async () => {
    const run = await runScripted([
      { content: '{"city": "Rome"}' },
      { toolCalls: [{ name: 'create_chat_completion', arguments: { response: { city: 'Rome', population: 2800000 } } }] },
    ], { recipeExtra: response });
    expect(run.exitCode).toBe(0);
    expect(run.json.structured).toEqual({ city: 'Rome', population: 2800000 });
    expect(JSON.stringify(run.requests[1].body.messages)).toContain('does not match the required format');
  });

  it('fails with exit 1 when the corrected answer still does not conform', async () => {
    const run = await runScripted([
      { content: '{"city": "Rome"}' },
      { toolCalls: [{ name: 'create_chat_completion', arguments: { response: { city: 'Rome', population: 'many' } } }] },
      terminate('unreachable'),
    ], { recipeExtra: response });
    expect(run.exitCode).toBe(1);
    expect(run.json.status).toBe('failure');
    expect(run.json.answer).toContain('did not match the required format');
    expect(run.requests).toHaveLength(2);
  });
});

describe('the events file', () => {
  it('records the run as it goes, and never a secret', async () => {
    const secret = 'sk-live-0123456789abcdef';
    const run = await runScripted([
      { content: 'Checking.', toolCalls: [{ name: 'read_env', arguments: { name: 'OPENAI_API_KEY' } }] },
      terminate('done'),
    ], { env: { OPENAI_API_KEY: secret } });
    expect(run.exitCode).toBe(0);
    const text = readFileSync(join(run.json.runDirectory, 'events.jsonl'), 'utf8');
    expect(text).not.toContain(secret);
    expect(text).toContain('[redacted]');
    const types = readEvents(run.json.runDirectory).map((event) => event.type);
    // Every message added to history is an event too, so a run can be resumed from the file.
    expect(types.filter((type) => type === 'message')).toHaveLength(2 + 2 + 2);
    // No tool here runs code, so no sandbox is chosen (and none probed for).
    expect(types.filter((type) => type !== 'message')).toEqual([
      'run-start',
      'model-request', 'model-response', 'tool-call-start', 'tool-call-end', 'step-end',
      'model-request', 'model-response', 'tool-call-start', 'tool-call-end', 'step-end',
      'run-end',
    ]);
    const events = readEvents(run.json.runDirectory);
    expect(events[0]).toMatchObject({ runId: run.json.runId, agent: 'loop-test (inline)', model: { model: 'scripted-model' }, task: 'Do the task.' });
    expect(events.find((event) => event.type === 'model-response')).toMatchObject({ step: 1, content: 'Checking.', usage: { promptTokens: expect.any(Number) } });
    expect(events.filter((event) => event.type === 'message').map((event) => event.message.role)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant', 'tool']);
    expect(events.at(-1)).toMatchObject({ status: 'success', exitCode: 0, steps: 2 });
    for (const event of events) expect(Date.parse(event.time)).not.toBeNaN();
  });
});

describe('permissions', () => {
  it('refuses a denied tool with an error result the model can read', async () => {
    const run = await runScripted([{ toolCalls: [{ name: 'echo', arguments: { text: 'x' } }] }, terminate()], {
      agentExtra: 'permissions: { deny: [echo] }',
    });
    expect(run.exitCode).toBe(0);
    expect(toolMessages(run.requests[1])[0].content).toContain("Permission denied: agent 'loop-test (inline)' denies echo.");
  });

  it('asks before a guarded call and runs it when approved', async () => {
    const run = await runScripted([{ toolCalls: [{ name: 'echo', arguments: { text: 'approved' } }] }, terminate()], {
      agentExtra: 'permissions: { ask: [echo] }',
      args: ['--answer', 'yes'],
    });
    expect(toolMessages(run.requests[1])[0].content).toBe('echo: approved');
    const answered = readEvents(run.json.runDirectory).find((event) => event.type === 'human-answer');
    expect(answered).toMatchObject({ answer: 'yes', source: 'answer' });
  });

  it('reports a refused approval to the model', async () => {
    const run = await runScripted([{ toolCalls: [{ name: 'echo', arguments: { text: 'refused' } }] }, terminate()], {
      agentExtra: 'permissions: { ask: [echo] }',
      args: ['--answer', 'no'],
    });
    expect(toolMessages(run.requests[1])[0].content).toContain('did not approve');
  });

  it('stops with exit 5 when an approval is needed and no one can answer', async () => {
    const run = await runScripted([{ toolCalls: [{ name: 'echo', arguments: { text: 'x' } }] }, terminate()], {
      agentExtra: 'permissions: { ask: [echo] }',
    });
    expect(run.exitCode).toBe(5);
    expect(run.json).toMatchObject({ status: 'needs-input', error: { code: 'approval_needed' } });
    expect(run.json.answer).toContain('--approve call_0_0');
    expect(run.requests).toHaveLength(1);
  });
});

describe('images', () => {
  const turns = [{ toolCalls: [{ name: 'snapshot', arguments: {} }] }, { toolCalls: [{ name: 'echo', arguments: { text: 'next' } }] }, terminate()];

  it('shows tool images to a vision profile for one step only', async () => {
    const run = await runScripted(turns, { tools: ['snapshot', 'echo', 'terminate'], profile: 'vision: true' });
    expect(run.exitCode).toBe(0);
    const shown = run.requests[1].body.messages.at(-1) as { role: string; content: Array<{ type: string; image_url?: { url: string } }> };
    expect(shown.role).toBe('user');
    expect(shown.content).toContainEqual({ type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } });
    expect(JSON.stringify(run.requests[2].body.messages)).not.toContain('image_url');
  });

  it('tells a model without vision that an image was left out', async () => {
    const run = await runScripted(turns, { tools: ['snapshot', 'echo', 'terminate'] });
    const serialized = JSON.stringify(run.requests[1].body.messages);
    expect(serialized).not.toContain('image_url');
    expect(serialized).toContain('not marked vision-capable');
  });
});

describe('interrupts', () => {
  it('stops on Ctrl-C during a tool call with exit 130 and records it', async () => {
    const { startScriptedModelServer } = await import('./support/scripted-model-server.js');
    const { spawn } = await import('node:child_process');
    const { cliEntry } = await import('./support/run-cli.js');
    const { writeLoopFixture } = await import('./support/loop-fixture.js');
    const fixture = writeLoopFixture();
    const server = await startScriptedModelServer({ turns: [{ toolCalls: [{ name: 'wait', arguments: { label: 'long', milliseconds: 60_000 } }] }] });
    try {
      const child = spawn(process.execPath, [cliEntry, 'run', 'recipe.yaml', '--json'], {
        cwd: fixture,
        env: { PATH: process.env.PATH, OPENAI_BASE_URL: server.baseUrl, MANUS_MODEL: 'scripted-model', NO_COLOR: '1' },
      });
      let stdout = '';
      let stderr = '';
      let interrupted = false;
      child.stdout.on('data', (chunk) => (stdout += chunk));
      child.stderr.on('data', (chunk) => {
        stderr += chunk;
        if (!interrupted && stderr.includes('wait(')) {
          interrupted = true;
          child.kill('SIGINT');
        }
      });
      const started = Date.now();
      const exitCode = await new Promise((resolve) => child.on('close', resolve));
      expect(exitCode).toBe(130);
      expect(Date.now() - started).toBeLessThan(20_000);
      const result = JSON.parse(stdout);
      expect(result.status).toBe('interrupted');
      const events = readEvents(result.runDirectory);
      expect(events.at(-1)).toMatchObject({ type: 'run-end', status: 'interrupted', exitCode: 130 });
    } finally {
      await server.close();
    }
  });
});
