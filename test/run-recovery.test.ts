import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resumeStateOf, type RecordedRun, type RunEvent } from '../runtime/runs/recorded-run.js';
import { comparingWithRecording, DivergenceLog, recordedTools } from '../runtime/runs/replay.js';
import terminateTool from '../runtime/kernel/terminate-tool.js';
import { defineTool, type AnyToolDefinition } from '../runtime/contract/tool.js';
import { createTestToolContext } from './support/tool-context.js';
import { cliEntry, privateNetworkConfigHome, readEvents, runCli } from './support/run-cli.js';
import { terminate, toolMessages, writeLoopFixture } from './support/loop-fixture.js';
import { startScriptedModelServer, withScriptedModelServer as withServer, type RecordedChatRequest, type ScriptedModelServer, type ScriptedTurn } from './support/scripted-model-server.js';

const echo = (text: string): ScriptedTurn => ({ toolCalls: [{ name: 'echo', arguments: { text } }] });

function chatRequests(server: ScriptedModelServer): RecordedChatRequest[] {
  return server.requests.filter((request) => request.path.endsWith('/chat/completions')) as RecordedChatRequest[];
}

/** Starts `manus run` and SIGKILLs it as soon as `when` holds (checked on output and every 20 ms). */
async function runAndKill(fixture: string, server: ScriptedModelServer, when: (stderr: string) => boolean): Promise<string> {
  const child = spawn(process.execPath, [cliEntry, 'run', 'recipe.yaml', '--json'], {
    cwd: fixture,
    env: { PATH: process.env.PATH, OPENAI_BASE_URL: server.baseUrl, MANUS_MODEL: 'scripted-model', NO_COLOR: '1' },
  });
  let stderr = '';
  let killed = false;
  const check = () => {
    if (!killed && when(stderr)) {
      killed = true;
      child.kill('SIGKILL');
    }
  };
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
    check();
  });
  const poll = setInterval(check, 20);
  const signal = await new Promise((resolve) => child.on('close', (_code, killSignal) => resolve(killSignal)));
  clearInterval(poll);
  expect(signal).toBe('SIGKILL');
  const runId = /run (\d{8}-\d{6}-[0-9a-f]{6})/.exec(stderr)![1];
  return runId;
}

/** Sends Ctrl-C's SIGINT once `ready` says so (checked every 50 ms); resolves with the exit code. */
async function interruptWhen(child: ChildProcess, ready: () => boolean): Promise<number | null> {
  const poll = setInterval(() => {
    if (ready()) {
      clearInterval(poll);
      child.kill('SIGINT');
    }
  }, 50);
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  clearInterval(poll);
  return code;
}


const environment = (server: ScriptedModelServer) => ({ OPENAI_BASE_URL: server.baseUrl, MANUS_MODEL: 'scripted-model' });

describe('resume', () => {
  it('continues a run killed while waiting for the model, with the same history', async () => {
    const fixture = writeLoopFixture();
    const runId = await withServer([echo('one'), { delayMs: 30_000, content: 'never arrives' }], (server) =>
      runAndKill(fixture, server, () => chatRequests(server).length >= 2),
    );
    await withServer([terminate('finished after resume')], async (server) => {
      const resumed = await runCli(['resume', runId, '--json'], { cwd: fixture, env: environment(server) });
      expect(resumed.exitCode).toBe(0);
      expect(resumed.json).toMatchObject({ runId, status: 'success', answer: 'finished after resume', steps: 2 });
      const [request] = chatRequests(server);
      const messages = request.body.messages as Array<{ role: string; content: string }>;
      expect(messages.map((message) => message.role)).toEqual(['system', 'user', 'assistant', 'tool']);
      expect(messages[3].content).toBe('echo: one');
      const events = readEvents(resumed.json.runDirectory);
      expect(events.filter((event) => event.type === 'run-start')).toHaveLength(1);
      expect(events.some((event) => event.type === 'run-resume')).toBe(true);
      expect(events.at(-1)).toMatchObject({ type: 'run-end', status: 'success' });
    });
  });

  it('gives a run killed before its first messages were written its task when resumed', async () => {
    const fixture = writeLoopFixture();
    const runId = await withServer([{ delayMs: 30_000, content: 'never arrives' }], (server) =>
      runAndKill(fixture, server, () => chatRequests(server).length >= 1),
    );
    // As if killed while it started: the run's start is written, its conversation is not.
    const eventsFile = join(fixture, '.manus', 'runs', runId, 'events.jsonl');
    const lines = readFileSync(eventsFile, 'utf8').trim().split('\n');
    writeFileSync(eventsFile, `${lines.filter((line) => JSON.parse(line).type === 'run-start').join('\n')}\n`);
    await withServer([terminate('started on resume')], async (server) => {
      const resumed = await runCli(['resume', runId, '--json'], { cwd: fixture, env: environment(server) });
      expect(resumed.exitCode, resumed.stderr).toBe(0);
      expect(resumed.json).toMatchObject({ runId, status: 'success', answer: 'started on resume' });
      const messages = chatRequests(server)[0].body.messages as Array<{ role: string; content: string }>;
      expect(messages.map((message) => message.role)).toEqual(['system', 'user']);
      expect(messages[1].content).toContain('Do the task');
      // Written once, so that resuming again rebuilds the same conversation.
      const written = readEvents(resumed.json.runDirectory).filter((event) => event.type === 'message');
      expect(written.map((event) => (event.message as { role: string }).role)).toEqual(['system', 'user', 'assistant', 'tool']);
    });
  });

  it('records a tool call cut off by the kill as interrupted and never runs it again', async () => {
    const fixture = writeLoopFixture();
    const runId = await withServer([{ toolCalls: [{ name: 'wait', arguments: { label: 'slow', milliseconds: 30_000 } }] }], (server) =>
      runAndKill(fixture, server, (stderr) => stderr.includes('wait(')),
    );
    await withServer([terminate('ok')], async (server) => {
      const resumed = await runCli(['resume', runId, '--json'], { cwd: fixture, env: environment(server) });
      expect(resumed.exitCode).toBe(0);
      expect(resumed.stderr).toContain('was interrupted; it is reported to the agent and not run again');
      const [interrupted] = toolMessages(chatRequests(server)[0]);
      expect(interrupted.content).toContain('interrupted when the run stopped');
      const starts = readEvents(resumed.json.runDirectory).filter((event) => event.type === 'tool-call-start' && event.tool === 'wait');
      expect(starts).toHaveLength(1);
    });
  });

  it('skips a half-written last line with a warning and repairs the file', async () => {
    const fixture = writeLoopFixture();
    const runId = await withServer([echo('one'), { delayMs: 30_000, content: 'never' }], (server) =>
      runAndKill(fixture, server, () => chatRequests(server).length >= 2),
    );
    const eventsFile = join(fixture, '.manus', 'runs', runId, 'events.jsonl');
    appendFileSync(eventsFile, '{"type":"model-response","step":2,"content":"half');
    await withServer([terminate('repaired')], async (server) => {
      const resumed = await runCli(['resume', runId.slice(0, 18), '--json'], { cwd: fixture, env: environment(server) });
      expect(resumed.exitCode).toBe(0);
      expect(resumed.stderr).toContain('was cut off');
      expect(resumed.json.answer).toBe('repaired');
      for (const line of readFileSync(eventsFile, 'utf8').trim().split('\n')) expect(() => JSON.parse(line)).not.toThrow();
    });
  });

  it('extends a run that ran out of steps with --max-steps', async () => {
    const fixture = writeLoopFixture({ agentExtra: 'max_steps: 2' });
    const first = await withServer([echo('1'), echo('2')], (server) => runCli(['run', 'recipe.yaml', '--json'], { cwd: fixture, env: environment(server) }));
    expect(first.exitCode).toBe(3);
    await withServer([echo('3'), terminate('done in four')], async (server) => {
      const resumed = await runCli(['resume', first.json.runId, '--max-steps', '4', '--json'], { cwd: fixture, env: environment(server) });
      expect(resumed.exitCode).toBe(0);
      expect(resumed.json).toMatchObject({ status: 'success', steps: 4, answer: 'done in four' });
    });
  });

  it('stops a headless run on a question no one can answer as needs-input, exit 5, and resumes it with the answer', async () => {
    const fixture = writeLoopFixture({ tools: ['ask_human', 'echo', 'terminate'] });
    const asking: ScriptedTurn = {
      toolCalls: [
        { id: 'call_echo', name: 'echo', arguments: { text: 'beside the question' } },
        { id: 'call_ask', name: 'ask_human', arguments: { question: 'Which city should the trip start in?' } },
      ],
    };
    const first = await withServer([asking, terminate('never reached')], (server) =>
      runCli(['run', 'recipe.yaml', '--json', '--report', 'report'], { cwd: fixture, env: environment(server) }));
    expect(first.exitCode).toBe(5);
    expect(first.json).toMatchObject({ status: 'needs-input', exitCode: 5, question: 'Which city should the trip start in?' });
    expect(first.json.answer).toContain('Which city should the trip start in?');
    expect(first.json.answer).toContain(`manus resume ${first.json.runId} --answer`);
    const report = JSON.parse(readFileSync(join(fixture, 'report', 'manus-report.json'), 'utf8'));
    expect(report).toMatchObject({ status: 'needs-input', exitCode: 5, question: 'Which city should the trip start in?' });
    expect(readEvents(first.json.runDirectory).at(-1)).toMatchObject({ type: 'run-end', status: 'needs-input' });

    const without = await runCli(['resume', first.json.runId], { cwd: fixture });
    expect(without.exitCode).toBe(2);
    expect(without.stderr).toContain('is waiting for an answer to "Which city should the trip start in?": give it with --answer TEXT');

    await withServer([terminate('starting in Lisbon')], async (server) => {
      const resumed = await runCli(['resume', first.json.runId, '--answer', 'Lisbon', '--json'], { cwd: fixture, env: environment(server) });
      expect(resumed.exitCode).toBe(0);
      expect(resumed.json).toMatchObject({ status: 'success', answer: 'starting in Lisbon' });
      // The question gets the answer, and the call that finished beside it keeps its own result.
      expect(toolMessages(chatRequests(server)[0])).toEqual([
        { role: 'tool', tool_call_id: 'call_echo', content: 'echo: beside the question' },
        { role: 'tool', tool_call_id: 'call_ask', content: 'Lisbon' },
      ]);
    });
  });

  it('refuses to resume a run that succeeded, and names an unknown run', async () => {
    const fixture = writeLoopFixture();
    const done = await withServer([terminate()], (server) => runCli(['run', 'recipe.yaml', '--json'], { cwd: fixture, env: environment(server) }));
    const again = await runCli(['resume', done.json.runId], { cwd: fixture });
    expect(again.exitCode).toBe(2);
    expect(again.stderr).toContain('already finished successfully');
    const unknown = await runCli(['resume', 'nope'], { cwd: fixture });
    expect(unknown.exitCode).toBe(2);
    expect(unknown.stderr).toContain("unknown run 'nope'");
  });
});

describe('rebuilding a run\'s history to resume it', () => {
  const call = (id: string, name: string) => ({ id, type: 'function', function: { name, arguments: '{}' } });
  const message = (value: Record<string, unknown>) => ({ type: 'message', message: value });
  const start = { type: 'run-start', runId: 'r1' };
  const opening = [message({ role: 'system', content: 'system' }), message({ role: 'user', content: 'task' })];
  const turn = (id: string) => [
    message({ role: 'assistant', content: null, tool_calls: [call(id, 'echo')] }),
    message({ role: 'tool', tool_call_id: id, content: `result ${id}` }),
  ];
  const recorded = (events: RunEvent[]): RecordedRun => ({ file: 'events.jsonl', events, warnings: [], start });

  it('applies a drop of the oldest turns as the run did, with its note', () => {
    const events = [start, ...opening, ...turn('a'), ...turn('b'), ...turn('c'), { type: 'history-trimmed', end: 6, removedMessages: 4 }];
    const { state } = resumeStateOf(recorded(events));
    expect(state.history.map((entry) => entry.content)).toEqual(['system', 'task', '[4 earlier messages were dropped to fit the context window]', null, 'result c']);
  });

  it('gives an earlier resumption\'s answer to the question it answered, when resumed again', () => {
    const asked = message({ role: 'assistant', content: null, tool_calls: [call('q', 'ask_human')] });
    const events = [
      start, ...opening, asked,
      { type: 'tool-call-start', callId: 'q', tool: 'ask_human' },
      { type: 'human-input-needed', callId: 'q', question: 'Which city?' },
      { type: 'run-end', status: 'needs-input' },
      { type: 'run-resume', answers: { q: 'Lisbon' } },
      ...turn('d'),
    ];
    const { state, answeredQuestions, interruptedCalls } = resumeStateOf(recorded(events), ['unused here']);
    expect(answeredQuestions).toEqual([]);
    expect(interruptedCalls).toEqual([]);
    expect(state.history.filter((entry) => entry.role === 'tool')).toEqual([
      { role: 'tool', tool_call_id: 'q', content: 'Lisbon' },
      { role: 'tool', tool_call_id: 'd', content: 'result d' },
    ]);
  });
});

describe('replay', () => {
  async function recordRun(fixture: string) {
    return withServer([
      { content: 'Looking.', toolCalls: [{ name: 'echo', arguments: { text: 'alpha' } }] },
      { toolCalls: [{ name: 'read_env', arguments: { name: 'REPLAY_VALUE' } }] },
      terminate('recorded answer'),
    ], (server) => runCli(['run', 'recipe.yaml', '--json', '--record', 'demo.jsonl'], {
      cwd: fixture,
      env: { ...environment(server), REPLAY_VALUE: 'first' },
    }));
  }

  it('replays a recording offline with the recorded tool results', async () => {
    const fixture = writeLoopFixture();
    const recorded = await recordRun(fixture);
    expect(recorded.exitCode).toBe(0);
    expect(existsSync(join(fixture, 'demo.jsonl'))).toBe(true);
    const replay = await runCli(['replay', 'demo.jsonl', '--json'], { cwd: fixture });
    expect(replay.exitCode).toBe(0);
    expect(replay.json).toMatchObject({ status: 'success', answer: 'recorded answer', steps: 3, model: 'recorded' });
    expect(replay.stderr).toContain('replay of recorded model replies');
    expect(replay.stderr).toContain('replay matched the recording');
    const events = readEvents(replay.json.runDirectory);
    expect(events[0]).toMatchObject({ type: 'run-start', replayOf: recorded.json.runId, replayTools: 'recorded' });
  });

  it('runs the real tools and reports the first step where they diverge', async () => {
    const fixture = writeLoopFixture();
    const recorded = await recordRun(fixture);
    const same = await runCli(['replay', recorded.json.runId, '--tools', 'real', '--json'], { cwd: fixture, env: { REPLAY_VALUE: 'first' } });
    expect(same.exitCode).toBe(0);
    expect(same.stderr).toContain('replay matched the recording');
    const changed = await runCli(['replay', recorded.json.runId, '--tools', 'real', '--json'], { cwd: fixture, env: { REPLAY_VALUE: 'second' } });
    expect(changed.exitCode).toBe(1);
    expect(changed.stderr).toContain('replay diverged from the recording at step 2: the result of read_env differs from the recording');
    expect(changed.stderr).toContain('recorded: value=first');
    expect(changed.stderr).toContain('actual:   value=second');
  });

  it('runs tools that declare themselves replay-safe for real, and answers other calls from the recording', async () => {
    const call = (callId: string, tool: string, content: string): RunEvent => ({ type: 'tool-call-end', callId, tool, content, isError: false });
    const recording: RecordedRun = {
      file: 'events.jsonl',
      warnings: [],
      start: { type: 'run-start', runId: 'r1' },
      events: [call('call_1', 'add', 'recorded sum'), call('call_2', 'clock', 'recorded time')],
    };
    const add = defineTool<{ a: number; b: number }>({
      name: 'add',
      description: 'Adds two numbers.',
      parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } },
      replaySafe: true,
      execute: ({ a, b }) => String(a + b),
    });
    const clock = defineTool({ name: 'clock', description: 'The time now.', parameters: { type: 'object' }, execute: () => new Date().toISOString() });
    const available = new Map<string, AnyToolDefinition>([[add.name, add], [clock.name, clock], [terminateTool.name, terminateTool]]);
    const { context } = createTestToolContext();
    const divergences = new DivergenceLog();

    const recorded = recordedTools(recording, ['add', 'clock', 'terminate'], divergences, available);
    expect(recorded.get('add')).toBe(add);
    expect(recorded.get('terminate')).toBe(terminateTool);
    expect(await recorded.get('clock')!.execute({}, { ...context, callId: 'call_2' })).toEqual({ content: 'recorded time', isError: false });

    const compare = comparingWithRecording(recording, divergences);
    expect(compare(add)).toBe(add);
    expect(await compare(add).execute({ a: 2, b: 3 }, { ...context, callId: 'call_1' })).toBe('5');
    expect(divergences.count).toBe(0);
    await compare(clock).execute({}, { ...context, callId: 'call_2' });
    expect(divergences.first).toMatchObject({ what: 'the result of clock differs from the recording', recorded: 'recorded time' });
  });

  it('keeps secrets out of recordings', async () => {
    const fixture = writeLoopFixture();
    await withServer([{ toolCalls: [{ name: 'read_env', arguments: { name: 'OPENAI_API_KEY' } }] }, terminate()], (server) =>
      runCli(['run', 'recipe.yaml', '--record', 'secret.jsonl'], { cwd: fixture, env: { ...environment(server), OPENAI_API_KEY: 'sk-recording-secret-999' } }),
    );
    const text = readFileSync(join(fixture, 'secret.jsonl'), 'utf8');
    expect(text).not.toContain('sk-recording-secret-999');
    expect(text).toContain('[redacted]');
  });
});

describe('budgets with prices', () => {
  it('stops at the cost budget before a request whose prompt alone would pass it, and reports the cost', async () => {
    const fixture = writeLoopFixture({
      recipeExtra: 'budgets: { cost: 0.01 }',
      profile: 'price: { input_per_million: 5, output_per_million: 15 }\nretry: { base_delay_ms: 5 }',
    });
    // Each step costs 0.004: 0.0025 for the prompt, 0.0015 for the reply. After two, 0.008 is spent,
    // and a third prompt (0.0025) would pass 0.01 on its own, so it is never sent.
    const turns = Array.from({ length: 10 }, (_, index) => ({ ...echo(`${index}`), usage: { prompt_tokens: 500, completion_tokens: 100 } }));
    const { run, requests } = await withServer(turns, async (server) => ({
      run: await runCli(['run', 'recipe.yaml', '--json'], { cwd: fixture, env: environment(server) }),
      requests: chatRequests(server).length,
    }));
    expect(run.exitCode).toBe(3);
    expect(run.json).toMatchObject({ status: 'budget-exhausted', exhaustedBudget: 'cost' });
    expect(requests).toBe(2);
    expect(run.json.cost).toBeCloseTo(0.008, 5);
    expect(run.json.cost).toBeLessThanOrEqual(0.01);
  });

  it('refuses a cost budget without prices before any model call', async () => {
    const fixture = writeLoopFixture({ recipeExtra: 'budgets: { cost: 1 }' });
    const run = await withServer([terminate()], async (server) => {
      const result = await runCli(['run', 'recipe.yaml'], { cwd: fixture, env: environment(server) });
      expect(chatRequests(server)).toHaveLength(0);
      return result;
    });
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain('a cost budget needs prices');
  });

  it('takes budgets from the command line', async () => {
    const fixture = writeLoopFixture();
    const turns = Array.from({ length: 10 }, (_, index) => ({ ...echo(`${index}`), usage: { prompt_tokens: 600, completion_tokens: 100 } }));
    const run = await withServer(turns, (server) => runCli(['run', 'recipe.yaml', '--json', '--max-tokens', '1500'], { cwd: fixture, env: environment(server) }));
    expect(run.exitCode).toBe(3);
    expect(run.json.exhaustedBudget).toBe('tokens');
  });
});

describe('context compaction', () => {
  const words = 'the agent read a long page about rivers mountains cities trains weather food museums parks history music art and many other things that a traveller may want to know before a trip'.split(' ');
  const longEcho = (index: number): ScriptedTurn => echo(`${index} ${words.join(' ')} ${words.join(' ')}`);
  const summaryTurn = (request: RecordedChatRequest): ScriptedTurn | undefined =>
    String((request.body.messages as Array<{ content: string }>)[0].content).includes('condense') ? { content: 'SUMMARY: the pages were read.' } : undefined;

  it('summarises older turns near the context window, keeping the task and call/result pairs', async () => {
    const fixture = writeLoopFixture({
      profile: 'context_window: 2000\nretry: { base_delay_ms: 5 }',
      agentExtra: 'compaction: { threshold: 0.5, keep_recent_messages: 4 }',
    });
    const server = await startScriptedModelServer({ turns: [...Array.from({ length: 8 }, (_, index) => longEcho(index)), terminate('compacted fine')], sideTurn: summaryTurn });
    try {
      const run = await runCli(['run', 'recipe.yaml', '--json'], { cwd: fixture, env: environment(server) });
      expect(run.exitCode).toBe(0);
      expect(run.json.answer).toBe('compacted fine');
      const requests = chatRequests(server);
      const summaries = requests.filter((request) => request.turnIndex === null);
      expect(summaries.length).toBeGreaterThanOrEqual(1);
      expect(summaries[0].body.tools).toBeUndefined();
      const after = requests[requests.indexOf(summaries[0]) + 1].body.messages as Array<{ role: string; content: string; tool_call_id?: string; tool_calls?: Array<{ id: string }> }>;
      const before = requests[requests.indexOf(summaries[0]) - 1].body.messages as unknown[];
      expect(after[0].role).toBe('system');
      expect(after[1].content).toBe('Do the task.');
      expect(after[2].content).toContain('SUMMARY: the pages were read.');
      expect(after.length).toBeLessThan(before.length);
      // Every tool result still follows the call it answers.
      const callIds = new Set(after.flatMap((message) => message.tool_calls?.map((call) => call.id) ?? []));
      for (const message of after.filter((entry) => entry.role === 'tool')) expect(callIds.has(message.tool_call_id!)).toBe(true);
      expect(after[3].role).toBe('assistant');
      const compaction = readEvents(run.json.runDirectory).find((event) => event.type === 'history-compacted');
      expect(compaction).toMatchObject({ reason: 'near-context-window', summary: 'SUMMARY: the pages were read.' });
      expect(compaction!.tokensAfter).toBeLessThan(compaction!.tokensBefore);
    } finally {
      await server.close();
    }
  });

  it('records a failed summary and drops the oldest whole turns instead, so the request still fits', async () => {
    const fixture = writeLoopFixture({
      profile: 'context_window: 2000\nretry: { base_delay_ms: 5 }',
      agentExtra: 'compaction: { threshold: 0.5, keep_recent_messages: 4 }',
    });
    const failingSummary = (request: RecordedChatRequest): ScriptedTurn | undefined =>
      String((request.body.messages as Array<{ content: string }>)[0].content).includes('condense')
        ? { fault: { kind: 'status', status: 400, message: 'summaries are switched off here' } }
        : undefined;
    const server = await startScriptedModelServer({ turns: [...Array.from({ length: 8 }, (_, index) => longEcho(index)), terminate('trimmed fine')], sideTurn: failingSummary });
    try {
      const run = await runCli(['run', 'recipe.yaml', '--json'], { cwd: fixture, env: environment(server) });
      expect(run.exitCode).toBe(0);
      expect(run.json.answer).toBe('trimmed fine');
      const events = readEvents(run.json.runDirectory);
      const failed = events.find((event) => event.type === 'compaction-failed');
      expect(failed).toMatchObject({ reason: 'near-context-window', error: { message: expect.stringContaining('summaries are switched off here') } });
      const trimmed = events.find((event) => event.type === 'history-trimmed')!;
      expect(trimmed.tokensAfter).toBeLessThanOrEqual(1000);
      expect(trimmed.tokensAfter).toBeLessThan(trimmed.tokensBefore);
      const requests = chatRequests(server);
      const firstFailure = requests.findIndex((request) => request.turnIndex === null);
      const after = requests[firstFailure + 1].body.messages as Array<{ role: string; content: string; tool_call_id?: string; tool_calls?: Array<{ id: string }> }>;
      expect(after[0].role).toBe('system');
      expect(after[1].content).toBe('Do the task.');
      expect(after[2].content).toBe(`[${trimmed.removedMessages} earlier messages were dropped to fit the context window]`);
      expect(after[3].role).toBe('assistant');
      const callIds = new Set(after.flatMap((message) => message.tool_calls?.map((call) => call.id) ?? []));
      for (const message of after.filter((entry) => entry.role === 'tool')) expect(callIds.has(message.tool_call_id!)).toBe(true);
    } finally {
      await server.close();
    }
  });

  it('compacts once and retries when the provider says the context is too long', async () => {
    const fixture = writeLoopFixture();
    const server = await startScriptedModelServer({
      turns: [
        echo('1'), echo('2'), echo('3'), echo('4'),
        { fault: { kind: 'status', status: 400, message: "This model's maximum context length is 4096 tokens" } },
        terminate('after compaction'),
      ],
      sideTurn: summaryTurn,
    });
    try {
      const run = await runCli(['run', 'recipe.yaml', '--json'], { cwd: fixture, env: environment(server) });
      expect(run.exitCode).toBe(0);
      expect(run.json.answer).toBe('after compaction');
      const compaction = readEvents(run.json.runDirectory).find((event) => event.type === 'history-compacted');
      expect(compaction).toMatchObject({ reason: 'context-too-long' });
    } finally {
      await server.close();
    }
  });

  it('resumes a compacted run from the compacted history', async () => {
    const fixture = writeLoopFixture({
      profile: 'context_window: 1400\nretry: { base_delay_ms: 5 }',
      agentExtra: 'compaction: { threshold: 0.5, keep_recent_messages: 4 }\nmax_steps: 6',
    });
    const server = await startScriptedModelServer({ turns: Array.from({ length: 6 }, (_, index) => longEcho(index)), sideTurn: summaryTurn });
    let first;
    try {
      first = await runCli(['run', 'recipe.yaml', '--json'], { cwd: fixture, env: environment(server) });
    } finally {
      await server.close();
    }
    expect(first.exitCode).toBe(3);
    expect(readEvents(first.json.runDirectory).some((event) => event.type === 'history-compacted')).toBe(true);
    await withServer([terminate('resumed')], async (resumeServer) => {
      const resumed = await runCli(['resume', first.json.runId, '--max-steps', '8', '--json'], { cwd: fixture, env: environment(resumeServer) });
      expect(resumed.exitCode).toBe(0);
      const messages = chatRequests(resumeServer)[0].body.messages as Array<{ content: string }>;
      expect(messages[2].content).toContain('SUMMARY: the pages were read.');
    });
  });
});

describe('signals', () => {
  it('exits within 3 seconds of SIGTERM, even with a tool that ignores it', async () => {
    const fixture = writeLoopFixture();
    writeFileSync(join(fixture, 'tools', 'stubborn.mjs'), "export default { name: 'stubborn', description: 'Never ends.', parameters: { type: 'object' }, execute: () => new Promise(() => { setInterval(() => {}, 1000); }) };\n");
    const fixtureRecipe = readFileSync(join(fixture, 'recipe.yaml'), 'utf8').replace('tools: [echo,', 'tools: [stubborn, echo,');
    writeFileSync(join(fixture, 'recipe.yaml'), fixtureRecipe);
    await withServer([{ toolCalls: [{ name: 'stubborn', arguments: {} }] }], async (server) => {
      const child = spawn(process.execPath, [cliEntry, 'run', 'recipe.yaml'], { cwd: fixture, env: { PATH: process.env.PATH, ...environment(server) } });
      let stderr = '';
      let stoppedAt = 0;
      child.stderr.on('data', (chunk) => {
        stderr += chunk;
        if (!stoppedAt && stderr.includes('stubborn(')) {
          stoppedAt = Date.now();
          child.kill('SIGTERM');
        }
      });
      const code = await new Promise((resolve) => child.on('close', resolve));
      expect(code).toBe(130);
      expect(Date.now() - stoppedAt).toBeLessThan(3000);
    });
  });
});

describe('interrupts leave nothing running', () => {
  it('stops a running shell command and its background children on Ctrl-C', async () => {
    const marker = `manus-interrupt-${process.pid}-${Date.now()}`;
    const fixture = writeLoopFixture({ tools: ['bash', 'terminate'] });
    const command = `sh -c 'sleep 300; true' ${marker}-background & sh -c 'sleep 301; true' ${marker}-foreground`;
    await withServer([{ toolCalls: [{ name: 'bash', arguments: { command, timeout: 600 } }] }], async (server) => {
      const child = spawn(process.execPath, [cliEntry, 'run', 'recipe.yaml', '--json'], {
        cwd: fixture,
        env: { PATH: process.env.PATH, ...environment(server), NO_COLOR: '1' },
      });
      let stdout = '';
      child.stdout.on('data', (chunk) => (stdout += chunk));
      // Interrupt once the shell command is really running.
      const code = await interruptWhen(child, () => listProcesses().some((line) => line.includes(`${marker}-foreground`)));
      expect(code).toBe(130);
      const result = JSON.parse(stdout);
      expect(result.status).toBe('interrupted');
      const events = readEvents(result.runDirectory).map((event) => event.type);
      expect(events).toContain('interrupted');
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(listProcesses().filter((line) => line.includes(marker))).toEqual([]);
    });
  });
});

function listProcesses(): string[] {
  return execFileSync('ps', ['-eo', 'pid,args'], { encoding: 'utf8' }).split('\n');
}

describe.skipIf(!existsSync(process.env.MANUS_CHROMIUM_PATH ?? '/usr/bin/chromium'))('interrupts with a browser open', () => {
  it('closes the browser and stops the shell on Ctrl-C, leaving no process behind', async () => {
    const { startFixtureSite } = await import('./support/fixture-site.js');
    const site = await startFixtureSite();
    const marker = `manus-browser-interrupt-${process.pid}-${Date.now()}`;
    const fixture = writeLoopFixture({ tools: ['browser_use', 'bash', 'terminate'] });
    try {
      await withServer([
        { toolCalls: [{ name: 'browser_use', arguments: { action: 'go_to_url', url: `${site.origin}/index.html` } }] },
        { toolCalls: [{ name: 'bash', arguments: { command: `sh -c 'sleep 300; true' ${marker}`, timeout: 600 } }] },
      ], async (server) => {
        const child = spawn(process.execPath, [cliEntry, 'run', 'recipe.yaml', '--json'], {
          cwd: fixture,
          // The fixture site is on loopback: allowed in the user's configuration, as a user would.
          env: { PATH: process.env.PATH, ...environment(server), NO_COLOR: '1', XDG_CONFIG_HOME: privateNetworkConfigHome() },
        });
        let stdout = '';
        child.stdout.on('data', (chunk) => (stdout += chunk));
        const browserProcesses = () => listProcesses().filter((line) => line.includes('chromium') && line.includes(`--remote-debugging-pipe`) && descendsFrom(line, child.pid!));
        let sawBrowser = false;
        const code = await interruptWhen(child, () => {
          if (browserProcesses().length > 0) sawBrowser = true;
          return listProcesses().some((line) => line.includes(marker));
        });
        expect(code).toBe(130);
        expect(sawBrowser).toBe(true);
        expect(JSON.parse(stdout).status).toBe('interrupted');
        await new Promise((resolve) => setTimeout(resolve, 500));
        expect(listProcesses().filter((line) => line.includes(marker))).toEqual([]);
        expect(listProcesses().filter((line) => line.includes('chromium') && line.includes(fixture))).toEqual([]);
      });
    } finally {
      await site.close();
    }
  });
});

/** Whether the process on a `ps -eo pid,args` line descends from `ancestor` (checked through /proc). */
function descendsFrom(line: string, ancestor: number): boolean {
  let pid = Number(line.trim().split(/\s+/)[0]);
  for (let depth = 0; depth < 20 && pid > 1; depth += 1) {
    if (pid === ancestor) return true;
    try {
      pid = Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')[1]);
    } catch {
      return false;
    }
  }
  return false;
}
